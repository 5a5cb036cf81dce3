// Reductions against scalar loops, over each axis and sets of axes, fused with expressions.
#include <nax/typed/reduce.hpp>

#include <nax/typed/elementwise.hpp>

#include "support/bits.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using c_ax = nax::axis<"c", 3>;

namespace {
template <class T>
void fill_pattern(T& t) {
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data()[i] = static_cast<typename T::value_type>(int((i * 7919) % 23) - 11);
}
}  // namespace

TEST_CASE_TEMPLATE("sum, mean, max, min over one axis, inner or outer", T, float, double,
                   std::int32_t) {
  for (std::size_t na : {1, 7, 33, 300}) {
    for (std::size_t nb : {1, 5, 33, 1027}) {
      nax::tensor<T, a_ax, b_ax> x(a_ax{na}, b_ax{nb});
      fill_pattern(x);
      auto s_inner = nax::sum<b_ax>(x);
      auto s_outer = nax::sum<a_ax>(x);
      auto mx = nax::max<b_ax>(x);
      auto mn = nax::min<a_ax>(x);
      auto me = nax::mean<b_ax>(x);
      static_assert(std::is_same_v<decltype(s_inner), nax::tensor<T, a_ax>>);
      static_assert(std::is_same_v<decltype(s_outer), nax::tensor<T, b_ax>>);
      for (std::size_t i = 0; i < na; ++i) {
        T s = 0, m = x(i, 0);
        for (std::size_t j = 0; j < nb; ++j) {
          s += x(i, j);
          m = std::max(m, x(i, j));
        }
        CHECK(s_inner(i) == s);
        CHECK(mx(i) == m);
        CHECK(me(i) == s / static_cast<T>(nb));
      }
      for (std::size_t j = 0; j < nb; ++j) {
        T s = 0, m = x(0, j);
        for (std::size_t i = 0; i < na; ++i) {
          s += x(i, j);
          m = std::min(m, x(i, j));
        }
        CHECK(s_outer(j) == s);
        CHECK(mn(j) == m);
      }
    }
  }
}

TEST_CASE("reducing several axes, all axes, and a static axis") {
  nax::tensor<double, a_ax, b_ax, c_ax> x(a_ax{4}, b_ax{5});
  fill_pattern(x);
  auto ac = nax::sum<a_ax, c_ax>(x);
  auto all = nax::sum<c_ax, a_ax, b_ax>(x);
  auto over_c = nax::max<c_ax>(x);
  static_assert(std::is_same_v<decltype(ac), nax::tensor<double, b_ax>>);
  static_assert(std::is_same_v<decltype(all), nax::tensor<double>>);
  double total = 0;
  for (std::size_t j = 0; j < 5; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t k = 0; k < 3; ++k) s += x(i, j, k);
    CHECK(ac(j) == s);
    total += s;
  }
  CHECK(all() == total);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      CHECK(over_c(i, j) == std::max({x(i, j, 0), x(i, j, 1), x(i, j, 2)}));
}

TEST_CASE("a reduction reads its expression without a temporary, and broadcasts back") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{3}, b_ax{37});
  fill_pattern(x);
  auto sq = nax::sum<b_ax>(x * x + 1.0f);
  // x - max<b>(x): the max is computed once, then read as a tensor broadcast over b.
  nax::tensor<float, a_ax, b_ax> centered = x - nax::max<b_ax>(x);
  for (std::size_t i = 0; i < 3; ++i) {
    float s = 0, m = x(i, 0);
    for (std::size_t j = 0; j < 37; ++j) {
      s += x(i, j) * x(i, j) + 1;
      m = std::max(m, x(i, j));
    }
    CHECK(sq(i) == doctest::Approx(s));
    for (std::size_t j = 0; j < 37; ++j) CHECK(centered(i, j) == x(i, j) - m);
  }
}

