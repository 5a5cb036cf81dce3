// nax::dot: contraction by name against a naive loop, result axis order, batch axes, views,
// expressions as operands and results feeding expressions, and every error.
#include <nax/typed/dot.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/layout.hpp>

#include <doctest/doctest.h>

using b_ax = nax::axis<"b">;
using i_ax = nax::axis<"i">;
using j_ax = nax::axis<"j">;
using k_ax = nax::axis<"k">;
using l_ax = nax::axis<"l">;

namespace {
template <class T>
void fill_pattern(T& t, double salt) {
  for (std::size_t n = 0; n < t.size(); ++n)
    t.data()[n] = static_cast<typename T::value_type>(std::sin(double(n) * 0.37 + salt));
}
template <class T>
double tolerance(std::size_t k) {
  return 8 * double(k + 2) * std::numeric_limits<T>::epsilon();
}
}  // namespace

TEST_CASE_TEMPLATE("dot<k>(a[i, k], b[k, j]) is the matrix product [i, j]", T, float, double) {
  for (std::size_t s : {1u, 2u, 3u, 7u, 17u, 64u, 65u, 127u}) {
    CAPTURE(s);
    nax::tensor<T, i_ax, k_ax> a(i_ax{s}, k_ax{s + 2});
    nax::tensor<T, k_ax, j_ax> b(k_ax{s + 2}, j_ax{s + 1});
    fill_pattern(a, 1);
    fill_pattern(b, 2);
    auto c = nax::dot<k_ax>(a, b);
    static_assert(std::is_same_v<typename decltype(c)::axes_type, nax::axes<i_ax, j_ax>>);
    REQUIRE(c.template extent<j_ax>() == s + 1);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < s; ++i)
      for (std::size_t j = 0; j <= s; ++j) {
        double want = 0;
        for (std::size_t k = 0; k < s + 2; ++k) want += double(a(i, k)) * double(b(k, j));
        wrong += !(std::abs(double(c(i, j)) - want) <= tolerance<T>(s + 2));
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("result axes: batch axes, then a's free axes, then b's, whatever the operand order") {
  nax::tensor<float, k_ax, b_ax, i_ax> a(k_ax{5}, b_ax{3}, i_ax{4});
  nax::tensor<float, j_ax, k_ax, b_ax> b(j_ax{6}, k_ax{5}, b_ax{3});
  fill_pattern(a, 3);
  fill_pattern(b, 4);
  auto c = nax::dot<k_ax>(a, b);
  static_assert(std::is_same_v<decltype(c)::axes_type, nax::axes<b_ax, i_ax, j_ax>>);
  std::size_t wrong = 0;
  for (std::size_t bb = 0; bb < 3; ++bb)
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 6; ++j) {
        double want = 0;
        for (std::size_t k = 0; k < 5; ++k) want += double(a(k, bb, i)) * double(b(j, k, bb));
        wrong += !(std::abs(double(c(bb, i, j)) - want) <= tolerance<float>(5));
      }
  CHECK(wrong == 0);
  // Swapping the operands swaps the free axes.
  auto d = nax::dot<k_ax>(b, a);
  static_assert(std::is_same_v<decltype(d)::axes_type, nax::axes<b_ax, j_ax, i_ax>>);
  CHECK(d(1, 2, 3) == doctest::Approx(c(1, 3, 2)).epsilon(1e-5));
}

TEST_CASE("contracting several axes, a vector dot and an outer product") {
  nax::tensor<double, i_ax, k_ax, l_ax> a(i_ax{3}, k_ax{4}, l_ax{5});
  nax::tensor<double, l_ax, j_ax, k_ax> b(l_ax{5}, j_ax{2}, k_ax{4});
  fill_pattern(a, 5);
  fill_pattern(b, 6);
  auto c = nax::dot<k_ax, l_ax>(a, b);  // b's (l, k) layout: no single stride, copied dense
  static_assert(std::is_same_v<decltype(c)::axes_type, nax::axes<i_ax, j_ax>>);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 2; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < 4; ++k)
        for (std::size_t l = 0; l < 5; ++l) want += a(i, k, l) * b(l, j, k);
      CHECK(c(i, j) == doctest::Approx(want).epsilon(1e-12));
    }
  nax::tensor<double, k_ax> x(k_ax{100}), y(k_ax{100});
  fill_pattern(x, 7);
  fill_pattern(y, 8);
  auto s = nax::dot<k_ax>(x, y);
  static_assert(std::is_same_v<decltype(s)::axes_type, nax::axes<>>);
  double want = 0;
  for (std::size_t k = 0; k < 100; ++k) want += x(k) * y(k);
  CHECK(s() == doctest::Approx(want).epsilon(1e-12));
  nax::tensor<double, i_ax> u(i_ax{3});
  nax::tensor<double, j_ax> v(j_ax{4});
  fill_pattern(u, 9);
  fill_pattern(v, 10);
  auto o = nax::dot<>(u, v);
  static_assert(std::is_same_v<decltype(o)::axes_type, nax::axes<i_ax, j_ax>>);
  CHECK(o(2, 3) == doctest::Approx(u(2) * v(3)));
}

