// The GEMM kernel against a naive product in double: odd and square sizes, both algorithms
// (packed, small, gemv), transposed and strided operands, panel sources, batches, alpha/beta,
// epilogues, threads.
#include <nax/kernels/gemm.hpp>

#include "gemm_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <nax/ops/elementwise.hpp>

#include <doctest/doctest.h>

#include "support/threads.hpp"

namespace {

using namespace gemm_test;

// A panel source over a matrix in memory, read only through read_run, along rows or columns.
template <class T>
struct run_source {
  matrix_ref<const T> m;
  bool rows;
  run_source batch(std::size_t b) const { return {m.batch(b), rows}; }
  run_source at(std::size_t i, std::size_t j) const { return {m.at(i, j), rows}; }
  bool row_runs() const { return rows; }
  void read_run(std::size_t i, std::size_t j, std::size_t len, T* out) const {
    for (std::size_t t = 0; t < len; ++t) out[t] = rows ? m(i, j + t) : m(i + t, j);
  }
};
static_assert(nax::kernels::panel_source<run_source<float>, float>);

}  // namespace

TEST_CASE_TEMPLATE("gemm equals the naive product over odd and square sizes", T, float, double) {
  for (std::size_t s : {1u, 2u, 3u, 7u, 17u, 63u, 64u, 65u, 127u, 257u}) {
    CAPTURE(s);
    for (std::size_t threads : {1u, 2u}) {
      const auto plan = nax::kernels::plan_gemm<T>(s, s, s, 1, threads);
      check_product<T>(s, s, s, 1, {}, T(1), T(0), nax::kernels::epilogue<T>{}, identity, plan);
    }
  }
  // Rectangular, including the shapes of an MLP scaled down.
  for (const auto& mnk : {std::array<std::size_t, 3>{1, 300, 77},
                          {32, 97, 45},
                          {129, 13, 300},
                          {5, 2000, 3},
                          {300, 1, 1}}) {
    const std::size_t m = mnk[0], n = mnk[1], k = mnk[2];
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    const auto plan = nax::kernels::plan_gemm<T>(m, n, k, 1, 2);
    check_product<T>(m, n, k, 1, {}, T(1), T(0), nax::kernels::epilogue<T>{}, identity, plan);
  }
}

TEST_CASE_TEMPLATE("packed and small, every layout: transposed and strided operands", T, float,
                   double) {
  for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::packed}) {
    for (int mask = 0; mask < 4; ++mask) {
      const layout l{(mask & 1) != 0, (mask & 2) != 0,
                     algorithm == gemm_algorithm::packed ? 3u : 5u};
      CAPTURE(to_string(algorithm));
      CAPTURE(mask);
      for (std::size_t s : {7u, 64u, 131u}) {
        auto plan = nax::kernels::plan_gemm<T>(s, s + 3, s + 1, 1, 1);
        plan.algorithm = algorithm;
        check_product<T>(s, s + 3, s + 1, 1, l, T(1), T(0), nax::kernels::epilogue<T>{}, identity,
                         plan);
      }
    }
  }
}

