#pragma once
// The runtime shape of a typed axis list, so that the typed and runtime layers speak one
// language: nax::shape_of<float, batch, hidden>() is f32[batch, 768].

#include <array>
#include <cstddef>

#include <nax/core/axis.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/shape.hpp>

namespace nax {

/// The runtime dimension of an axis type: named; static, bounded or dynamic as the type is.
template <axis_type A>
dim dim_of() {
  if constexpr (A::is_static)
    return dim::named(A::name, A::static_extent);
  else if constexpr (A::is_bounded)
    return dim::bounded(A::name, A::bound);
  else
    return dim(axis_name(A::name));
}

/// The shape pattern of element type T over `Axes...` (dynamic axes stay dynamic).
template <class T, axis_type... Axes>
shape shape_of() {
  const std::array<dim, sizeof...(Axes)> dims{dim_of<Axes>()...};
  return shape(dtype_of<T>, std::span<const dim>(dims.data(), dims.size()));
}

/// The concrete shape of element type T with these extents (every axis named and static).
template <class T, axis_type... Axes>
shape shape_of(const extents<Axes...>& e) {
  std::array<dim, sizeof...(Axes)> dims{};
  for (std::size_t i = 0; i < sizeof...(Axes); ++i)
    dims[i] = dim::named(extents<Axes...>::names()[i], e.extent(i));
  return shape(dtype_of<T>, std::span<const dim>(dims.data(), dims.size()));
}

}  // namespace nax
