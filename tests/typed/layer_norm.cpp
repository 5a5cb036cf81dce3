// layer_norm against a double reference: short and long rows, inner and outer axes, gamma and
// beta as tensors, scalars or expressions, data with a large offset (where sum-of-squares
// cancels), and its errors; the same bits from an expression, a tensor and the runtime's kernel.
#include <nax/typed/layer_norm.hpp>

#include <nax/exec/cache_info.hpp>
#include <nax/kernels/rows.hpp>
#include <nax/typed/elementwise.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

using r_ax = nax::axis<"r">;
using h_ax = nax::axis<"h">;

namespace {
template <class T>
void fill_wave(T& t, double offset, double scale) {
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data()[i] = static_cast<typename T::value_type>(offset + scale * std::sin(0.61 * double(i)));
}
}  // namespace

TEST_CASE_TEMPLATE("layer_norm along the inner axis", T, float, double) {
  for (std::size_t n : {1, 7, 33, 1024, 3001}) {
    nax::tensor<T, r_ax, h_ax> x(r_ax{4}, h_ax{n});
    fill_wave(x, 1000.0,
              1.0);  // mean 1000, spread 1: naive E[x^2] - E[x]^2 loses everything in float
    nax::tensor<T, h_ax> gamma(h_ax{n}), beta(h_ax{n});
    fill_wave(gamma, 1.0, 0.5);
    fill_wave(beta, 0.0, 0.25);
    const T eps = T(1e-5);
    auto y = nax::layer_norm<h_ax>(x, gamma, beta, eps);
    for (std::size_t r = 0; r < 4; ++r) {
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < n; ++j) mean += x(r, j);
      mean /= double(n);
      for (std::size_t j = 0; j < n; ++j) var += (x(r, j) - mean) * (x(r, j) - mean);
      var /= double(n);
      for (std::size_t j = 0; j < n; ++j) {
        const double want = (x(r, j) - mean) / std::sqrt(var + double(eps)) * gamma(j) + beta(j);
        CHECK(y(r, j) == doctest::Approx(want).epsilon(std::is_same_v<T, float> ? 2e-3 : 1e-9));
      }
    }
  }
}

TEST_CASE("layer_norm over an outer axis, with scalar and expression parameters") {
  nax::tensor<double, r_ax, h_ax> x(r_ax{19}, h_ax{3});
  fill_wave(x, 5, 2);
  nax::tensor<double, r_ax> g(r_ax{19});
  fill_wave(g, 1, 0.1);
  auto y = nax::layer_norm<r_ax>(x * 1.0, g * 2.0, 0.5, 1e-6);
  for (std::size_t j = 0; j < 3; ++j) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < 19; ++i) mean += x(i, j);
    mean /= 19;
    for (std::size_t i = 0; i < 19; ++i) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= 19;
    for (std::size_t i = 0; i < 19; ++i)
      CHECK(y(i, j) == doctest::Approx((x(i, j) - mean) / std::sqrt(var + 1e-6) * 2 * g(i) + 0.5)
                           .epsilon(1e-10));
  }
}

TEST_CASE("layer_norm's epsilon is 1e-5 unless given, as the builder's") {
  nax::tensor<float, r_ax, h_ax> x(r_ax{4}, h_ax{6});
  fill_wave(x, 1e-3, 1e-3);  // a variance near epsilon: another epsilon changes every element
  const nax::tensor<float, r_ax, h_ax> by_default = nax::layer_norm<h_ax>(x, 1.0f, 0.0f),
                                       given = nax::layer_norm<h_ax>(x, 1.0f, 0.0f, 1e-5f),
                                       other = nax::layer_norm<h_ax>(x, 1.0f, 0.0f, 1e-4f);
  CHECK(std::memcmp(by_default.data(), given.data(), x.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(by_default.data(), other.data(), x.size() * sizeof(float)) != 0);
}

TEST_CASE("layer_norm errors name the parameter and the axis") {
  nax::tensor<float, r_ax, h_ax> x(r_ax{2}, h_ax{8});
  x.fill(1);
  nax::tensor<float, h_ax> short_gamma(h_ax{7}), beta(h_ax{8});
  CHECK_THROWS_WITH_AS(nax::layer_norm<h_ax>(x, short_gamma, beta, 1e-5f),
                       "layer_norm: axis 'h' of gamma has 7 but x has 8", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::layer_norm<h_ax>(x, 1.0f, short_gamma, 1e-5f),
                       "layer_norm: axis 'h' of beta has 7 but x has 8", nax::shape_error);
}

TEST_CASE("an output larger than the cache share (streamed) has the bits of a small one") {
  // As in typed/softmax.cpp: rows of 100 and 1024 floats, enough of them for non-temporal stores.
  const nax::cache_sizes& caches = nax::machine_caches();
  for (const std::size_t n : {100, 1024}) {
    CAPTURE(n);
    const std::size_t rows = caches.l3 / caches.l3_sharing / (n * sizeof(float)) + 3;
    nax::tensor<float, r_ax, h_ax> x(r_ax{rows}, h_ax{n});
    fill_wave(x, 3.0, 2.0);
    nax::tensor<float, h_ax> gamma(h_ax{n}), beta(h_ax{n});
    fill_wave(gamma, 1.0, 0.5);
    fill_wave(beta, 0.0, 0.25);
    const auto big = nax::layer_norm<h_ax>(x, gamma, beta, 1e-5f);
    for (const std::size_t first : {std::size_t{0}, rows / 2, rows - 3}) {
      nax::tensor<float, r_ax, h_ax> part(r_ax{3}, h_ax{n});
      std::memcpy(part.data(), x.data() + first * n, 3 * n * sizeof(float));
      const auto small = nax::layer_norm<h_ax>(part, gamma, beta, 1e-5f);
      CHECK(std::memcmp(small.data(), big.data() + first * n, 3 * n * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("layer_norm of an expression, of a tensor and by the runtime's kernel: the same bits") {
  // Rows read at simd::row_vec's width: x * 2 as two of the expression's vectors joined where
  // row_vec is wider, the tensor and the runtime's pointer with one load. Row lengths around the
  // widths, and past the cached-row threshold (Welford's pass).
  for (const std::size_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1024, 9000}) {
    CAPTURE(n);
    nax::tensor<float, r_ax, h_ax> x(r_ax{3}, h_ax{n});
    fill_wave(x, 3.0, 2.0);
    nax::tensor<float, h_ax> gamma(h_ax{n}), beta(h_ax{n});
    fill_wave(gamma, 1.0, 0.5);
    fill_wave(beta, 0.0, 0.25);
    const nax::tensor<float, r_ax, h_ax> t = x * 2.0f;
    const auto from_expression = nax::layer_norm<h_ax>(x * 2.0f, gamma * 1.0f, beta, 1e-5f);
    const auto from_tensor = nax::layer_norm<h_ax>(t, gamma, beta, 1e-5f);
    CHECK(std::memcmp(from_expression.data(), from_tensor.data(), 3 * n * sizeof(float)) == 0);
    const std::size_t ext[] = {3, n};
    const nax::kernels::rows_plan p = nax::kernels::plan_rows(nax::dtype::f32, ext, 1);
    std::vector<float> runtime(3 * n);
    nax::kernels::run_layer_norm(p, t.data(), gamma.data(), beta.data(), 1e-5f, runtime.data());
    CHECK(std::memcmp(from_tensor.data(), runtime.data(), 3 * n * sizeof(float)) == 0);
  }
}