TEST_CASE("transposed and sliced views are read through their strides") {
  nax::tensor<float, k_ax, i_ax> at(k_ax{33}, i_ax{20});  // a stored transposed
  nax::tensor<float, j_ax, k_ax> bt(j_ax{40}, k_ax{33});
  fill_pattern(at, 11);
  fill_pattern(bt, 12);
  auto a = nax::permute<i_ax, k_ax>(at);
  auto b = nax::slice<j_ax>(bt, 3, 37);
  auto c = nax::dot<k_ax>(a, b);
  REQUIRE(c.size() == 20 * 34);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t j = 0; j < 34; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < 33; ++k) want += double(at(k, i)) * double(bt(j + 3, k));
      wrong += !(std::abs(double(c(i, j)) - want) <= tolerance<float>(33));
    }
  CHECK(wrong == 0);
}

TEST_CASE("operands whose axis groups have no single stride are copied in group order") {
  // Batch axes (b, l) in a's order and b's reversed, the rows split by them: every group of a
  // and of b needs the copy.
  nax::tensor<double, b_ax, i_ax, l_ax, k_ax> a(b_ax{2}, i_ax{3}, l_ax{4}, k_ax{5});
  nax::tensor<double, k_ax, l_ax, j_ax, b_ax> b(k_ax{5}, l_ax{4}, j_ax{3}, b_ax{2});
  fill_pattern(a, 13);
  fill_pattern(b, 14);
  auto c = nax::dot<k_ax>(a, b);
  static_assert(std::is_same_v<decltype(c)::axes_type, nax::axes<b_ax, l_ax, i_ax, j_ax>>);
  std::size_t wrong = 0;
  for (std::size_t bb = 0; bb < 2; ++bb)
    for (std::size_t l = 0; l < 4; ++l)
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
          double want = 0;
          for (std::size_t k = 0; k < 5; ++k) want += a(bb, i, l, k) * b(k, l, j, bb);
          wrong += !(std::abs(c(bb, l, i, j) - want) <= tolerance<double>(5));
        }
  CHECK(wrong == 0);
}

TEST_CASE("operands may be expressions, and the result feeds expressions") {
  nax::tensor<float, i_ax, k_ax> x(i_ax{9}, k_ax{13});
  nax::tensor<float, k_ax, j_ax> w(k_ax{13}, j_ax{11});
  nax::tensor<float, j_ax> bias(j_ax{11});
  fill_pattern(x, 13);
  fill_pattern(w, 14);
  fill_pattern(bias, 15);
  nax::tensor<float, i_ax, j_ax> y = nax::relu(nax::dot<k_ax>(x * 2.0f, w) + bias);
  for (std::size_t i = 0; i < 9; ++i)
    for (std::size_t j = 0; j < 11; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < 13; ++k) want += 2.0 * x(i, k) * w(k, j);
      want = std::max(0.0, want + bias(j));
      CHECK(y(i, j) == doctest::Approx(want).epsilon(1e-5));
    }
  // An rvalue tensor operand.
  auto z = nax::dot<k_ax>(nax::eval(x * 2.0f), w);
  CHECK(z(3, 4) == doctest::Approx(nax::dot<k_ax>(x, w)(3, 4) * 2).epsilon(1e-5));
}

