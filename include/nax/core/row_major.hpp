#pragma once
// The dense row-major layout (C order; mdspan's layout_right) of extents e[0, rank), outer to
// inner: the element count, and each axis's stride in elements, the product of the extents
// after it. Every dense buffer of nax (tensors, the runtime's values, copies made for a kernel)
// is laid out so; the strided views and copy plans read other layouts through explicit strides.

#include <cstddef>
#include <type_traits>

namespace nax::core_detail {

/// The product of e's extents (1 for rank 0); e is indexable, with size().
template <class Extents>
constexpr std::size_t element_count(const Extents& e) noexcept {
  std::size_t n = 1;
  for (std::size_t k = 0; k < e.size(); ++k) n *= static_cast<std::size_t>(e[k]);
  return n;
}

/// Writes the row-major strides of e into s (indexable, of e's size); returns the element count.
template <class Extents, class Strides>
constexpr std::size_t fill_row_major_strides(const Extents& e, Strides& s) noexcept {
  std::size_t next = 1;
  for (std::size_t k = e.size(); k-- > 0;) {
    s[k] = static_cast<std::remove_cvref_t<decltype(s[k])>>(next);
    next *= static_cast<std::size_t>(e[k]);
  }
  return next;
}

}  // namespace nax::core_detail
