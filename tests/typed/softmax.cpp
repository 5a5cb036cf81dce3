// softmax and log_softmax against a double reference: short and long rows (both algorithms),
// over the inner and an outer axis, on expressions, with values that overflow a naive exp; the
// same bits from an expression, a tensor and the runtime's kernel; NaNs and signed zeros.
#include <nax/typed/softmax.hpp>

#include <nax/exec/cache_info.hpp>
#include <nax/kernels/rows.hpp>
#include <nax/typed/elementwise.hpp>

#include "support/bits.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using r_ax = nax::axis<"r">;
using n_ax = nax::axis<"n">;

namespace {

template <class T>
void fill_wave(T& t, double scale) {
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data()[i] = static_cast<typename T::value_type>(scale * std::sin(0.37 * double(i) + 1.0));
}

// Reference along n for row r of a [r, n] tensor, times 2 (the tests pass x * 2).
std::vector<double> reference(const nax::tensor<float, r_ax, n_ax>& x, std::size_t r, bool log) {
  const std::size_t n = x.extent<n_ax>();
  double m = -INFINITY, s = 0;
  for (std::size_t j = 0; j < n; ++j) m = std::max(m, 2.0 * x(r, j));
  for (std::size_t j = 0; j < n; ++j) s += std::exp(2.0 * x(r, j) - m);
  std::vector<double> out(n);
  for (std::size_t j = 0; j < n; ++j)
    out[j] = log ? 2.0 * x(r, j) - m - std::log(s) : std::exp(2.0 * x(r, j) - m) / s;
  return out;
}

}  // namespace

TEST_CASE("softmax and log_softmax along the inner axis, short and long rows") {
  for (std::size_t n : {1, 7, 33, 1000, 10007}) {
    nax::tensor<float, r_ax, n_ax> x(r_ax{3}, n_ax{n});
    fill_wave(x, 300);  // exp(600) overflows float: only a stable softmax survives
    auto p = nax::softmax<n_ax>(x * 2);
    auto lp = nax::log_softmax<n_ax>(x * 2);
    static_assert(std::is_same_v<decltype(p), nax::tensor<float, r_ax, n_ax>>);
    for (std::size_t r = 0; r < 3; ++r) {
      const auto want = reference(x, r, false), want_log = reference(x, r, true);
      double total = 0;
      for (std::size_t j = 0; j < n; ++j) {
        CHECK(p(r, j) == doctest::Approx(want[j]).epsilon(1e-5));
        CHECK(lp(r, j) == doctest::Approx(want_log[j]).epsilon(1e-5));
        total += p(r, j);
      }
      CHECK(total == doctest::Approx(1).epsilon(1e-4));
    }
  }
}

TEST_CASE("softmax along an outer axis matches the transposed inner one") {
  nax::tensor<double, r_ax, n_ax> x(r_ax{37}, n_ax{5});
  fill_wave(x, 3);
  auto outer = nax::softmax<r_ax>(x);
  nax::tensor<double, n_ax, r_ax> t = x + 0.0;
  auto inner = nax::softmax<r_ax>(t);
  for (std::size_t i = 0; i < 37; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      CHECK(outer(i, j) == doctest::Approx(inner(j, i)).epsilon(1e-12));
}

TEST_CASE("softmax along a strided axis has the bits of contiguous rows") {
  // Rows not at unit stride are staged whole (typed/rows.hpp): the kernel reads each row from a
  // buffer and writes one, scattered after; it must give what it gives on contiguous rows.
  nax::tensor<double, r_ax, n_ax> x(r_ax{37}, n_ax{5});
  fill_wave(x, 3);
  const nax::tensor<double, n_ax, r_ax> t = x + 0.0;  // x's transpose: rows along r contiguous
  const nax::tensor<double, r_ax, n_ax> outer = nax::softmax<r_ax>(x * 1.0);
  const nax::tensor<double, n_ax, r_ax> inner = nax::softmax<r_ax>(t * 1.0);
  const nax::tensor<double, r_ax, n_ax> logs = nax::log_softmax<r_ax>(x);
  const nax::tensor<double, n_ax, r_ax> inner_logs = nax::log_softmax<r_ax>(t);
  for (std::size_t i = 0; i < 37; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      CHECK(nax_test::same_bits(outer(i, j), inner(j, i)));
      CHECK(nax_test::same_bits(logs(i, j), inner_logs(j, i)));
    }
}

TEST_CASE("edge rows: constants, -inf entries, empty") {
  nax::tensor<float, r_ax, n_ax> x(r_ax{2}, n_ax{9});
  x.fill(4);
  x(1, 3) = -INFINITY;
  auto p = nax::softmax<n_ax>(x);
  for (std::size_t j = 0; j < 9; ++j) CHECK(p(0, j) == doctest::Approx(1.0 / 9));
  CHECK(p(1, 3) == 0);
  CHECK(p(1, 0) == doctest::Approx(1.0 / 8));
  nax::tensor<float, r_ax, n_ax> empty(r_ax{0}, n_ax{4});
  CHECK(nax::softmax<n_ax>(empty).size() == 0);
}

TEST_CASE("an output larger than the cache share (streamed) has the bits of a small one") {
  // Rows of 100 floats (misaligned to the vector at most row starts) and of 1024, enough rows
  // for the output to be written with non-temporal stores; each row must come out as it does
  // from a tensor of three rows (written through the caches).
  const nax::cache_sizes& caches = nax::machine_caches();
  for (const std::size_t n : {100, 1024}) {
    CAPTURE(n);
    const std::size_t rows = caches.l3 / caches.l3_sharing / (n * sizeof(float)) + 3;
    nax::tensor<float, r_ax, n_ax> x(r_ax{rows}, n_ax{n});
    fill_wave(x, 4.0);
    const auto big = nax::softmax<n_ax>(x * 2.0f), big_log = nax::log_softmax<n_ax>(x * 2.0f);
    for (const std::size_t first : {std::size_t{0}, rows / 2, rows - 3}) {
      nax::tensor<float, r_ax, n_ax> part(r_ax{3}, n_ax{n});
      std::memcpy(part.data(), x.data() + first * n, 3 * n * sizeof(float));
      const auto small = nax::softmax<n_ax>(part * 2.0f);
      const auto small_log = nax::log_softmax<n_ax>(part * 2.0f);
      CHECK(std::memcmp(small.data(), big.data() + first * n, 3 * n * sizeof(float)) == 0);
      CHECK(std::memcmp(small_log.data(), big_log.data() + first * n, 3 * n * sizeof(float)) == 0);
    }
  }
}

namespace {
// Row r of a and b hold the same bits.
template <class A, class B>
bool same_row(const A& a, const B& b, std::size_t r, std::size_t n) {
  return std::memcmp(a.data() + r * n, b.data() + r * n, n * sizeof(*a.data())) == 0;
}
}  // namespace

TEST_CASE("an expression's rows (vectors joined), a tensor's (wide loads): the same bits") {
  // The row kernels read at simd::row_vec's width: a tensor's row one load per vector, an
  // expression's as two of its own vectors joined where row_vec is wider (AVX-512). Every row
  // length around the vector widths, and rows past the cached-row threshold (one online pass).
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 70; ++n) lengths.push_back(n);
  lengths.insert(lengths.end(), {1000, 1029, 9000});
  for (const std::size_t n : lengths) {
    CAPTURE(n);
    nax::tensor<float, r_ax, n_ax> x(r_ax{3}, n_ax{n});
    fill_wave(x, 40);
    const nax::tensor<float, r_ax, n_ax> t = x * 2.0f;
    const auto from_expression = nax::softmax<n_ax>(x * 2.0f);
    const auto from_tensor = nax::softmax<n_ax>(t);
    const auto log_expression = nax::log_softmax<n_ax>(x * 2.0f);
    const auto log_tensor = nax::log_softmax<n_ax>(t);
    for (std::size_t r = 0; r < 3; ++r) {
      CHECK(same_row(from_expression, from_tensor, r, n));
      CHECK(same_row(log_expression, log_tensor, r, n));
    }
  }
}

