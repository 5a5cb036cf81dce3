// Arithmetic and cast against scalar loops, with broadcasts on each side. (Comparisons, masks
// and where are in elementwise_where.cpp, the floating-point functions in elementwise_math.cpp.)
#include <nax/typed/elementwise.hpp>

#include <nax/typed/tensor.hpp>

#include "values.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

using test_values::matrix;
using test_values::sizes;
using test_values::spread;
using test_values::tolerance;

TEST_CASE_TEMPLATE("binary ops with broadcasting by name on each side", T, float, double) {
  for (const auto& size : sizes) {
    const std::size_t r = size[0], c = size[1];
    auto x = matrix<T>(r, c, -4, 4, 1);
    nax::tensor<T, col> v(col{c});
    spread(v.data(), c, 0.5, 3, 2);
    nax::tensor<T, row> u(row{r});
    spread(u.data(), r, 0.5, 3, 3);
    nax::tensor<T, row, col> a = x + v, b = v - x, m = x * u, d = u / (x * x + 1);
    nax::tensor<T, row, col> lo = nax::min(x, v), hi = nax::max(T(0.5), x), op = u * v;
    for (std::size_t i = 0; i < r; ++i)
      for (std::size_t j = 0; j < c; ++j) {
        const T xv = x(i, j);
        CHECK(a(i, j) == xv + v(j));
        CHECK(b(i, j) == v(j) - xv);
        CHECK(m(i, j) == xv * u(i));
        CHECK(d(i, j) == doctest::Approx(u(i) / (xv * xv + 1)).epsilon(tolerance<T>()));
        CHECK(lo(i, j) == std::min(xv, v(j)));
        CHECK(hi(i, j) == std::max(T(0.5), xv));
        CHECK(op(i, j) == u(i) * v(j));  // an outer product: [row] x [col]
      }
  }
}

TEST_CASE("scalars convert to the expression's element type") {
  auto x = matrix<float>(2, 3, -1, 1, 4);
  nax::tensor<float, row, col> y = 2 * x + 1.5 - x / 4;  // int and double scalars
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(y.data()[i] == doctest::Approx(2 * x.data()[i] + 1.5f - x.data()[i] / 4));
  nax::tensor<std::int32_t, row> n(row(5));
  for (int i = 0; i < 5; ++i) n(i) = i - 2;
  nax::tensor<std::int32_t, row> k = n * 3 - 1;
  for (int i = 0; i < 5; ++i) CHECK(k(i) == (i - 2) * 3 - 1);
  nax::tensor<std::int32_t, row> q = n / 2 + nax::abs(n);
  for (int i = 0; i < 5; ++i) CHECK(q(i) == (i - 2) / 2 + std::abs(i - 2));
}

TEST_CASE("cast converts, including between types of different widths") {
  auto x = matrix<float>(3, 33, -50, 50, 8);
  nax::tensor<std::int32_t, row, col> i = nax::cast<std::int32_t>(x);
  nax::tensor<double, row, col> d = nax::cast<double>(x) * 2.0;
  nax::tensor<float, row, col> back = nax::cast<float>(i);
  nax::tensor<float, row, col> ones = nax::cast<float>(x > 0);
  nax::tensor<std::int64_t, row, col> wide = nax::cast<std::int64_t>(i) * 3;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const float v = x.data()[k];
    CHECK(i.data()[k] == static_cast<std::int32_t>(v));
    CHECK(d.data()[k] == 2.0 * double(v));
    CHECK(back.data()[k] == float(static_cast<std::int32_t>(v)));
    CHECK(ones.data()[k] == (v > 0 ? 1.0f : 0.0f));
    CHECK(wide.data()[k] == 3 * std::int64_t(static_cast<std::int32_t>(v)));
  }
}

TEST_CASE("a large chain (threads, tails, one fused loop) matches the reference") {
  const std::size_t n = 1000003;
  nax::tensor<float, row> x(row{n}), a(row{n}), b(row{n});
  spread(x.data(), n, -3, 3, 9);
  spread(a.data(), n, -1, 1, 10);
  spread(b.data(), n, -1, 1, 11);
  nax::tensor<float, row> out = nax::tanh(x * a + b) * 0.5f + x;
  for (std::size_t i = 0; i < n; i += 997) {
    const double want = std::tanh(double(x(i)) * a(i) + b(i)) * 0.5 + x(i);
    CHECK(out(i) == doctest::Approx(want).epsilon(1e-5));
  }
  CHECK(out(n - 1) ==
        doctest::Approx(std::tanh(double(x(n - 1)) * a(n - 1) + b(n - 1)) * 0.5 + x(n - 1))
            .epsilon(1e-5));
}

TEST_CASE("operands with different dynamic extents throw before anything is written") {
  nax::tensor<float, row, col> x(row(2), col(3)), y(row(2), col(4));
  CHECK_THROWS_WITH_AS(x + y, "axis 'col' mismatch: 3 vs 4", nax::shape_error);
  nax::tensor<float, col> v(col(5));
  CHECK_THROWS_WITH_AS(nax::exp(x) * v, "axis 'col' mismatch: 3 vs 5", nax::shape_error);
}
