// The row driver: every row visited once, along the inner or an outer axis, with extra cursors.
#include <nax/typed/rows.hpp>

#include <nax/typed/elementwise.hpp>

#include <doctest/doctest.h>

using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using c_ax = nax::axis<"c">;

namespace {
// Writes each row's running sum (a prefix sum along the row), read element by element.
struct prefix_sum {
  template <class Reader, class Dst>
  void operator()(const Reader& x, const Dst& d, std::size_t n) const {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      acc += x.scalar(i);
      d.at(i) = acc;
    }
  }
};
}  // namespace

TEST_CASE("for_each_row runs a kernel on every row, along any axis") {
  nax::tensor<double, a_ax, b_ax, c_ax> x(a_ax{3}, b_ax{4}, c_ax{5});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = double(i % 7);
  nax::tensor<double, a_ax, b_ax, c_ax> along_b(a_ax{3}, b_ax{4}, c_ax{5}),
      along_c(a_ax{3}, b_ax{4}, c_ax{5});
  nax::detail::for_each_row<b_ax, double>(x * 1.0, along_b, prefix_sum{});
  nax::detail::for_each_row<c_ax, double>(x, along_c, prefix_sum{});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < 5; ++k) {
      double acc = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        acc += x(i, j, k);
        CHECK(along_b(i, j, k) == acc);
      }
    }
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      double acc = 0;
      for (std::size_t k = 0; k < 5; ++k) {
        acc += x(i, j, k);
        CHECK(along_c(i, j, k) == acc);
      }
    }
  static_assert(std::is_same_v<nax::detail::row_order<nax::axes<a_ax, b_ax, c_ax>, b_ax>,
                               nax::axes<a_ax, c_ax, b_ax>>);
}

TEST_CASE("extra cursors are positioned at each row") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{2}, b_ax{3});
  x.fill(1);
  nax::tensor<float, b_ax> w(b_ax{3});
  w(0) = 10;
  w(1) = 20;
  w(2) = 30;
  nax::tensor<float, a_ax, b_ax> out(a_ax{2}, b_ax{3});
  using order = nax::detail::row_order<nax::axes<a_ax, b_ax>, b_ax>;
  nax::detail::for_each_row<b_ax, float>(
      x, out,
      [](const auto& r, const auto& d, std::size_t n, const auto& weight) {
        for (std::size_t i = 0; i < n; ++i) d.at(i) = r.scalar(i) * weight.scalar(i);
      },
      w.cursor<order>());
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(out(i, j) == w(j));
}