TEST_CASE("the typed softmax and the runtime's row kernel give the same bits") {
  for (const std::size_t n : {1, 15, 16, 17, 33, 100, 1024, 9000}) {
    CAPTURE(n);
    nax::tensor<float, r_ax, n_ax> x(r_ax{5}, n_ax{n});
    fill_wave(x, 30);
    const auto typed = nax::softmax<n_ax>(x);
    const std::size_t ext[] = {5, n};
    const nax::kernels::rows_plan p = nax::kernels::plan_rows(nax::dtype::f32, ext, 1);
    std::vector<float> runtime(5 * n);
    nax::kernels::run_softmax(p, x.data(), runtime.data());
    CHECK(std::memcmp(typed.data(), runtime.data(), 5 * n * sizeof(float)) == 0);
  }
}

TEST_CASE("a NaN makes its row NaN; padding that evaluates to NaN changes nothing") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::size_t n : {5, 16, 17, 40, 1000}) {
    CAPTURE(n);
    nax::tensor<float, r_ax, n_ax> x(r_ax{3}, n_ax{n});
    fill_wave(x, 1);
    x = x + 3.0f;  // in [2, 4]
    x(1, n / 2) = nan;
    const auto p = nax::softmax<n_ax>(x);
    for (std::size_t j = 0; j < n; ++j) CHECK(std::isnan(p(1, j)));
    for (const std::size_t r : {0, 2}) {
      double total = 0;
      for (std::size_t j = 0; j < n; ++j) total += p(r, j);
      CHECK(total == doctest::Approx(1).epsilon(1e-5));
    }
    // sqrt(x - 2) is NaN in a padded lane (a leaf pads with 1): the row's max and its exps are
    // still those of the tensor sqrt(x - 2), whose padding is 1.
    const nax::tensor<float, r_ax, n_ax> t = nax::sqrt(x - 2.0f);
    const auto from_expression = nax::softmax<n_ax>(nax::sqrt(x - 2.0f));
    const auto from_tensor = nax::softmax<n_ax>(t);
    CHECK(same_row(from_expression, from_tensor, 0, n));
    CHECK(same_row(from_expression, from_tensor, 2, n));
    for (std::size_t j = 0; j < n; ++j) CHECK(std::isnan(from_expression(1, j)));
  }
}

TEST_CASE("a row whose max is both +0 and -0: log_softmax is -log(n) either way") {
  for (const std::size_t n : {2, 17, 40}) {
    CAPTURE(n);
    nax::tensor<float, r_ax, n_ax> x(r_ax{2}, n_ax{n});
    for (std::size_t j = 0; j < n; ++j) {
      x(0, j) = j % 3 == 0 ? -0.0f : 0.0f;
      x(1, j) = j % 2 == 0 ? 0.0f : -0.0f;
    }
    const auto lp = nax::log_softmax<n_ax>(x);
    const auto p = nax::softmax<n_ax>(x);
    const float want = -std::log(static_cast<float>(n));
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t j = 0; j < n; ++j) {
        CHECK(lp(r, j) == doctest::Approx(want).epsilon(1e-6));
        CHECK(p(r, j) == p(0, 0));
        CHECK(!std::signbit(p(r, j)));
      }
  }
}