TEST_CASE_TEMPLATE("gemv: a row vector times a matrix, a matrix times a column vector", T, float,
                   double) {
  for (int mask = 0; mask < 4; ++mask) {
    const layout l{(mask & 1) != 0, (mask & 2) != 0, 2};
    CAPTURE(mask);
    // k around the unrolling by 4 and the vector width; n past one L1 chunk of the result.
    for (std::size_t k : {1u, 3u, 4u, 17u, 64u, 771u}) {
      CAPTURE(k);
      for (std::size_t len : {1u, 5u, 37u, 3000u}) {
        CAPTURE(len);
        for (std::size_t threads : {1u, 2u}) {
          const auto row = nax::kernels::plan_gemm<T>(1, len, k, 1, threads);
          REQUIRE(row.algorithm == gemm_algorithm::gemv);
          check_product<T>(1, len, k, 1, l, T(1), T(0), nax::kernels::epilogue<T>{}, identity, row);
          const auto col = nax::kernels::plan_gemm<T>(len, 1, k, 1, threads);
          REQUIRE(col.algorithm == gemm_algorithm::gemv);
          check_product<T>(len, 1, k, 1, l, T(2), T(0.5), nax::kernels::epilogue<T>{}, identity,
                           col);
        }
      }
    }
  }
  // alpha, beta, bias per column (row vector) or per row (column vector), activation; batches.
  const auto bias = filled<T>(300, 9);
  const nax::kernels::epilogue<T, nax::ops::tanh> per_col{bias.data(), false};
  const nax::kernels::epilogue<T, nax::ops::tanh> per_row{bias.data(), true};
  const auto tanh_ref = [](double x) { return std::tanh(x); };
  check_product<T>(1, 300, 50, 3, {}, T(0.5), T(2), per_col, tanh_ref,
                   nax::kernels::plan_gemm<T>(1, 300, 50, 3, 2));
  check_product<T>(300, 1, 50, 3, {}, T(0.5), T(2), per_row, tanh_ref,
                   nax::kernels::plan_gemm<T>(300, 1, 50, 3, 2));
  check_product<T>(1, 300, 50, 1, {}, T(1), T(0), per_row, tanh_ref,
                   nax::kernels::plan_gemm<T>(1, 300, 50, 1, 1));
  check_product<T>(300, 1, 50, 1, {}, T(1), T(0), per_col, tanh_ref,
                   nax::kernels::plan_gemm<T>(300, 1, 50, 1, 1));
  // gemv asked of a product with m, n > 1 runs packed.
  auto plan = nax::kernels::plan_gemm<T>(9, 10, 11, 1, 1);
  plan.algorithm = gemm_algorithm::gemv;
  check_product<T>(9, 10, 11, 1, {}, T(1), T(0), nax::kernels::epilogue<T>{}, identity, plan);
}

TEST_CASE_TEMPLATE(
    "gemv on 2 and 3 threads: the 1-thread result bit for bit, and the naive product", T, float,
    double) {
  const nax_test::threads_guard restore;  // the count put back even when a REQUIRE fails
  // A batch-1 MLP layer, long side odd (a tail after the last whole vector), C's old values
  // scaled in and a bias: every path of gemv() and update_row(). A matrix with contiguous rows
  // along the result is split by parts of its rows (gemv_by_parts): k = 777 ends in a short
  // part, and 3 threads take 13 parts unevenly.
  const std::size_t len = 2047;
  for (const std::size_t k : {768u, 777u})
    for (const std::size_t threads : {2u, 3u})
      for (int column = 0; column < 2; ++column)
        for (int transposed = 0; transposed < 2; ++transposed) {
          CAPTURE(k);
          CAPTURE(threads);
          CAPTURE(column);
          CAPTURE(transposed);
          nax::set_num_threads(threads);
          const auto x = filled<T>(k, 1), mat = filled<T>(k * len, 2), bias = filled<T>(len, 3);
          const std::size_t m = column ? len : 1, n = column ? 1 : len;
          const auto ld = static_cast<std::ptrdiff_t>(transposed ? len : k);
          // The matrix is len x k stored by rows (transposed: by columns); the vector is 1 x k.
          matrix_ref<const T> matrix(mat.data(), ld, 1),
              vector(x.data(), static_cast<std::ptrdiff_t>(k), 1);
          if (transposed) matrix = matrix_ref<const T>(mat.data(), 1, ld);
          const matrix_ref<const T> a = column ? matrix : vector;
          const matrix_ref<const T> b = column ? vector.transposed() : matrix.transposed();
          const nax::kernels::epilogue<T> epi{bias.data(), column != 0};
          const auto run = [&](std::size_t threads) {
            const auto plan = nax::kernels::plan_gemm<T>(m, n, k, 1, threads);
            REQUIRE(plan.tasks() == threads);
            std::vector<T> c = filled<T>(len, 4);
            nax::kernels::gemm(plan, a, b,
                               matrix_ref<T>(c.data(), static_cast<std::ptrdiff_t>(n), 1), T(1),
                               T(0.5), epi);
            return c;
          };
          const std::vector<T> one = run(1), two = run(threads), c0 = filled<T>(len, 4);
          std::size_t differ = 0, wrong = 0;
          for (std::size_t i = 0; i < len; ++i) {
            differ += one[i] != two[i];
            double dot = 0, mag = 0;
            for (std::size_t p = 0; p < k; ++p) {
              const double t = double(x[p]) * double(matrix(i, p));
              dot += t;
              mag += std::abs(t);
            }
            const double want = dot + 0.5 * double(c0[i]) + double(bias[i]);
            const double tol =
                4 * double(std::numeric_limits<T>::epsilon()) * (double(k) + 4) * (mag + 2);
            wrong += !(std::abs(double(two[i]) - want) <= tol);
          }
          CHECK(differ == 0);
          CHECK(wrong == 0);
        }
}

