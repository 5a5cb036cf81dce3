// The plan: a pure function of shape, element type, threads and caches.
#include <nax/kernels/gemm_plan.hpp>

#include <sstream>

#include <doctest/doctest.h>

namespace {
nax::cache_sizes machine() {
  nax::cache_sizes c;
  c.l1d = 48 * 1024;
  c.l2 = 2 * 1024 * 1024;
  c.l3 = 105 * 1024 * 1024;
  c.l3_sharing = 2;
  return c;
}
}  // namespace

TEST_CASE("blocking follows the caches and fits them") {
  using tile = nax::kernels::register_tile<float>;
  const auto p = nax::kernels::plan_gemm<float>(4096, 4096, 4096, 1, 1, machine());
  CHECK(p.algorithm == nax::kernels::gemm_algorithm::packed);
  CHECK(p.kc % 8 == 0);
  CHECK(p.mc % tile::mr == 0);
  CHECK(p.nc % tile::nr == 0);
  // A sliver of A in 3/8 of L1, a panel of B in half of L2, a block of A in a quarter of this
  // core's share of L3 (here all of m at once). The register tile depends on the CPU (mr = 12
  // rows with AVX-512, 6 with AVX2), so the expected blocks are computed from it: the most
  // that fits, then evened out over the extent in whole units (1024 = 344 + 344 + 336 along k
  // with mr = 12, not 384 + 384 + 256).
  const auto round_up = [](std::size_t x, std::size_t unit) {
    return (x + unit - 1) / unit * unit;
  };
  const auto even = [&](std::size_t extent, std::size_t most, std::size_t unit) {
    const std::size_t blocks = (extent + most - 1) / most;
    return round_up((extent + blocks - 1) / blocks, unit);
  };
  const std::size_t kc_most = 18 * 1024 / (tile::mr * sizeof(float)) / 8 * 8;
  CHECK(tile::mr * p.kc * sizeof(float) <= 18 * 1024);
  CHECK(p.kc == even(4096, kc_most, 8));
  CHECK(p.kc * p.nc * sizeof(float) <= 1024 * 1024);
  CHECK(p.mc * p.kc * sizeof(float) <= 105 * 1024 * 1024 / 2 / 4);
  CHECK(p.mc == round_up(4096, tile::mr));
  const auto evened = nax::kernels::plan_gemm<float>(1024, 1024, 1024, 1, 1, machine());
  CHECK(evened.kc == even(1024, kc_most, 8));
  if (tile::mr == 12) CHECK(evened.kc == 344);
  CHECK(evened.nc == 512);
  CHECK(evened.mc == round_up(1024, tile::mr));
  // A smaller L1 gives a smaller kc.
  auto small = machine();
  small.l1d = 16 * 1024;
  CHECK(nax::kernels::plan_gemm<float>(4096, 4096, 4096, 1, 1, small).kc < p.kc);
  // Blocks never exceed the problem (rounded to whole tiles).
  const auto q = nax::kernels::plan_gemm<float>(10, 20, 30, 1, 1, machine());
  CHECK(q.mc == 12);
  CHECK(q.kc == 32);
  CHECK(q.nc == 32);
}

TEST_CASE("small products skip packing; large or deep ones pack; vectors stream the matrix") {
  using nax::kernels::gemm_algorithm;
  const auto algorithm = [](std::size_t m, std::size_t n, std::size_t k) {
    return nax::kernels::plan_gemm<float>(m, n, k, 1, 1, machine()).algorithm;
  };
  CHECK(algorithm(64, 64, 64) == gemm_algorithm::small);
  CHECK(algorithm(1024, 1024, 1024) == gemm_algorithm::packed);
  CHECK(algorithm(8, 8, 5000) == gemm_algorithm::packed);  // k > kc
  CHECK(algorithm(1, 3072, 768) == gemm_algorithm::gemv);
  CHECK(algorithm(3072, 1, 768) == gemm_algorithm::gemv);
  CHECK(algorithm(2, 3072, 768) == gemm_algorithm::packed);
}

