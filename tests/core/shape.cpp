#include <nax/core/shape.hpp>

#include <limits>

#include <doctest/doctest.h>

using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("make and the shape predicates") {
  auto s = shape::make(dtype::f32, {"batch", 512});
  CHECK(s.dtype() == dtype::f32);
  CHECK(s.rank() == 2);
  CHECK(s.is_dynamic());
  CHECK(s.has_named_axes());
  CHECK_FALSE(s.is_fully_concrete());
  CHECK(s[0].name() == "batch");
  CHECK(s.dims()[1].extent() == 512);

  auto c = shape::make(dtype::i64, {32, 512});
  CHECK_FALSE(c.is_dynamic());
  CHECK_FALSE(c.has_named_axes());
  CHECK(c.is_fully_concrete());
  CHECK(c.num_elements() == 32 * 512);
  CHECK(c.num_bytes() == 32 * 512 * 8);

  auto unnamed = shape::make(dtype::f64, {nax::dynamic, 3});
  CHECK(unnamed.is_dynamic());
  CHECK_FALSE(unnamed.has_named_axes());

  shape scalar;
  CHECK(scalar.rank() == 0);
  CHECK(scalar.num_elements() == 1);
  CHECK(scalar.is_fully_concrete());
  CHECK(shape::make(dtype::u8, {4, 0}).num_elements() == 0);
}

TEST_CASE("to_string, in the documented form") {
  CHECK(shape::make(dtype::f32, {"batch", dim::bounded("seq", 512), 768}).to_string() ==
        "f32[batch, seq<=512, 768]");
  CHECK(shape::make(dtype::boolean, {nax::dynamic, nax::upto(4)}).to_string() == "bool[?, ?<=4]");
  CHECK(shape().to_string() == "f32[]");
  CHECK(shape::make(dtype::i32, {dim::named("hidden", 768)}).to_string() == "i32[768]");
}

TEST_CASE("at and index_of") {
  auto s = shape::make(dtype::f32, {"batch", 512, "batch"});
  CHECK(s.index_of("batch") == 0u);
  CHECK_FALSE(s.index_of("seq").has_value());
  CHECK_FALSE(s.index_of("").has_value());
  CHECK(s.at(1).extent() == 512);
  CHECK_THROWS_WITH_AS(s.at(3), "dimension 3 is out of range for f32[batch, 512, batch] (rank 3)",
                       nax::shape_error);
}

TEST_CASE("num_elements of a dynamic shape names the axis") {
  CHECK_THROWS_WITH_AS(shape::make(dtype::f32, {8, "batch"}).num_elements(),
                       "the element count of f32[8, batch] is unknown: dimension 1 "
                       "(axis 'batch') is dynamic",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(shape::make(dtype::f32, {nax::dynamic}).num_elements(),
                       "the element count of f32[?] is unknown: dimension 0 "
                       "(an unnamed dimension) is dynamic",
                       nax::shape_error);
}

TEST_CASE("an element or byte count that does not fit in size_t throws, never wraps around") {
  // (Found by fuzzing, tests/fuzz/shapes.cpp: the count wrapped, e.g. 2^32 x 2^32 gave 0, and
  // level 2 sized memory by it.)
  const std::size_t big = std::size_t(1) << 32;
  CHECK_THROWS_WITH_AS(shape::make(dtype::f32, {big, big}).num_elements(),
                       "the element count of f32[4294967296, 4294967296] does not fit in "
                       "std::size_t",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(
      shape::make(dtype::i32, {5657264462663868606u, 6453636137510488400u}).num_elements(),
      doctest::Contains("does not fit in std::size_t"), nax::shape_error);
  // The elements fit, their bytes do not.
  const shape bytes = shape::make(dtype::f64, {big, big / 2});
  CHECK(bytes.num_elements() == std::size_t(1) << 63);
  CHECK_THROWS_WITH_AS(bytes.num_bytes(),
                       "the byte count of f64[4294967296, 2147483648] does not fit in std::size_t",
                       nax::shape_error);
  // An empty axis makes any product 0; a dynamic one is still named first.
  CHECK(shape::make(dtype::f32, {big, big, 0}).num_elements() == 0);
  CHECK(shape::make(dtype::f32, {big, big, 0}).num_bytes() == 0);
  CHECK_THROWS_WITH_AS(shape::make(dtype::f32, {big, big, "batch"}).num_elements(),
                       doctest::Contains("is unknown: dimension 2 (axis 'batch') is dynamic"),
                       nax::shape_error);
  const std::size_t max = std::numeric_limits<std::size_t>::max() - 1;  // (max itself: dynamic)
  CHECK(shape::make(dtype::u8, {max, 1}).num_bytes() == max);
}

TEST_CASE("resolve replaces bound axes, keeps names, leaves the rest dynamic") {
  auto s = shape::make(dtype::f32, {"batch", dim::bounded("seq", 512), 768, "other", nax::dynamic});
  auto r = s.resolve(nax::bindings{{"batch", 32}, {"seq", 128}});
  CHECK(r.to_string() == "f32[32, 128, 768, other, ?]");
  CHECK(r[0] == dim::named("batch", 32));
  CHECK(r[1] == dim::named("seq", 128));
  CHECK(r.is_dynamic());
  auto full = shape::make(dtype::f32, {"batch", "batch", 2}).resolve(nax::bindings{{"batch", 3}});
  CHECK(full.is_fully_concrete());
  CHECK(full.num_elements() == 18);
  CHECK(s.resolve(nax::bindings{}) == s);
}

TEST_CASE("resolve checks bounds") {
  auto s = shape::make(dtype::f32, {dim::bounded("seq", 512)});
  CHECK_THROWS_WITH_AS(s.resolve(nax::bindings{{"seq", 600}}),
                       "axis 'seq': extent 600 exceeds its bound 512", nax::shape_error);
}

TEST_CASE("equality") {
  CHECK(shape::make(dtype::f32, {"batch", 3}) == shape::make(dtype::f32, {"batch", 3}));
  CHECK_FALSE(shape::make(dtype::f32, {"batch", 3}) == shape::make(dtype::f64, {"batch", 3}));
  CHECK_FALSE(shape::make(dtype::f32, {"batch", 3}) == shape::make(dtype::f32, {"batch"}));
  CHECK_FALSE(shape::make(dtype::f32, {"batch"}) == shape::make(dtype::f32, {"seq"}));
}

TEST_CASE("shapes of high rank spill to the heap and copy correctly") {
  auto s = shape::make(dtype::f32, {1, 2, 3, 4, 5, 6, 7, "batch"});
  shape copy = s;
  CHECK(copy == s);
  CHECK(copy.to_string() == "f32[1, 2, 3, 4, 5, 6, 7, batch]");
}
