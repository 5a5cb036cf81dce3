#pragma once
// How runtime shapes broadcast, by the one rule every layer uses (the graph's shape inference,
// its broadcast op, and the runtime's operand strides):
//
//  - When every axis of both shapes is named, axes match by name: the result has a's axes in
//    a's order, then b's other axes in b's order. `f32[batch, seq] + f32[seq, hidden]` is
//    `f32[batch, seq, hidden]`.
//  - Otherwise they match as NumPy's do: aligned from the right, a missing axis or a static 1
//    broadcasts, and each aligned pair unifies (an unnamed axis adopts the other's name; static
//    beats dynamic; bounds take the smaller). `f32[batch, 256] + f32[256]` is `f32[batch, 256]`.
//    A name both shapes have must be aligned: `f32[batch, 256] + f32[batch]` is an error naming
//    'batch' (the positional match would pair it with 256), not a silent misalignment.
//  - A rank-0 shape broadcasts everywhere.

#include <cstddef>
#include <span>
#include <string>

#include <nax/core/dim.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/unify.hpp>

namespace nax {

/// Whether every axis of s has a name (true for a scalar).
inline bool all_axes_named(const shape& s) noexcept {
  for (const dim& d : s.dims())
    if (!d.has_name()) return false;
  return true;
}

/// Whether shapes a and b (operands, or an operand and its result) match their axes by name
/// rather than by position from the right.
inline bool broadcasts_by_name(const shape& a, const shape& b) noexcept {
  return all_axes_named(a) && all_axes_named(b);
}

namespace core_detail {

inline bool is_static_one(const dim& d) noexcept { return d.is_static() && d.extent() == 1; }

// d under the name n (which d has, or d is unnamed).
inline dim with_name(const dim& d, axis_name n) {
  if (d.name() == n) return d;
  if (d.is_static()) return dim::named(n, d.extent());
  return d.has_bound() ? dim::bounded(n, d.bound()) : dim(n);
}

// A pair aligned from the right: one axis, or a static 1 that broadcasts to the other. Names
// agree either way.
inline dim broadcast_pair(const dim& a, const dim& b) {
  const bool a_one = is_static_one(a), b_one = is_static_one(b);
  if (a_one == b_one) return unify_dims(a, b);
  const axis_name n(unify_axis_name(a.name().view(), b.name().view()));
  return with_name(a_one ? b : a, n);
}

}  // namespace core_detail

/// The shape of an elementwise result over operands of shapes a and b, with element type
/// `type` (see the file comment). nax::shape_error naming the axis when they do not broadcast.
inline shape broadcast_shapes(const shape& a, const shape& b, dtype type) {
  if (b.rank() == 0) return shape(type, a.dims());
  if (a.rank() == 0) return shape(type, b.dims());
  core_detail::small_vector<dim, 6> out;
  if (broadcasts_by_name(a, b)) {
    for (const dim& d : a.dims()) {
      const auto j = b.index_of(d.name().view());
      out.push_back(j ? unify_dims(d, b[*j]) : d);
    }
    for (const dim& d : b.dims())
      if (!a.index_of(d.name().view())) out.push_back(d);
    return shape(type, std::span<const dim>(out.data(), out.size()));
  }
  const std::size_t ra = a.rank(), rb = b.rank(), r = ra > rb ? ra : rb;
  // A name in both must sit at the same position from the right.
  for (std::size_t i = 0; i < ra; ++i) {
    if (!a[i].has_name()) continue;
    if (const auto j = b.index_of(a[i].name().view()); j && ra - i != rb - *j)
      core_detail::throw_shape_error("axis '", a[i].name().view(), "' is dimension ", i,
                                " of the first (", ra - i, " from the right) but ", *j,
                                " of the second (", rb - *j,
                                " from the right); operands that are not named on every axis ",
                                "align from the right: name every axis, or transpose");
  }
  out.resize(r);
  for (std::size_t k = 1; k <= r; ++k) {
    dim& o = out[r - k];
    if (k > ra)
      o = b[rb - k];
    else if (k > rb)
      o = a[ra - k];
    else
      try {
        o = core_detail::broadcast_pair(a[ra - k], b[rb - k]);
      } catch (const shape_error& e) {
        core_detail::throw_shape_error(e.what(), " (dimension ", r - k,
                                  " of the result; operands align from the right)");
      }
  }
  return shape(type, std::span<const dim>(out.data(), out.size()));
}

/// For an operand of shape `in` read over a result (or broadcast target) of shape `out`: the
/// axis of `out` that each axis of `in` goes to, into map[0, in.rank()): by name when both are
/// named on every axis, else from the right. nax::shape_error if `in` has more axes than `out`,
/// or (by name) an axis `out` lacks. Extents are not checked here: the caller knows whether a
/// static 1 may broadcast.
inline void broadcast_axis_map(const shape& in, const shape& out, std::span<std::size_t> map) {
  if (broadcasts_by_name(in, out)) {
    for (std::size_t i = 0; i < in.rank(); ++i) {
      const auto j = out.index_of(in[i].name().view());
      if (!j)
        core_detail::throw_shape_error("axis '", in[i].name().view(), "' of ", in.to_string(),
                                  " is not in ", out.to_string());
      map[i] = *j;
    }
    return;
  }
  if (in.rank() > out.rank())
    core_detail::throw_shape_error(in.to_string(), " has more axes than ", out.to_string(),
                              " (not named on every axis, so aligned from the right)");
  for (std::size_t i = 0; i < in.rank(); ++i) map[i] = out.rank() - in.rank() + i;
}

}  // namespace nax
