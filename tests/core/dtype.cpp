#include <nax/core/dtype.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

TEST_CASE("dtype names and sizes") {
  using nax::dtype;
  static_assert(nax::name(dtype::f32) == "f32" && nax::size_of(dtype::f32) == 4);
  static_assert(nax::name(dtype::f64) == "f64" && nax::size_of(dtype::f64) == 8);
  static_assert(nax::name(dtype::i32) == "i32" && nax::size_of(dtype::i32) == 4);
  static_assert(nax::name(dtype::i64) == "i64" && nax::size_of(dtype::i64) == 8);
  static_assert(nax::name(dtype::u8) == "u8" && nax::size_of(dtype::u8) == 1);
  static_assert(nax::name(dtype::boolean) == "bool" && nax::size_of(dtype::boolean) == 1);
  CHECK(nax::size_of(dtype::boolean) == 1);
}

TEST_CASE("dtype_of maps C++ element types") {
  static_assert(nax::dtype_of<float> == nax::dtype::f32);
  static_assert(nax::dtype_of<double> == nax::dtype::f64);
  static_assert(nax::dtype_of<std::int32_t> == nax::dtype::i32);
  static_assert(nax::dtype_of<std::int64_t> == nax::dtype::i64);
  static_assert(nax::dtype_of<std::uint8_t> == nax::dtype::u8);
  static_assert(nax::dtype_of<bool> == nax::dtype::boolean);
  CHECK(nax::size_of(nax::dtype_of<double>) == sizeof(double));
}

TEST_CASE("element_type is dtype_of's inverse") {
  static_assert(std::is_same_v<nax::element_type<nax::dtype::f32>, float>);
  static_assert(std::is_same_v<nax::element_type<nax::dtype::f64>, double>);
  static_assert(std::is_same_v<nax::element_type<nax::dtype::i32>, std::int32_t>);
  static_assert(std::is_same_v<nax::element_type<nax::dtype::i64>, std::int64_t>);
  static_assert(std::is_same_v<nax::element_type<nax::dtype::u8>, std::uint8_t>);
  static_assert(std::is_same_v<nax::element_type<nax::dtype::boolean>, bool>);
  CHECK(nax::dtype_of<nax::element_type<nax::dtype::i64>> == nax::dtype::i64);
}

TEST_CASE("dtype_from_name round-trips and rejects unknown names") {
  for (auto t : {nax::dtype::f32, nax::dtype::f64, nax::dtype::i32, nax::dtype::i64, nax::dtype::u8,
                 nax::dtype::boolean})
    CHECK(nax::dtype_from_name(nax::name(t)) == t);
  CHECK_THROWS_WITH_AS(nax::dtype_from_name("f16"),
                       "unknown dtype 'f16' (expected f32, f64, i32, i64, u8 or bool)",
                       nax::shape_error);
}
