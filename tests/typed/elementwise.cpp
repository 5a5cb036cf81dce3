// Arithmetic, comparisons, where and cast against scalar loops, with broadcasts on each side.
// (The floating-point functions are in elementwise_math.cpp.)
#include <nax/typed/elementwise.hpp>

#include <nax/typed/tensor.hpp>

#include "values.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

using test_values::matrix;
using test_values::spread;
using test_values::tolerance;

namespace {

const std::array<std::array<std::size_t, 2>, 4> sizes{{{1, 1}, {1, 7}, {3, 33}, {5, 1027}}};

}  // namespace

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

TEST_CASE("comparisons give bool expressions; where selects") {
  for (const auto& size : sizes) {
    const std::size_t r = size[0], c = size[1];
    auto x = matrix<float>(r, c, -2, 2, 5);
    auto y = matrix<float>(r, c, -2, 2, 6);
    nax::tensor<bool, row, col> lt = x<y, le = x <= 0.5f, gt = x> y, ge = x >= y, eq = x == x,
                                ne = x != y;
    nax::tensor<float, row, col> w = nax::where(x > y, x, y), s = nax::where(lt, -1.0f, 1.0f);
    nax::tensor<bool, row, col> both = nax::logical_and(lt, x > 0),
                                either = nax::logical_or(lt, !le);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float a = x.data()[i], b = y.data()[i];
      CHECK(lt.data()[i] == (a < b));
      CHECK(le.data()[i] == (a <= 0.5f));
      CHECK(gt.data()[i] == (a > b));
      CHECK(ge.data()[i] == (a >= b));
      CHECK(eq.data()[i]);
      CHECK(ne.data()[i] == (a != b));
      CHECK(w.data()[i] == std::max(a, b));
      CHECK(s.data()[i] == (a < b ? -1.0f : 1.0f));
      CHECK(both.data()[i] == (a < b && a > 0));
      CHECK(either.data()[i] == (a < b || a > 0.5f));
    }
  }
}

// The mask and the values of where have element types of different widths (an i64 comparison
// selecting floats: 4 mask lanes per vector, 8 values), or of one width in different registers.
// 13 columns: a full vector and a tail at every width; the mask varies within each vector.
TEST_CASE_TEMPLATE("where: a comparison of one element type selects values of another", P,
                   std::pair<std::int64_t, float>, std::pair<std::int32_t, double>,
                   std::pair<float, std::int64_t>, std::pair<std::int32_t, float>,
                   std::pair<std::int64_t, double>, std::pair<double, std::int32_t>) {
  using M = typename P::first_type;
  using V = typename P::second_type;
  for (const std::size_t r : {1, 3}) {
    const std::size_t c = 13;
    CAPTURE(r);
    nax::tensor<M, row, col> i(row{r}, col{c});
    nax::tensor<M, col> j(col{c});
    nax::tensor<V, row, col> a(row{r}, col{c}), b(row{r}, col{c});
    for (std::size_t k = 0; k < i.size(); ++k) {
      i.data()[k] = static_cast<M>((k * 7 + 3) % 11) - M(5);
      a.data()[k] = static_cast<V>(k + 1);
      b.data()[k] = -static_cast<V>(2 * k + 1);
    }
    for (std::size_t k = 0; k < c; ++k) j(k) = static_cast<M>(k % 4) - M(1);
    const nax::tensor<V, row, col> w = nax::where(i > j, a, b);         // [row, col] against [col]
    const nax::tensor<V, row, col> s = nax::where(i <= M(0), V(7), b);  // a scalar value
    const nax::tensor<bool, row, col> stored = i > j;
    const nax::tensor<V, row, col> from_bool = nax::where(stored, b, a);  // a bool tensor
    std::size_t taken = 0;
    for (std::size_t y = 0; y < r; ++y)
      for (std::size_t x = 0; x < c; ++x) {
        CAPTURE(x);
        const bool m = i(y, x) > j(x);
        taken += m;
        CHECK(w(y, x) == (m ? a(y, x) : b(y, x)));
        CHECK(s(y, x) == (i(y, x) <= M(0) ? V(7) : b(y, x)));
        CHECK(from_bool(y, x) == (m ? b(y, x) : a(y, x)));
      }
    CHECK(taken > 0);  // both sides are selected
    CHECK(taken < i.size());
  }
}

TEST_CASE("masks of different element types combine: logical ops, where over bools") {
  const std::size_t n = 13;
  nax::tensor<std::int64_t, col> i(col{n});
  nax::tensor<float, col> x(col{n});
  nax::tensor<double, col> d(col{n});
  for (std::size_t k = 0; k < n; ++k) {
    i(k) = static_cast<std::int64_t>(k % 3);
    x(k) = static_cast<float>(k % 5) - 2.0f;
    d(k) = static_cast<double>(k % 4) - 1.5;
  }
  const nax::tensor<bool, col> both = nax::logical_and(i > 0, x < 0.5f),
                               either = nax::logical_or(x < 0.5f, i > 0),
                               pick = nax::where(i == 1, x > 0.0f, d < 0.0),
                               same = (x > 0.0f) == (i > 0);
  nax::tensor<std::int64_t, col> counts = nax::where(x > 0.0f, i, std::int64_t(-1));
  for (std::size_t k = 0; k < n; ++k) {
    CAPTURE(k);
    CHECK(both(k) == (i(k) > 0 && x(k) < 0.5f));
    CHECK(either(k) == (x(k) < 0.5f || i(k) > 0));
    CHECK(pick(k) == (i(k) == 1 ? x(k) > 0.0f : d(k) < 0.0));
    CHECK(same(k) == ((x(k) > 0.0f) == (i(k) > 0)));
    CHECK(counts(k) == (x(k) > 0.0f ? i(k) : -1));
  }
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