TEST_CASE("threads split the batch, else the larger of m and n; tiny products stay serial") {
  const auto batched = nax::kernels::plan_gemm<float>(64, 64, 64, 64, 2, machine());
  CHECK(batched.threads_batch == 2);
  CHECK(batched.tasks() == 2);
  const auto tall = nax::kernels::plan_gemm<float>(4096, 1024, 1024, 1, 2, machine());
  CHECK(tall.threads_m == 2);
  CHECK(tall.threads_n == 1);
  const auto wide = nax::kernels::plan_gemm<float>(32, 3072, 768, 1, 2, machine());
  CHECK(wide.threads_n == 2);
  CHECK(wide.threads_m == 1);
  const auto row = nax::kernels::plan_gemm<float>(1, 3072, 768, 1, 2, machine());
  CHECK(row.threads_n == 2);
  const auto column = nax::kernels::plan_gemm<float>(3072, 1, 768, 1, 2, machine());
  CHECK(column.threads_m == 2);
  CHECK(nax::kernels::plan_gemm<float>(8, 8, 8, 1, 2, machine()).tasks() == 1);
  CHECK(nax::kernels::plan_gemm<float>(4096, 4096, 4096, 1, 1, machine()).tasks() == 1);
}

TEST_CASE("matrix-vector products split by the bytes of their matrix, along the long side") {
  using nax::kernels::plan_gemm;
  // A batch-1 MLP layer: 6 MiB of matrix but only 3.1 MFLOP, memory-bound.
  const auto mlp = plan_gemm<float>(1, 2048, 768, 1, 2, machine());
  CHECK(mlp.algorithm == nax::kernels::gemm_algorithm::gemv);
  CHECK(mlp.threads_n == 2);
  CHECK(mlp.threads_m == 1);
  CHECK(mlp.tasks() == 2);
  const auto column = plan_gemm<float>(2048, 1, 768, 1, 2, machine());
  CHECK(column.threads_m == 2);
  CHECK(column.threads_n == 1);
  // 64 KiB: one thread. At most 512 KiB per task: 512 KiB stays on one, 1 MiB takes two.
  CHECK(plan_gemm<float>(1, 256, 64, 1, 2, machine()).tasks() == 1);
  CHECK(plan_gemm<float>(1, 512, 256, 1, 2, machine()).tasks() == 1);
  CHECK(plan_gemm<float>(1, 1024, 256, 1, 2, machine()).tasks() == 2);
  CHECK(plan_gemm<double>(1, 512, 256, 1, 2, machine()).tasks() == 2);  // bytes, not elements
  // Batches count together, and split by batch when there are enough of them.
  const auto batched = plan_gemm<float>(1, 512, 256, 4, 2, machine());
  CHECK(batched.threads_batch == 2);
  CHECK(batched.threads_n == 1);
  // More threads: as many tasks as the bytes allow, but no more than tiles of the long side.
  CHECK(plan_gemm<float>(1, 2048, 768, 1, 8, machine()).threads_n == 8);
  CHECK(plan_gemm<float>(1, 2048, 256, 1, 8, machine()).threads_n == 4);  // 2 MiB
  CHECK(plan_gemm<float>(1, 16, 100000, 1, 8, machine()).tasks() == 1);   // one tile
}

TEST_CASE("the same inputs give the same plan, and it prints") {
  const auto a = nax::kernels::plan_gemm<double>(300, 200, 100, 3, 2, machine());
  const auto b = nax::kernels::plan_gemm<double>(300, 200, 100, 3, 2, machine());
  CHECK(a.mc == b.mc);
  CHECK(a.kc == b.kc);
  CHECK(a.nc == b.nc);
  CHECK(a.tasks() == b.tasks());
  std::ostringstream os;
  os << a;
  CHECK(os.str().find("3 x 300x200x100") != std::string::npos);
  CHECK(a.flops() == 2.0 * 300 * 200 * 100 * 3);
}
