#pragma once
// The VJPs of the ops that move elements: transpose (the inverse permutation), reshape (and
// rename, split, merge: the cotangent in the operand's shape), broadcast (summed over the axes
// it repeated along), slice (padded with zeros, its step's gaps filled with zeros too; along a
// dynamic axis written into zeros by dynamic_update_slice), concat (a slice per operand), and
// dynamic_slice and dynamic_update_slice (each other's, at the same start).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

inline void vjp(const transpose_op& t, const vjp_context& c) {
  std::vector<axis_ref> inverse(t.perm.size(), axis_ref(std::size_t{0}));
  for (std::size_t i = 0; i < t.perm.size(); ++i) inverse[t.perm[i]] = i;
  c.give(0, reshaped(c.b.transpose(c.dy, inverse), c.shape_of(0)));
}

inline void vjp(const reshape_op&, const vjp_context& c) {
  c.give(0, reshaped(c.dy, c.shape_of(0)));
}

inline void vjp(const broadcast_op& op, const vjp_context& c) {
  std::vector<std::size_t> to(op.axis_map.begin(), op.axis_map.end());
  c.give(0, unbroadcast(c.dy, c.shape_of(0), to));
}

// Zeros of shape s with axis `axis` of extent n.
inline value zeros_along(builder& b, const nax::shape s, std::size_t axis, std::size_t n) {
  std::vector<dim> dims(s.dims().begin(), s.dims().end());
  dims[axis] = dim(n);
  return zeros(b, nax::shape(s.dtype(), std::span<const dim>(dims)));
}

// s with axis `axis` of extent n (unnamed), or replaced by the axes `parts`.
inline nax::shape with_axis(const nax::shape s, std::size_t axis, std::span<const dim> parts) {
  std::vector<dim> dims(s.dims().begin(), s.dims().begin() + std::ptrdiff_t(axis));
  dims.insert(dims.end(), parts.begin(), parts.end());
  dims.insert(dims.end(), s.dims().begin() + std::ptrdiff_t(axis) + 1, s.dims().end());
  return nax::shape(s.dtype(), std::span<const dim>(dims));
}

inline void vjp(const slice_op& sl, const vjp_context& c) {
  const nax::shape xs = c.shape_of(0);
  const std::size_t axis = sl.axis;
  const std::size_t m = c.y.shape()[axis].extent();
  const auto start = static_cast<std::size_t>(sl.start), step = static_cast<std::size_t>(sl.step);
  // The entries the slice read, with step - 1 zeros between them: [.., m, 1, ..] joined with
  // [.., m, step - 1, ..] along a new axis, read as [.., m step, ..], then cut after the last
  // entry read (or at the operand's end).
  value spread = c.dy;
  std::size_t len = m;
  if (step > 1 && m > 0) {
    const dim one_pair[2] = {dim(m), dim(1)};
    const nax::shape column = with_axis(c.dy.shape(), axis, one_pair);
    const value entries = reshaped(c.dy, column);
    const value gaps = zeros_along(c.b, column, axis + 1, step - 1);
    const value both[2] = {entries, gaps};
    const dim flat[1] = {dim(m * step)};
    spread = reshaped(c.b.concat(both, axis + 1), with_axis(c.dy.shape(), axis, flat));
    len = (m - 1) * step + 1;
    if (xs[axis].is_static()) len = std::min(m * step, xs[axis].extent() - start);
    if (len < m * step) spread = c.b.slice(spread, axis, 0, static_cast<std::int64_t>(len));
  }
  if (xs[axis].is_dynamic()) {
    // The operand's extent is the run's: the entries written into zeros of its shape where the
    // slice read them (the forward checked start + len against the extent; no clamping).
    const value at = c.b.constant(static_cast<double>(start), nax::dtype::i64);
    c.give(0, c.b.dynamic_update_slice(zeros(c.b, xs), spread, axis, at));
    return;
  }
  const std::size_t extent = xs[axis].extent();
  std::vector<value> parts;
  if (start > 0) parts.push_back(zeros_along(c.b, spread.shape(), axis, start));
  parts.push_back(spread);
  if (start + len < extent)
    parts.push_back(zeros_along(c.b, spread.shape(), axis, extent - start - len));
  const value padded = parts.size() == 1 ? spread : c.b.concat(parts, axis);
  c.give(0, reshaped(padded, xs));
}