TEST_CASE_TEMPLATE(
    "a matrix times a column vector: a block of the matrix's rows alone gives "
    "the bits of those rows of the whole",
    T, float, double) {
  // gemv() computes a row's dot product in a group of four or alone depending on where the range
  // of rows starts and ends; either way its bits are the same (a pipelined tile of rows,
  // runtime/pipeline.hpp, runs a block of rows alone). k below and above the vector width.
  for (std::size_t k : {6u, 37u}) {
    CAPTURE(k);
    const std::size_t m = 23;
    const auto x = filled<T>(m * k, 1), v = filled<T>(k, 2);
    const matrix_ref<const T> vector(v.data(), 1, 1);  // k x 1
    auto product = [&](std::size_t r0, std::size_t rows) {
      const auto plan = nax::kernels::plan_gemm<T>(rows, 1, k, 1, 1);
      REQUIRE(plan.algorithm == gemm_algorithm::gemv);
      std::vector<T> c(rows);
      nax::kernels::gemm(plan,
                         matrix_ref<const T>(x.data() + r0 * k, static_cast<std::ptrdiff_t>(k), 1),
                         vector, matrix_ref<T>(c.data(), 1, 1));
      return c;
    };
    const std::vector<T> whole = product(0, m);
    for (std::size_t rows : {2u, 3u, 5u, 7u})
      for (std::size_t r0 = 0; r0 + rows <= m; r0 += rows) {
        CAPTURE(rows);
        CAPTURE(r0);
        const std::vector<T> block = product(r0, rows);
        CHECK(std::equal(block.begin(), block.end(), whole.begin() + std::ptrdiff_t(r0)));
      }
  }
}

TEST_CASE_TEMPLATE("panel sources pack the same panels as matrices", T, float, double) {
  for (std::size_t s : {1u, 13u, 70u}) {
    CAPTURE(s);
    const std::size_t m = s + 5, n = s + 33, k = s + 2, batch = 2;
    const auto a = filled<T>(batch * m * k, 1), b = filled<T>(batch * k * n, 2);
    const matrix_ref<const T> ar(a.data(), static_cast<std::ptrdiff_t>(k), 1,
                                 static_cast<std::ptrdiff_t>(m * k));
    const matrix_ref<const T> br(b.data(), 1, static_cast<std::ptrdiff_t>(k),
                                 static_cast<std::ptrdiff_t>(k * n));  // transposed
    auto plan = nax::kernels::plan_gemm<T>(m, n, k, batch, 2);
    plan.algorithm = gemm_algorithm::packed;
    plan.kc = 16;  // several K blocks
    std::vector<T> want(batch * m * n), got(batch * m * n);
    const auto c_of = [&](std::vector<T>& c) {
      return matrix_ref<T>(c.data(), static_cast<std::ptrdiff_t>(n), 1,
                           static_cast<std::ptrdiff_t>(m * n));
    };
    nax::kernels::gemm(plan, ar, br, c_of(want));
    for (int mask = 0; mask < 4; ++mask) {
      CAPTURE(mask);
      std::fill(got.begin(), got.end(), T(7));
      nax::kernels::gemm(plan, run_source<T>{ar, (mask & 1) != 0},
                         run_source<T>{br, (mask & 2) != 0}, c_of(got));
      CHECK(got == want);
    }
    // A source with a matrix operand, and with every algorithm asked (the source is packed).
    for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::gemv}) {
      plan.algorithm = algorithm;
      std::fill(got.begin(), got.end(), T(7));
      nax::kernels::gemm(plan, ar, run_source<T>{br, true}, c_of(got));
      CHECK(got == want);
    }
  }
}

TEST_CASE_TEMPLATE("K blocking: k larger than kc accumulates across blocks", T, float, double) {
  auto plan = nax::kernels::plan_gemm<T>(37, 41, 1000, 1, 1);
  plan.kc = 128;  // 8 K blocks, the last partial
  plan.mc = 18;
  plan.nc = 32;
  REQUIRE(plan.algorithm == gemm_algorithm::packed);
  check_product<T>(37, 41, 1000, 1, {}, T(0.5), T(-2), nax::kernels::epilogue<T>{}, identity, plan);
}

