#pragma once
// Unification of axis names, dimensions and shapes, as shape inference for binary ops needs it
// (an unnamed axis adopts a name; static beats dynamic; of two bounds, the smaller holds).

#include <algorithm>
#include <cstddef>
#include <string_view>

#include <nax/core/dim.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>

namespace nax {

/// An unnamed axis adopts the other's name; equal names agree; different names throw
/// "incompatible axis names: 'batch' vs 'time'". Returns a view of one of the arguments.
inline std::string_view unify_axis_name(std::string_view a, std::string_view b) {
  if (a.empty() || a == b) return b;
  if (b.empty()) return a;
  core_detail::throw_shape_error("incompatible axis names: '", a, "' vs '", b, "'");
}

/// The dimension that satisfies both: names unify; static beats dynamic; two bounds give the
/// smaller. Different static extents, or a static extent above a bound, throw.
inline dim unify_dims(const dim& a, const dim& b) {
  const axis_name name = a.has_name() ? (b.has_name() && a.name() != b.name()
                                             ? axis_name(unify_axis_name(a.name(), b.name()))
                                             : a.name())
                                      : b.name();
  auto subject = [&] {
    return name ? core_detail::message("axis '", name.view(), "'") : std::string("dimension");
  };
  if (a.is_static() && b.is_static()) {
    if (a.extent() != b.extent()) {
      if (name) core_detail::throw_axis_mismatch("", name.view(), a.extent(), b.extent());
      core_detail::throw_shape_error("dimension mismatch: ", a.extent(), " vs ", b.extent());
    }
    return dim::named(name, a.extent());
  }
  if (a.is_static() || b.is_static()) {
    const dim& s = a.is_static() ? a : b;
    const dim& d = a.is_static() ? b : a;
    if (s.extent() > d.bound())
      core_detail::throw_shape_error(subject(), ": static extent ", s.extent(), " exceeds bound ",
                                d.bound());
    return dim::named(name, s.extent());
  }
  const std::size_t bound = std::min(a.bound(), b.bound());
  return bound == unbounded ? dim(name) : dim::bounded(name, bound);
}

/// Dimension-by-dimension unification of two shapes of one dtype and rank, e.g.
/// `f32[batch, 512]` with `f32[?, 512]` gives `f32[batch, 512]`. Errors name both shapes and the
/// dimension: "cannot unify f32[batch, 512] with f32[time, 512]: dimension 0: incompatible axis
/// names: 'batch' vs 'time'".
inline shape unify_shapes(const shape& a, const shape& b) {
  auto fail = [&](const auto&... why) {
    core_detail::throw_shape_error("cannot unify ", a.to_string(), " with ", b.to_string(), ": ",
                              why...);
  };
  if (a.dtype() != b.dtype()) fail("dtype mismatch: ", name(a.dtype()), " vs ", name(b.dtype()));
  if (a.rank() != b.rank()) fail("rank mismatch: ", a.rank(), " vs ", b.rank());
  core_detail::small_vector<dim, 6> dims;
  dims.resize(a.rank());
  for (std::size_t i = 0; i < a.rank(); ++i) {
    try {
      dims[i] = unify_dims(a[i], b[i]);
    } catch (const shape_error& e) {
      fail("dimension ", i, ": ", e.what());
    }
  }
  return shape(a.dtype(), std::span<const dim>(dims.data(), dims.size()));
}

}  // namespace nax