TEST_CASE("large reductions agree with a double reference (threads, tails)") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{513}, b_ax{4099});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = float(std::sin(double(i)));
  auto rows = nax::sum<b_ax>(x);
  auto cols = nax::sum<a_ax>(x);
  for (std::size_t i = 0; i < 513; i += 64) {
    double s = 0;
    for (std::size_t j = 0; j < 4099; ++j) s += x(i, j);
    CHECK(rows(i) == doctest::Approx(s).epsilon(1e-4));
  }
  for (std::size_t j = 0; j < 4099; j += 256) {
    double s = 0;
    for (std::size_t i = 0; i < 513; ++i) s += x(i, j);
    CHECK(cols(j) == doctest::Approx(s).epsilon(1e-4));
  }
}

TEST_CASE("empty axes: the sum is 0, the others have no value") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{3}, b_ax{0});
  auto s = nax::sum<b_ax>(x);
  for (float v : s) CHECK(v == 0);
  CHECK_THROWS_WITH_AS(nax::max<b_ax>(x),
                       "nax::max over an empty axis: there is no max of no elements",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::mean<b_ax>(x),
                       "nax::mean over an empty axis: there is no mean of no elements",
                       nax::shape_error);
  auto over_a = nax::max<a_ax>(x);  // reduces a non-empty axis: an empty result, no error
  CHECK(over_a.size() == 0);
}

TEST_CASE("a NaN gives NaN in max and min wherever it is: vector lanes, tails, accumulators") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t n : {1, 3, 8, 17, 40, 1000}) {
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      CAPTURE(n);
      CAPTURE(at);
      nax::tensor<float, a_ax, b_ax> x(a_ax{2}, b_ax{n});
      fill_pattern(x);
      x(0, at) = nan;  // row 0 has one NaN; column `at` has one NaN and a number
      x(1, at) = nan;  // now two NaNs
      const auto rows_max = nax::max<b_ax>(x), rows_min = nax::min<b_ax>(x);
      const auto cols_max = nax::max<a_ax>(x), cols_min = nax::min<a_ax>(x);
      CHECK(std::isnan(rows_max(0)));
      CHECK(std::isnan(rows_min(1)));
      CHECK(std::isnan(cols_max(at)));
      CHECK(std::isnan(cols_min(at)));
      for (std::size_t j = 0; j < n; ++j)
        if (j != at) CHECK(!std::isnan(cols_max(j)));
      const auto relu = nax::eval(nax::relu(x)), mx = nax::eval(nax::max(x, 0.5f));
      CHECK(std::isnan(relu(0, at)));
      CHECK(std::isnan(mx(1, at)));
    }
  }
}

TEST_CASE_TEMPLATE("a reduction of a transposed operand has the bits of the contiguous one", T,
                   float, double) {
  // An operand not at unit stride is copied into a buffer a segment at a time (leaf_stage): the
  // sums must not depend on it, over rows shorter and longer than a segment (256 positions), the
  // reduced axis inner (vector accumulators resumed segment after segment) or outer.
  for (std::size_t nb : {1, 5, 255, 256, 257, 1000}) {
    CAPTURE(nb);
    nax::tensor<T, a_ax, b_ax> x(a_ax{3}, b_ax{nb});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = T(1) / T(i % 97 + 3) - T(0.3);
    const nax::tensor<T, b_ax, a_ax> t = x + T(0);  // x's transpose, laid out [b, a]
    const nax::tensor_view<const T, a_ax, b_ax> strided(t.data(), x.extents(),
                                                        std::array<std::ptrdiff_t, 2>{1, 3});
    CHECK(nax_test::same_bits(nax::tensor<T, a_ax>(nax::sum<b_ax>(strided)),
                              nax::tensor<T, a_ax>(nax::sum<b_ax>(x))));
    CHECK(nax_test::same_bits(nax::tensor<T, a_ax>(nax::max<b_ax>(strided * T(2))),
                              nax::tensor<T, a_ax>(nax::max<b_ax>(x * T(2)))));
    CHECK(nax_test::same_bits(nax::tensor<T, b_ax>(nax::sum<a_ax>(strided)),
                              nax::tensor<T, b_ax>(nax::sum<a_ax>(x))));
  }
}
