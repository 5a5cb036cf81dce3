// Comparisons, masks and where against scalar loops, with broadcasts on each side; masks and
// values of element types of different widths. (Apart from elementwise.cpp: one translation
// unit of both took 48 s to compile with clang++.)
#include <nax/typed/elementwise.hpp>

#include <nax/typed/tensor.hpp>

#include "values.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

using test_values::matrix;
using test_values::sizes;

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
                               either = nax::logical_or((x < 0.5f), (i > 0)),
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
