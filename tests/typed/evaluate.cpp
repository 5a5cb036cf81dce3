// The evaluator: destination order, permutations, aliasing, views, errors, empty and threaded runs.
#include <nax/typed/evaluate.hpp>

#include <nax/exec/cache_info.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/tensor.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using c_ax = nax::axis<"c", 5>;

namespace {
template <class T>
void iota(T& t, float start = 0) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = start + static_cast<float>(i);
}
}  // namespace

TEST_CASE("assigning to a permutation of the expression's axes") {
  nax::tensor<float, a_ax, b_ax, c_ax> x(a_ax{3}, b_ax{4});
  iota(x);
  nax::tensor<float, c_ax, a_ax, b_ax> y = x * 2;
  nax::tensor<float, b_ax, c_ax, a_ax> z(a_ax{3}, b_ax{4});
  z = x + 1;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 5; ++k) {
        CHECK(y(k, i, j) == 2 * x(i, j, k));
        CHECK(z(j, k, i) == x(i, j, k) + 1);
      }
  auto e = nax::eval(x - 1);
  static_assert(std::is_same_v<decltype(e), nax::tensor<float, a_ax, b_ax, c_ax>>);
  CHECK(e(2, 3, 4) == x(2, 3, 4) - 1);
}

TEST_CASE("an expression is broadcast over destination axes it lacks") {
  nax::tensor<float, a_ax, c_ax> y(a_ax{3});
  nax::tensor<float, c_ax> v;
  iota(v, 10);
  y = v * 2;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < 5; ++k) CHECK(y(i, k) == 2 * v(k));
  y = 7.0f;
  for (float e : y) CHECK(e == 7);
}

TEST_CASE("an operand lacking the destination's innermost axis, which has extent 1") {
  // y lacks b, one value per row of b; with b of extent 1 the rows are still b's (not a's).
  nax::tensor<float, a_ax, b_ax> x(a_ax{37}, b_ax{1});
  nax::tensor<float, a_ax> y(a_ax{37});
  iota(x);
  iota(y, 100);
  nax::tensor<float, a_ax, b_ax> z = x * y + 1.0f;
  for (std::size_t i = 0; i < 37; ++i) CHECK(z(i, 0) == x(i, 0) * y(i) + 1.0f);
}

TEST_CASE("in place: x = x * 2 + 1 reads each element where it writes it") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{7}, b_ax{33});
  iota(x);
  x = x * 2 + 1;
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x.data()[i] == 2 * float(i) + 1);
  x += x;
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x.data()[i] == 2 * (2 * float(i) + 1));
}

TEST_CASE("reading the destination through another layout goes through a temporary") {
  // x = transpose(x) on a square matrix: without a temporary the second half would read
  // elements already overwritten.
  const std::size_t n = 9;
  nax::tensor<float, a_ax, b_ax> x(a_ax{n}, b_ax{n});
  iota(x);
  const nax::tensor<float, a_ax, b_ax> before = x;
  nax::tensor_view<float, a_ax, b_ax> transposed(
      x.data(), x.extents(), std::array<std::ptrdiff_t, 2>{1, std::ptrdiff_t(n)});
  x = transposed + 0.0f;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) CHECK(x(i, j) == before(j, i));

  // A shifted view: y[i] = y[i + 1] over the first n - 1 elements, then the whole row doubled.
  nax::tensor<float, a_ax> y(a_ax{n});
  iota(y);
  nax::tensor_view<float, a_ax> head(y.data(), a_ax{n - 1}), tail(y.data() + 1, a_ax{n - 1});
  head = tail * 10.0f;
  for (std::size_t i = 0; i + 1 < n; ++i) CHECK(y(i) == 10 * float(i + 1));
}