// The cotangent written where the slice read (the same start, clamped the same way), zeros
// elsewhere; the start has none.
inline void vjp(const dynamic_slice_op& op, const vjp_context& c) {
  const std::size_t axis = op.axis;
  c.give(0, c.b.dynamic_update_slice(zeros(c.b, c.shape_of(0)), c.dy, axis, c.operand(1)));
}

/// Why a set_dimension_size of xs along `axis` has no VJP, or "": along a static axis the
/// cotangent goes back into zeros of the operand's extent; along a bounded one the size may be
/// above the operand's extent, and the cotangent has no static part to give back.
inline std::string vjp_set_dimension_size_refusal(const nax::shape& xs, std::size_t axis) {
  if (xs[axis].is_static()) return {};
  return nax::detail::message("nax::graph::grad: no VJP for a set_dimension_size of ",
                              xs.to_string(), " along the dynamic ", xs[axis].describe(),
                              " (its size may be above the operand's extent)");
}

inline std::string vjp_refusal(const set_dimension_size_op& op, const builder& b, const node& n) {
  return vjp_set_dimension_size_refusal(b.at(n.inputs[0]).shape, op.axis);
}

// The cotangent's entries go back to the operand's first ones; the rest of it gets zeros.
inline void vjp(const set_dimension_size_op& op, const vjp_context& c) {
  const std::size_t axis = op.axis;
  const nax::shape xs = c.shape_of(0);
  if (const std::string why = vjp_set_dimension_size_refusal(xs, axis); !why.empty())
    nax::detail::throw_shape_error(why);
  const value at = c.b.constant(0, nax::dtype::i64);
  c.give(0, c.b.dynamic_update_slice(zeros(c.b, xs), c.dy, axis, at));
}

/// Why a dynamic_update_slice has no VJP, or "": the update's cotangent is a dynamic_slice,
/// whose size must be static.
inline std::string vjp_dynamic_update_slice_refusal(const nax::shape& update, std::size_t axis) {
  if (update[axis].is_static()) return {};
  return nax::detail::message("nax::graph::grad: no VJP for a dynamic_update_slice whose update ",
                              update.to_string(), " has the dynamic ", update[axis].describe(),
                              " (its cotangent would be a dynamic_slice of no static size)");
}

inline std::string vjp_refusal(const dynamic_update_slice_op& op, const builder& b, const node& n) {
  return vjp_dynamic_update_slice_refusal(b.at(n.inputs[1]).shape, op.axis);
}

// The operand's: the cotangent with zeros where the update went; the update's: the cotangent
// read there.
inline void vjp(const dynamic_update_slice_op& op, const vjp_context& c) {
  const std::size_t axis = op.axis;
  const nax::shape us = c.shape_of(1);
  if (const std::string why = vjp_dynamic_update_slice_refusal(us, axis); !why.empty())
    nax::detail::throw_shape_error(why);
  if (c.wants[0]) c.give(0, c.b.dynamic_update_slice(c.dy, zeros(c.b, us), axis, c.operand(2)));
  if (c.wants[1])
    c.give(1, reshaped(c.b.dynamic_slice(c.dy, axis, c.operand(2),
                                         static_cast<std::int64_t>(us[axis].extent())),
                       us));
}

/// Why a concat has no VJP, or "": along a dynamic axis, each operand's part of the cotangent
/// starts at a run-time place and has a run-time extent.
inline std::string vjp_concat_refusal(const nax::shape& result, std::size_t axis) {
  if (result[axis].is_static()) return {};
  return nax::detail::message("nax::graph::grad: no VJP for a concat along dynamic axes (",
                              result.to_string(),
                              "): each operand's part of the cotangent has "
                              "a run-time extent");
}

inline std::string vjp_refusal(const concat_op& op, const builder&, const node& n) {
  return vjp_concat_refusal(n.shape, op.axis);
}

inline void vjp(const concat_op& op, const vjp_context& c) {
  const std::size_t axis = op.axis;
  std::int64_t at = 0;
  for (std::size_t i = 0; i < c.n.inputs.size(); ++i) {
    const nax::shape xs = c.shape_of(i);
    const auto n = static_cast<std::int64_t>(xs[axis].extent());
    if (c.wants[i]) c.give(i, reshaped(c.b.slice(c.dy, axis, at, at + n), xs));
    at += n;
  }
}

}  // namespace nax::graph::detail