TEST_CASE_TEMPLATE("expression operands are computed into the panels, for every grouping", T, float,
                   double) {
  // Batch, two contracted axes in another order than a's, a broadcast inside each operand.
  for (std::size_t s : {1u, 5u, 40u}) {
    CAPTURE(s);
    nax::tensor<T, l_ax, b_ax, i_ax, k_ax> x(l_ax{3}, b_ax{2}, i_ax{s + 2}, k_ax{s});
    nax::tensor<T, k_ax> shift(k_ax{s});
    nax::tensor<T, j_ax, k_ax, b_ax, l_ax> y(j_ax{s + 30}, k_ax{s}, b_ax{2}, l_ax{3});
    fill_pattern(x, 16);
    fill_pattern(shift, 17);
    fill_pattern(y, 18);
    auto c = nax::dot<k_ax, l_ax>(x * T(2) + shift, nax::tanh(y));
    static_assert(std::is_same_v<typename decltype(c)::axes_type, nax::axes<b_ax, i_ax, j_ax>>);
    std::size_t wrong = 0;
    for (std::size_t bb = 0; bb < 2; ++bb)
      for (std::size_t i = 0; i < s + 2; ++i)
        for (std::size_t j = 0; j < s + 30; ++j) {
          double want = 0;
          for (std::size_t k = 0; k < s; ++k)
            for (std::size_t l = 0; l < 3; ++l)
              want += (2.0 * double(x(l, bb, i, k)) + double(shift(k))) *
                      std::tanh(double(y(j, k, bb, l)));
          wrong += !(std::abs(double(c(bb, i, j)) - want) <= 4 * tolerance<T>(3 * s));
        }
    CHECK(wrong == 0);
  }
  // A row vector and a column vector as expressions (panels with one row or one column).
  nax::tensor<T, k_ax> v(k_ax{77});
  nax::tensor<T, k_ax, j_ax> w(k_ax{77}, j_ax{50});
  fill_pattern(v, 19);
  fill_pattern(w, 20);
  auto row = nax::dot<k_ax>(v + T(1), w * T(3));
  auto col = nax::dot<k_ax>(w * T(3), v + T(1));
  static_assert(std::is_same_v<typename decltype(row)::axes_type, nax::axes<j_ax>>);
  static_assert(std::is_same_v<typename decltype(col)::axes_type, nax::axes<j_ax>>);
  std::size_t wrong = 0;
  for (std::size_t j = 0; j < 50; ++j) {
    double want = 0;
    for (std::size_t k = 0; k < 77; ++k) want += (double(v(k)) + 1) * 3 * double(w(k, j));
    wrong += !(std::abs(double(row(j)) - want) <= 4 * tolerance<T>(77));
    wrong += !(std::abs(double(col(j)) - want) <= 4 * tolerance<T>(77));
  }
  CHECK(wrong == 0);
}

TEST_CASE("zero-size axes give an empty result, or zeros when only k is empty") {
  nax::tensor<float, i_ax, k_ax> a(i_ax{0}, k_ax{3});
  nax::tensor<float, k_ax, j_ax> b(k_ax{3}, j_ax{2});
  b.fill(1);
  CHECK(nax::dot<k_ax>(a, b).size() == 0);
  nax::tensor<float, i_ax, k_ax> e(i_ax{2}, k_ax{0});
  nax::tensor<float, k_ax, j_ax> f(k_ax{0}, j_ax{2});
  auto c = nax::dot<k_ax>(e, f);
  REQUIRE(c.size() == 4);
  for (std::size_t n = 0; n < 4; ++n) CHECK(c.data()[n] == 0);
}

TEST_CASE("a dynamic extent mismatch names the axis and both extents") {
  nax::tensor<float, i_ax, k_ax> a(i_ax{2}, k_ax{3});
  nax::tensor<float, k_ax, j_ax> b(k_ax{4}, j_ax{2});
  CHECK_THROWS_WITH_AS(nax::dot<k_ax>(a, b), "nax::dot: axis 'k' mismatch: a has 3, b has 4",
                       nax::shape_error);
  nax::tensor<float, b_ax, i_ax, k_ax> p(b_ax{2}, i_ax{2}, k_ax{3});
  nax::tensor<float, b_ax, k_ax, j_ax> q(b_ax{5}, k_ax{3}, j_ax{2});
  CHECK_THROWS_WITH_AS(nax::dot<k_ax>(p, q), "nax::dot: axis 'b' mismatch: a has 2, b has 5",
                       nax::shape_error);
}
