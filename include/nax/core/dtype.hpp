#pragma once
// nax::dtype: the element types of runtime tensors.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nax/core/shape_error.hpp>

namespace nax {

enum class dtype : std::uint8_t { f32, f64, i32, i64, u8, boolean };

/// "f32", "f64", "i32", "i64", "u8", "bool".
constexpr std::string_view name(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
    case dtype::i32: return "i32";
    case dtype::i64: return "i64";
    case dtype::u8: return "u8";
    case dtype::boolean: return "bool";
  }
  return "?";
}

/// Bytes per element.
constexpr std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
    case dtype::i32: return 4;
    case dtype::f64:
    case dtype::i64: return 8;
    case dtype::u8:
    case dtype::boolean: return 1;
  }
  return 0;
}

/// The dtype named `text` ("f32", ..., "bool"); nax::shape_error for any other name.
constexpr dtype dtype_from_name(std::string_view text) {
  for (dtype t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::u8, dtype::boolean})
    if (name(t) == text) return t;
  core_detail::throw_shape_error("unknown dtype '", text, "' (expected f32, f64, i32, i64, u8 or bool)");
}

namespace core_detail {
template <class T>
struct dtype_of_impl {
  // An error here means T has no nax::dtype: use float, double, int32_t, int64_t, uint8_t or bool.
  static_assert(sizeof(T) == 0, "nax::dtype_of: no dtype for this element type");
};
template <>
struct dtype_of_impl<float> {
  static constexpr dtype value = dtype::f32;
};
template <>
struct dtype_of_impl<double> {
  static constexpr dtype value = dtype::f64;
};
template <>
struct dtype_of_impl<std::int32_t> {
  static constexpr dtype value = dtype::i32;
};
template <>
struct dtype_of_impl<std::int64_t> {
  static constexpr dtype value = dtype::i64;
};
template <>
struct dtype_of_impl<std::uint8_t> {
  static constexpr dtype value = dtype::u8;
};
template <>
struct dtype_of_impl<bool> {
  static constexpr dtype value = dtype::boolean;
};
}  // namespace core_detail

/// The dtype of a C++ element type: `nax::dtype_of<float> == nax::dtype::f32`.
template <class T>
inline constexpr dtype dtype_of = core_detail::dtype_of_impl<T>::value;

namespace core_detail {
template <dtype D>
struct element_type_impl;
template <>
struct element_type_impl<dtype::f32> {
  using type = float;
};
template <>
struct element_type_impl<dtype::f64> {
  using type = double;
};
template <>
struct element_type_impl<dtype::i32> {
  using type = std::int32_t;
};
template <>
struct element_type_impl<dtype::i64> {
  using type = std::int64_t;
};
template <>
struct element_type_impl<dtype::u8> {
  using type = std::uint8_t;
};
template <>
struct element_type_impl<dtype::boolean> {
  using type = bool;
};
}  // namespace core_detail

/// The C++ element type of a dtype, dtype_of's inverse: `nax::element_type<nax::dtype::f32>` is
/// float.
template <dtype D>
using element_type = typename core_detail::element_type_impl<D>::type;

}  // namespace nax
