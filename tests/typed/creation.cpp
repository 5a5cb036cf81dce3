// Tensors made from nothing (typed/creation.hpp), and tensors made from values: every element
// against the rule it is made by, for static and dynamic axes.
#include <nax/typed/creation.hpp>
#include <nax/typed/elementwise.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <vector>

namespace {

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 3>;
using query = nax::axis<"query">;
using key = nax::axis<"key">;

}  // namespace

TEST_CASE("full, zeros and ones fill every element, with extents given by name") {
  const auto f = nax::full<float, batch, hidden>(2.5f, batch(4));
  CHECK(f.extent<batch>() == 4);
  CHECK(f.size() == 12);
  for (float x : f) CHECK(x == 2.5f);
  const auto z = nax::zeros<std::int32_t, hidden>();
  CHECK(z.size() == 3);
  for (std::int32_t x : z) CHECK(x == 0);
  const auto o = nax::ones<double, hidden, batch>(batch(2));
  for (double x : o) CHECK(x == 1.0);
  CHECK(nax::zeros<float, batch>(batch(0)).size() == 0);  // an empty tensor is fine
}

TEST_CASE("iota counts along its axis") {
  const auto p = nax::iota<float, batch>(batch(5));
  REQUIRE(p.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(p(i) == static_cast<float>(i));
  const auto q = nax::iota<std::int64_t, hidden>();
  CHECK(q(2) == 2);
}

TEST_CASE("eye and tril over two named axes, square or not") {
  const auto e = nax::eye<float, query, key>(query(3), key(4));
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(e(i, j) == (i == j ? 1.0f : 0.0f));
  // The causal mask: query i sees keys 0..i.
  const auto m = nax::tril<float, query, key>(key(5), query(4));
  REQUIRE(m.extent<query>() == 4);
  REQUIRE(m.extent<key>() == 5);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j) CHECK(m(i, j) == (j <= i ? 1.0f : 0.0f));
}

TEST_CASE("tensors from a braced list, a std::vector or a span, row-major") {
  const nax::tensor<float, hidden> b{0.5f, 1.5f, 2.5f};
  CHECK(b(0) == 0.5f);
  CHECK(b(2) == 2.5f);

  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const auto w = nax::tensor<float, batch, hidden>::from(v, batch(2));
  CHECK(w(1, 0) == 4.0f);
  const auto s = nax::tensor<float, hidden, batch>::from(std::span<const float>(v), batch(2));
  CHECK(s(2, 1) == 6.0f);
  const auto l = nax::tensor<float, batch>::from({7.0f, 8.0f}, batch(2));
  CHECK(l(1) == 8.0f);
}

TEST_CASE("a value count that is not the tensor's size is an error naming both") {
  const std::vector<float> v = {1, 2, 3, 4};
  CHECK_THROWS_WITH_AS((nax::tensor<float, batch, hidden>::from(v, batch(2))),
                       "a tensor of [batch=2, hidden=3] needs 6 values, got 4", nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::tensor<float, hidden>{1.0f, 2.0f}),
                       "a tensor of [hidden=3] needs 3 values, got 2", nax::shape_error);
}

TEST_CASE("the like forms take their axes, extents and element type from a tensor or expression") {
  nax::tensor<double, batch, hidden> x(batch(2));
  x.fill(3.0);
  const auto z = nax::zeros_like(x);
  static_assert(std::is_same_v<decltype(z), const nax::tensor<double, batch, hidden>>);
  CHECK(z.extent<batch>() == 2);
  for (double v : z) CHECK(v == 0.0);
  for (double v : nax::ones_like(x * 2.0)) CHECK(v == 1.0);  // an expression is not evaluated
  const auto f = nax::full_like(x, 7.5);
  CHECK(f.size() == 6);
  for (double v : f) CHECK(v == 7.5);
}

TEST_CASE("iota, eye and tril with the extents of an operand's axes") {
  nax::tensor<float, query, key> scores(query(3), key(5));
  const auto p = nax::iota<key>(scores);
  static_assert(std::is_same_v<decltype(p), const nax::tensor<std::int64_t, key>>);
  REQUIRE(p.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(p(i) == static_cast<std::int64_t>(i));
  const auto pf = nax::iota<hidden, float>(nax::zeros<float, batch, hidden>(batch(1)));
  CHECK(pf(2) == 2.f);

  const auto mask = nax::tril<query, key>(scores);
  static_assert(std::is_same_v<decltype(mask), const nax::tensor<bool, query, key>>);
  const auto e = nax::eye<key, query>(scores);  // the operand's element type; axes in this order
  static_assert(std::is_same_v<decltype(e), const nax::tensor<float, key, query>>);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 5; ++c) {
      CHECK(mask(r, c) == (c <= r));
      CHECK(e(c, r) == (c == r ? 1.f : 0.f));
    }
  // The like forms agree with the forms given extents.
  const auto t = nax::tril<query, key, int>(scores);
  const auto ref = nax::tril<int, query, key>(query(3), key(5));
  for (std::size_t i = 0; i < t.size(); ++i) CHECK(t.data()[i] == ref.data()[i]);
}