TEST_CASE("strided views as operands and as destinations") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{4}, b_ax{6});
  iota(x);
  // Every other column of x, as a view with stride 2 on b.
  nax::tensor_view<const float, a_ax, b_ax> odd(x.data() + 1,
                                                nax::extents<a_ax, b_ax>(a_ax{4}, b_ax{3}),
                                                std::array<std::ptrdiff_t, 2>{6, 2});
  nax::tensor<float, a_ax, b_ax> y = odd * 1.0f;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(y(i, j) == x(i, 2 * j + 1));
  nax::tensor<float, a_ax, b_ax> out(a_ax{4}, b_ax{6});
  out.fill(-1);
  nax::tensor_view<float, a_ax, b_ax> even(out.data(), nax::extents<a_ax, b_ax>(a_ax{4}, b_ax{3}),
                                           std::array<std::ptrdiff_t, 2>{6, 2});
  even = y + 100.0f;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 6; ++j) CHECK(out(i, j) == (j % 2 ? -1 : x(i, j + 1) + 100));
}

TEST_CASE("a mismatched destination throws and is left untouched") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{2}, b_ax{3}), y(a_ax{2}, b_ax{4});
  iota(x);
  y.fill(5);
  CHECK_THROWS_WITH_AS(y = x * 2, "axis 'b' mismatch: destination has 4, expression has 3",
                       nax::shape_error);
  for (float e : y) CHECK(e == 5);
  // y += x is y = y + x: the operands disagree before the destination is considered.
  CHECK_THROWS_WITH_AS(y += x, "axis 'b' mismatch: 4 vs 3", nax::shape_error);
  for (float e : y) CHECK(e == 5);
}

TEST_CASE("empty tensors and rank 0") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{0}, b_ax{3});
  nax::tensor<float, a_ax, b_ax> y = x * 2 + 1;
  CHECK(y.size() == 0);
  nax::tensor<float> s;
  s = 3.0f;
  CHECK(s() == 3);
  nax::tensor<float> t = s * 2 + 1;
  CHECK(t() == 7);
}

TEST_CASE(
    "an output larger than this core's share of the last-level cache is streamed, correctly") {
  const nax::cache_sizes& caches = nax::machine_caches();
  const std::size_t n = caches.l3 / caches.l3_sharing / sizeof(float) + 1001;  // odd: a tail
  nax::tensor<float, a_ax> x(a_ax{n});
  iota(x);
  nax::tensor<float, a_ax> y = x * 2 + 1;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += y(i) != 2 * x(i) + 1;
  CHECK(wrong == 0);
  // Offset by one element: no store is aligned, so each falls back to an ordinary store.
  nax::tensor_view<float, a_ax> shifted(y.data() + 1, a_ax{n - 1});
  shifted = nax::slice<a_ax>(x, 0, n - 1) * 3;
  for (std::size_t i = 1; i < n; ++i) wrong += y(i) != 3 * x(i - 1);
  CHECK(wrong == 0);
}

TEST_CASE("threaded and single-threaded runs agree, for dense and for short rows") {
  const std::size_t saved = nax::num_threads();
  for (std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
    nax::set_num_threads(threads);
    nax::tensor<float, a_ax, b_ax> dense(a_ax{1}, b_ax{300007}), short_rows(a_ax{100003}, b_ax{3});
    iota(dense);
    iota(short_rows);
    nax::tensor<float, a_ax, b_ax> d = dense * 2 + 1, s = short_rows * 2 + 1;
    for (std::size_t i = 0; i < d.size(); ++i) REQUIRE(d.data()[i] == 2 * float(i) + 1);
    for (std::size_t i = 0; i < s.size(); ++i) REQUIRE(s.data()[i] == 2 * float(i) + 1);
    // A permuted destination with both axes long: the gather path.
    nax::tensor<float, a_ax, b_ax> m(a_ax{301}, b_ax{257});
    iota(m);
    nax::tensor<float, b_ax, a_ax> t = m + 0.0f;
    for (std::size_t i = 0; i < 301; ++i)
      for (std::size_t j = 0; j < 257; ++j) REQUIRE(t(j, i) == m(i, j));
  }
  nax::set_num_threads(saved);
}
