#pragma once
// Printing tensors: axis names, extents and values, nested like the data; long axes are cut to
// their first and last three entries.

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

inline constexpr std::size_t print_edge = 3;           // entries kept at each end of a long axis
inline constexpr std::size_t print_full_limit = 1000;  // tensors this small print whole

template <class T>
void print_value(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    os << (v ? "true" : "false");
  else if constexpr (sizeof(T) == 1)
    os << static_cast<int>(v);  // u8 is a number, not a character
  else
    os << v;
}

template <class T, class... A>
void print_level(std::ostream& os, const tensor_view<T, A...>& v,
                 std::array<std::size_t, sizeof...(A)>& idx, std::size_t level, bool cut) {
  constexpr std::size_t rank = sizeof...(A);
  const std::size_t n = v.extent(level);
  os << '[';
  for (std::size_t i = 0; i < n; ++i) {
    if (cut && n > 2 * print_edge && i == print_edge) {
      if (level + 1 == rank) {
        os << "..., ";
      } else {
        os << "...,\n";
        for (std::size_t k = 0; k <= level; ++k) os << ' ';
      }
      i = n - print_edge;
    }
    idx[level] = i;
    if (level + 1 == rank) {
      std::ptrdiff_t off = 0;
      for (std::size_t k = 0; k < rank; ++k)
        off += static_cast<std::ptrdiff_t>(idx[k]) * v.strides()[k];
      print_value(os, v.data()[off]);
    } else {
      print_level(os, v, idx, level + 1, cut);
    }
    if (i + 1 < n) {
      os << ',';
      if (level + 1 == rank) {
        os << ' ';
      } else {
        os << '\n';
        for (std::size_t k = 0; k <= level; ++k) os << ' ';
      }
    }
  }
  os << ']';
}

}  // namespace detail

/// `tensor<f32>[batch=2, hidden=3]` and the values, e.g. `[[1, 2, 3],\n [4, 5, 6]]`.
template <class T, class... A>
std::ostream& operator<<(std::ostream& os, const tensor_view<T, A...>& v) {
  using V = std::remove_const_t<T>;
  os << "tensor<" << name(dtype_of<V>) << '>' << v.extents().to_string() << '\n';
  if constexpr (sizeof...(A) == 0) {
    detail::print_value(os, *v.data());
  } else {
    if (v.size() == 0) return os << "[]";
    std::array<std::size_t, sizeof...(A)> idx{};
    detail::print_level(os, v, idx, 0, v.size() > detail::print_full_limit);
  }
  return os;
}

template <class T, class... A>
std::ostream& operator<<(std::ostream& os, const tensor<T, A...>& t) {
  return os << t.view();
}

}  // namespace nax