TEST_CASE_TEMPLATE("alpha and beta; beta = 0 does not read C", T, float, double) {
  for (const auto& ab : {std::array<T, 2>{1, 1}, {2, 0.5}, {-1, 0}, {0, 3}}) {
    const T alpha = ab[0], beta = ab[1];
    CAPTURE(alpha);
    CAPTURE(beta);
    for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::packed}) {
      auto plan = nax::kernels::plan_gemm<T>(19, 35, 23, 1, 1);
      plan.algorithm = algorithm;
      check_product<T>(19, 35, 23, 1, {}, alpha, beta, nax::kernels::epilogue<T>{}, identity, plan);
    }
  }
  // NaN in C is ignored with beta = 0.
  std::vector<T> a(4 * 3, T(1)), b(3 * 5, T(1)), c(4 * 5, std::numeric_limits<T>::quiet_NaN());
  nax::kernels::gemm(nax::kernels::plan_gemm<T>(4, 5, 3),
                     nax::kernels::matrix_ref<const T>(a.data(), 3, 1),
                     nax::kernels::matrix_ref<const T>(b.data(), 5, 1),
                     nax::kernels::matrix_ref<T>(c.data(), 5, 1));
  for (T x : c) CHECK(x == T(3));
}

TEST_CASE_TEMPLATE("epilogue: bias per column or per row, then an activation", T, float, double) {
  const auto col_bias = filled<T>(200, 7), row_bias = filled<T>(200, 8);
  for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::packed}) {
    CAPTURE(to_string(algorithm));
    auto plan = nax::kernels::plan_gemm<T>(29, 37, 300, 1, 2);
    plan.algorithm = algorithm;
    plan.kc = algorithm == gemm_algorithm::packed
                  ? 64
                  : plan.kc;  // several K blocks: bias and activation once, at the end
    nax::kernels::epilogue<T, nax::ops::relu> relu_cols{col_bias.data(), false};
    check_product<T>(
        29, 37, 300, 1, {}, T(1), T(0), relu_cols, [](double x) { return x > 0 ? x : 0.0; }, plan);
    nax::kernels::epilogue<T, nax::ops::tanh> tanh_rows{row_bias.data(), true};
    check_product<T>(
        29, 37, 300, 1, {}, T(0.1), T(1), tanh_rows, [](double x) { return std::tanh(x); }, plan);
    nax::kernels::epilogue<T> bias_only{col_bias.data(), false};
    check_product<T>(29, 37, 300, 1, {}, T(1), T(0), bias_only, identity, plan);
  }
}

TEST_CASE_TEMPLATE("batched products, split over threads by batch or inside one", T, float,
                   double) {
  for (std::size_t batch : {1u, 3u, 8u}) {
    CAPTURE(batch);
    for (std::size_t threads : {1u, 2u}) {
      const auto plan = nax::kernels::plan_gemm<T>(64, 64, 64, batch, threads);
      check_product<T>(64, 64, 64, batch, {true, false, 1}, T(1), T(0), nax::kernels::epilogue<T>{},
                       identity, plan);
    }
  }
}

TEST_CASE_TEMPLATE("zero-size products", T, float, double) {
  std::vector<T> a(12, T(1)), b(12, T(1)), c(16, T(5));
  const nax::kernels::matrix_ref<const T> ar(a.data(), 3, 1), br(b.data(), 4, 1);
  const nax::kernels::matrix_ref<T> cr(c.data(), 4, 1);
  // k = 0: C = beta C (an empty sum), bias and activation still applied.
  nax::kernels::gemm(nax::kernels::plan_gemm<T>(4, 4, 0), ar, br, cr, T(1), T(2));
  for (T x : c) CHECK(x == T(10));
  const T bias[4] = {-100, 1, 2, 3};
  nax::kernels::gemm(nax::kernels::plan_gemm<T>(4, 4, 0), ar, br, cr, T(1), T(0),
                     nax::kernels::epilogue<T, nax::ops::relu>{bias, false});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(c[i * 4 + j] == (j == 0 ? T(0) : bias[j]));
  // m = 0 or n = 0: nothing is written.
  std::fill(c.begin(), c.end(), T(5));
  nax::kernels::gemm(nax::kernels::plan_gemm<T>(0, 4, 3), ar, br, cr);
  nax::kernels::gemm(nax::kernels::plan_gemm<T>(4, 0, 3), ar, br, cr);
  for (T x : c) CHECK(x == T(5));
}
