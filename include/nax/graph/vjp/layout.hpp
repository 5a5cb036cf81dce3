#pragma once
// The VJPs of the ops that move elements: transpose (the inverse permutation), reshape (and
// rename, split, merge: the cotangent in the operand's shape), broadcast (summed over the axes
// it repeated along), slice (padded with zeros, its step's gaps filled with zeros too) and concat
// (a slice per operand).

#include <cstdint>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::graph::detail {

inline void vjp_transpose(const vjp_context& c) {
  const transpose_op& t = c.n.as<transpose_op>();
  std::vector<axis_ref> inverse(t.perm.size(), axis_ref(std::size_t{0}));
  for (std::size_t i = 0; i < t.perm.size(); ++i) inverse[t.perm[i]] = i;
  c.give(0, reshaped(c.b.transpose(c.dy, inverse), c.shape_of(0)));
}

inline void vjp_reshape(const vjp_context& c) { c.give(0, reshaped(c.dy, c.shape_of(0))); }

inline void vjp_broadcast(const vjp_context& c) {
  const broadcast_op& op = c.n.as<broadcast_op>();
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

/// Why a slice of xs along `axis` has no VJP, or "" (grad asks before it adds any node).
inline std::string vjp_slice_refusal(const nax::shape& xs, std::size_t axis) {
  if (xs[axis].is_static()) return {};
  return nax::detail::message(
      "nax::graph::grad: no VJP for a slice along the dynamic ", xs[axis].describe(), " of ",
      xs.to_string(), " (its padding would need an extent no axis names; slice a static axis)");
}

inline void vjp_slice(const vjp_context& c) {
  const slice_op& sl = c.n.as<slice_op>();
  const nax::shape xs = c.shape_of(0);
  const std::size_t axis = sl.axis;
  if (const std::string why = vjp_slice_refusal(xs, axis); !why.empty())
    nax::detail::throw_shape_error(why);
  const std::size_t extent = xs[axis].extent(), m = c.y.shape()[axis].extent();
  const auto start = static_cast<std::size_t>(sl.start), step = static_cast<std::size_t>(sl.step);
  value spread = c.dy;
  std::size_t len = m;
  if (step > 1 && m > 0) {
    // Each entry, then step - 1 zeros: [.., m, 1, ..] joined with [.., m, step - 1, ..] along the
    // new axis, read as [.., m step, ..]; what runs past the operand's end is cut.
    const dim one_pair[2] = {dim(m), dim(1)};
    const nax::shape column = with_axis(c.dy.shape(), axis, one_pair);
    const value entries = reshaped(c.dy, column);
    const value gaps = zeros_along(c.b, column, axis + 1, step - 1);
    const value both[2] = {entries, gaps};
    const dim flat[1] = {dim(m * step)};
    spread = reshaped(c.b.concat(both, axis + 1), with_axis(c.dy.shape(), axis, flat));
    len = std::min(m * step, extent - start);
    if (len < m * step) spread = c.b.slice(spread, axis, 0, static_cast<std::int64_t>(len));
  }
  std::vector<value> parts;
  if (start > 0) parts.push_back(zeros_along(c.b, spread.shape(), axis, start));
  parts.push_back(spread);
  if (start + len < extent)
    parts.push_back(zeros_along(c.b, spread.shape(), axis, extent - start - len));
  const value padded = parts.size() == 1 ? spread : c.b.concat(parts, axis);
  c.give(0, reshaped(padded, xs));
}

inline void vjp_concat(const vjp_context& c) {
  const std::size_t axis = c.n.as<concat_op>().axis;
  std::int64_t at = 0;
  for (std::size_t i = 0; i < c.n.inputs.size(); ++i) {
    const nax::shape xs = c.shape_of(i);
    const auto n = static_cast<std::int64_t>(xs[axis].extent());
    if (c.wants[i]) c.give(i, reshaped(c.b.slice(c.dy, axis, at, at + n), xs));
    at += n;
  }
}

}  // namespace nax::graph::detail
