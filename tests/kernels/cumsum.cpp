// The cumulative-sum loop: ONNX CumSum's four forms on a row, sums in order along the axis (the
// bits of a plain running sum, on any thread count and for inner blocks wider than one), NaN
// and infinities carried as additions carry them, integers wrapping, empty extents.
#include <nax/kernels/cumsum.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/bits.hpp"
#include "support/threads.hpp"

namespace {

template <class T>
std::vector<T> run(const std::vector<T>& x, std::size_t outer, std::size_t n, std::size_t inner,
                   nax::cumsum_options o = {}) {
  std::vector<T> y(x.size(), T(-7));
  nax::kernels::cumsum(x.data(), y.data(), outer, n, inner, o);
  return y;
}

// A running sum of each lane in the order the options give, written plainly.
template <class T>
std::vector<T> running(const std::vector<T>& x, std::size_t outer, std::size_t n, std::size_t inner,
                       nax::cumsum_options o) {
  std::vector<T> y(x.size());
  for (std::size_t a = 0; a < outer; ++a)
    for (std::size_t i = 0; i < inner; ++i) {
      T sum = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t j = o.reverse ? n - 1 - k : k;
        const std::size_t at = (a * n + j) * inner + i;
        if (o.exclusive) {
          y[at] = k == 0 ? T(0) : sum;
          sum = k == 0 ? x[at] : T(sum + x[at]);
        } else {
          sum = k == 0 ? x[at] : T(sum + x[at]);
          y[at] = sum;
        }
      }
    }
  return y;
}

std::vector<float> values(std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = float(int((i * 7919) % 97) - 48) / 7.0f;
  return v;
}

}  // namespace

TEST_CASE("the four forms of ONNX CumSum on a row") {
  const std::vector<std::int32_t> x{1, 2, 3, 4};
  CHECK(run(x, 1, 4, 1) == std::vector<std::int32_t>{1, 3, 6, 10});
  CHECK(run(x, 1, 4, 1, {.exclusive = true}) == std::vector<std::int32_t>{0, 1, 3, 6});
  CHECK(run(x, 1, 4, 1, {.reverse = true}) == std::vector<std::int32_t>{10, 9, 7, 4});
  CHECK(run(x, 1, 4, 1, {.exclusive = true, .reverse = true}) ==
        std::vector<std::int32_t>{9, 7, 4, 0});
  // Along a middle axis: [2, 3, 2], summed along the 3.
  const std::vector<double> m{1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60};
  CHECK(run(m, 2, 3, 2) == std::vector<double>{1, 10, 3, 30, 6, 60, 4, 40, 9, 90, 15, 150});
}

TEST_CASE("sums in order along the axis: a running sum's bits on any thread count") {
  // inner 300: two blocks of lanes per row; outer 40 x n 5: many work items.
  struct extents {
    std::size_t outer, n, inner;
  };
  for (const extents e : {extents{40, 5, 300}, extents{3, 101, 1}, extents{1, 64, 17}})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        const std::size_t outer = e.outer, n = e.n, inner = e.inner;
        CAPTURE(outer);
        CAPTURE(n);
        CAPTURE(inner);
        CAPTURE(exclusive);
        CAPTURE(reverse);
        const nax::cumsum_options o{exclusive, reverse};
        const std::vector<float> x = values(outer * n * inner);
        const std::vector<float> want = running(x, outer, n, inner, o);
        for (int threads : {1, 2}) {
          const nax_test::threads_guard guard(threads);
          CHECK(nax_test::same_bits(run(x, outer, n, inner, o), want));
        }
      }
}

TEST_CASE("NaN and infinities carry on; -0 is kept; integers wrap") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> y = run(std::vector<float>{1, inf, -inf, 2}, 1, 4, 1);
  CHECK(y[0] == 1);
  CHECK(y[1] == inf);
  CHECK(std::isnan(y[2]));
  CHECK(std::isnan(y[3]));
  const std::vector<float> z = run(std::vector<float>{-0.0f, 1}, 1, 2, 1);
  CHECK(std::signbit(z[0]));  // the first sum is the element itself, as numpy.cumsum's
  const std::vector<float> e = run(std::vector<float>{-0.0f, 1}, 1, 2, 1, {.exclusive = true});
  CHECK_FALSE(std::signbit(e[0]));  // the empty sum is +0
  CHECK(std::signbit(e[1]));
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  CHECK(run(std::vector<std::int32_t>{big, 1}, 1, 2, 1)[1] ==
        std::numeric_limits<std::int32_t>::min());
}

TEST_CASE("empty extents write nothing") {
  std::vector<float> y{5};
  nax::kernels::cumsum<float>(nullptr, y.data(), 1, 0, 1, {});
  nax::kernels::cumsum<float>(nullptr, y.data(), 0, 3, 1, {});
  nax::kernels::cumsum<float>(nullptr, y.data(), 2, 3, 0, {});
  CHECK(y[0] == 5);
}
