// The tiles of the GEMM kernel against a naive product in double: edge tiles of fewer rows
// (every row count up to two register tiles), the small path reading A and B in place (and
// packing what it cannot read: a last tile of odd rows, a narrow last sliver of B), tiles
// stored straight from the accumulators across K blocks, with beta, bias and activation.
#include <nax/kernels/gemm.hpp>

#include "gemm_check.hpp"

#include <cmath>
#include <cstddef>

#include <nax/ops/elementwise.hpp>

#include <doctest/doctest.h>

using namespace gemm_test;

TEST_CASE_TEMPLATE("edge tiles: every row count, packed and small", T, float, double) {
  using tile = nax::kernels::register_tile<T>;
  for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::packed}) {
    CAPTURE(to_string(algorithm));
    for (std::size_t m = 1; m <= 2 * tile::mr + 1; ++m) {
      CAPTURE(m);
      for (std::size_t n : {tile::nr, tile::nr + 3}) {
        CAPTURE(n);
        auto plan = nax::kernels::plan_gemm<T>(m, n, 37, 1, 1);
        plan.algorithm = algorithm;
        check_product<T>(m, n, 37, 1, {}, T(1), T(0), nax::kernels::epilogue<T>{}, identity, plan);
      }
    }
  }
}

TEST_CASE_TEMPLATE("small path: A in place with strided rows, B in place or packed", T, float,
                   double) {
  using tile = nax::kernels::register_tile<T>;
  // Last tiles of rows an edge kernel covers exactly (read in place) and of other counts
  // (packed); B full slivers only, with a narrow last one, and transposed (packed).
  for (std::size_t m :
       {tile::mr / 3, tile::mr / 3 * 2, tile::mr + 1, 2 * tile::mr - 1, std::size_t(64)}) {
    CAPTURE(m);
    for (std::size_t n : {2 * tile::nr, 2 * tile::nr + 5}) {
      CAPTURE(n);
      for (bool transpose_b : {false, true}) {
        CAPTURE(transpose_b);
        auto plan = nax::kernels::plan_gemm<T>(m, n, 29, 1, 1);
        REQUIRE(plan.algorithm == gemm_algorithm::small);
        check_product<T>(m, n, 29, 1, {false, transpose_b, 3}, T(1.5), T(0.5),
                         nax::kernels::epilogue<T>{}, identity, plan);
      }
    }
  }
  // A batch of them, on one thread and split by batch over two.
  for (std::size_t threads : {1u, 2u}) {
    const auto plan = nax::kernels::plan_gemm<T>(64, 64, 64, 5, threads);
    REQUIRE(plan.algorithm == gemm_algorithm::small);
    check_product<T>(64, 64, 64, 5, {}, T(1), T(0), nax::kernels::epilogue<T>{}, identity, plan);
  }
}

TEST_CASE_TEMPLATE("whole tiles stored from registers across K blocks, with the epilogue", T, float,
                   double) {
  using tile = nax::kernels::register_tile<T>;
  const std::size_t m = 2 * tile::mr, n = 2 * tile::nr, k = 150;
  const auto col_bias = filled<T>(n, 7), row_bias = filled<T>(m, 8);
  for (auto algorithm : {gemm_algorithm::small, gemm_algorithm::packed}) {
    CAPTURE(to_string(algorithm));
    auto plan = nax::kernels::plan_gemm<T>(m, n, k, 1, 1);
    plan.algorithm = algorithm;
    if (algorithm == gemm_algorithm::packed) plan.kc = 64;  // three K blocks
    check_product<T>(m, n, k, 1, {}, T(0.5), T(-2),
                     nax::kernels::epilogue<T>{row_bias.data(), true}, identity, plan);
    check_product<T>(m, n, k, 1, {}, T(1), T(1), nax::kernels::epilogue<T>{col_bias.data(), false},
                     identity, plan);
    check_product<T>(
        m, n, k, 1, {}, T(2), T(0),
        nax::kernels::epilogue<T, nax::ops::relu>{col_bias.data(), false},
        [](double x) { return x > 0 ? x : 0.0; }, plan);
  }
}
