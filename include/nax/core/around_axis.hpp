#pragma once
// A dense row-major tensor seen around one of its axes as [outer, n, inner]: the product of the
// extents before the axis, the axis's own extent, and the product of those after it. The loops
// that work along one axis (argmax, cumsum, take, iota, the row ops) index element (o, j, i) at
// (o * n + j) * inner + i.

#include <cstddef>

namespace nax::core_detail {

struct around_axis {
  std::size_t outer = 1, n = 0, inner = 1;
};

/// Of extents e[0, rank) (anything indexable with size()) around axis `axis` (< rank).
template <class Extents>
constexpr around_axis split_around(const Extents& e, std::size_t axis) noexcept {
  around_axis s;
  for (std::size_t k = 0; k < axis; ++k) s.outer *= static_cast<std::size_t>(e[k]);
  s.n = static_cast<std::size_t>(e[axis]);
  for (std::size_t k = axis + 1; k < e.size(); ++k) s.inner *= static_cast<std::size_t>(e[k]);
  return s;
}

/// Of typed tensor t (its rank and extent(i)), around its axis at `axis`.
template <class Tensor>
requires requires(const Tensor& t) { t.extent(std::size_t{0}); }
constexpr around_axis split_around_tensor(const Tensor& t, std::size_t axis) noexcept {
  around_axis s;
  for (std::size_t k = 0; k < axis; ++k) s.outer *= t.extent(k);
  s.n = t.extent(axis);
  for (std::size_t k = axis + 1; k < Tensor::rank; ++k) s.inner *= t.extent(k);
  return s;
}

}  // namespace nax::core_detail
