#pragma once
// The choices a matrix product makes before it runs: the algorithm (packed panels, the small
// path that reads the operands in place, or a matrix-vector product), the cache blocking and the
// thread split. They are a
// pure function of the shape, the element type and the machine, computed once by plan_gemm
// (the runtime layer keeps one per specialization) and reused for every call of that shape.

#include <algorithm>
#include <cstddef>
#include <ostream>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/exec/cache_info.hpp>
#include <nax/exec/planning_threads.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// The instruction set of the GEMM micro-kernel: AVX-512 where the compiler flags enable it
/// (it doubles the FMA throughput of a core that has two 512-bit FMA units, as measured here:
/// 220 against 110 GFLOP/s), else the elementwise kernels' (nax/simd/arch.hpp). GEMM is
/// compute-bound, unlike the elementwise kernels that stay at 256 bits.
#if XSIMD_WITH_AVX512F && !defined(NAX_SIMD_ARCH)
using gemm_arch = xsimd::avx512f;
#else
using gemm_arch = simd::arch;
#endif

template <class T>
using gemm_vec = xsimd::batch<T, gemm_arch>;

/// The register tile of the micro-kernel: mr rows of C by nr = 2 vectors of columns (6 x 16
/// floats with AVX2: 12 accumulators, 2 vectors of B and a broadcast of A in 16 registers;
/// with AVX-512's 32 registers, 12 rows: 24 accumulators).
template <class T>
struct register_tile {
  static constexpr std::size_t mr = gemm_vec<T>::size * sizeof(T) == 64 ? 12 : 6;
  static constexpr std::size_t vectors = 2;
  static constexpr std::size_t nr = vectors * gemm_vec<T>::size;
};

/// How a product runs. `packed`: panels of A and B packed, cache-blocked (any shape, any
/// operand). `small`: register tiles read A and B in place (everything fits in L2). `gemv`:
/// m = 1 or n = 1, a matrix-vector product that streams the matrix once (packing it would read
/// it twice for one use of each element). gemm() runs `packed` when the operands cannot be read
/// in place, and when `gemv` is asked of a product with m and n both above 1.
enum class gemm_algorithm { packed, small, gemv };

inline const char* to_string(gemm_algorithm a) {
  switch (a) {
    case gemm_algorithm::packed: return "packed";
    case gemm_algorithm::small: return "small";
    case gemm_algorithm::gemv: return "gemv";
  }
  return "?";
}

/// The product C[batch][m x n] = A[batch][m x k] B[batch][k x n] as planned.
struct gemm_plan {
  std::size_t m = 0, n = 0, k = 0, batch = 1;
  gemm_algorithm algorithm = gemm_algorithm::packed;
  /// Block sizes: an mr x kc sliver of A stays in L1 and a kc x nc panel of B in L2 while
  /// the slivers of B stream past; an mc x kc block of A is packed at once (into L3).
  std::size_t mc = 0, kc = 0, nc = 0;
  /// Threads over batches, over row blocks and over column blocks (their product is the
  /// number of tasks; each packs its own panels).
  std::size_t threads_batch = 1, threads_m = 1, threads_n = 1;

  std::size_t tasks() const { return threads_batch * threads_m * threads_n; }
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
};

inline std::ostream& operator<<(std::ostream& os, const gemm_plan& p) {
  return os << "gemm_plan{" << p.batch << " x " << p.m << "x" << p.n << "x" << p.k << ", "
            << to_string(p.algorithm) << ", mc " << p.mc << " kc " << p.kc << " nc " << p.nc
            << ", threads " << p.threads_batch << "x" << p.threads_m << "x" << p.threads_n << "}";
}

namespace detail {
inline std::size_t round_down(std::size_t x, std::size_t to) { return std::max(to, x / to * to); }
inline std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }
}  // namespace detail

/// Products below this many flops per task run on one thread (waking the pool costs more).
inline constexpr double gemm_flops_per_task = 2.0e6;

/// Matrix-vector products below this many bytes of matrix per task run on one thread. They are
/// bound by the bytes they stream (each element is used once), not by their flops. Measured on
/// the 2-core AMD EPYC, warm, 1 x k by k x n floats: a 512 KiB matrix runs as fast on 2 threads
/// as on 1 (5.2 against 5.5 us), 1 MiB 1.5 times as fast (8.1 against 12.2 us), 2 MiB and more
/// 1.8 to 2 times.
inline constexpr double gemv_bytes_per_task = 512.0 * 1024;

/// Plans C = A B for T elements on `threads` threads and the given caches.
template <class T>
gemm_plan plan_gemm(std::size_t m, std::size_t n, std::size_t k, std::size_t batch = 1,
                    std::size_t threads = nax::detail::planning_threads(),
                    const cache_sizes& caches = machine_caches()) {
  using tile = register_tile<T>;
  gemm_plan p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  // kc: the mr x kc sliver of A, reused by every sliver of B streaming past it, fills 3/8 of
  // L1 (the rest holds those slivers and C's tile); nc: the kc x nc panel of B half of L2; mc:
  // an mc x kc block of A packed at once, a quarter of this core's share of L3 (so A is packed
  // once per K block, not once per panel of B). Each is then evened out over the blocks the
  // extent needs (1024 = 2 x 512, not 672 + 352). Long slivers of A mean fewer passes over C.
  const std::size_t l1 = caches.l1d ? caches.l1d : 32 * 1024;
  const std::size_t l2 = caches.l2 ? caches.l2 : 256 * 1024;
  const std::size_t l3 = caches.l3 / std::max<std::size_t>(1, caches.l3_sharing);
  const auto even = [](std::size_t extent, std::size_t most, std::size_t unit) {
    const std::size_t e = std::max<std::size_t>(extent, 1), blocks = (e + most - 1) / most;
    return detail::round_up((e + blocks - 1) / blocks, unit);
  };
  p.kc = even(k, detail::round_down(l1 * 3 / 8 / (tile::mr * sizeof(T)), 8), 8);
  p.nc = even(n, detail::round_down(l2 / 2 / (p.kc * sizeof(T)), tile::nr), tile::nr);
  p.mc = even(m, detail::round_down(std::max(l3, l2) / 4 / (p.kc * sizeof(T)), tile::mr), tile::mr);
  // A row or column vector times a matrix: each element of the matrix is used once. Small
  // products: packing costs as much as it saves when every operand already fits in L2.
  if (m == 1 || n == 1)
    p.algorithm = gemm_algorithm::gemv;
  else if ((m * k + k * n + m * n) * sizeof(T) <= l2 / 2 && k <= p.kc)
    p.algorithm = gemm_algorithm::small;

  const bool gemv = p.algorithm == gemm_algorithm::gemv;
  const std::size_t long_side = std::max(m, n);
  const double work =
      gemv ? double(long_side) * double(k) * double(batch) * sizeof(T) / gemv_bytes_per_task
           : p.flops() / gemm_flops_per_task;
  const std::size_t tasks =
      std::max<std::size_t>(1, std::min<std::size_t>(threads, static_cast<std::size_t>(work)));
  if (tasks == 1) return p;
  if (batch >= tasks) {
    p.threads_batch = tasks;
    return p;
  }
  if (gemv) {  // split the long side of the vector result, in whole nr tiles (as run_gemm does)
    (m == 1 ? p.threads_n : p.threads_m) = std::min(tasks, (long_side + tile::nr - 1) / tile::nr);
    return p;
  }
  // Split the larger of m and n (each task packs the other operand whole, so the smaller one
  // is the one packed twice), as far as it has register tiles to give.
  const std::size_t m_tiles = (m + tile::mr - 1) / tile::mr,
                    n_tiles = (n + tile::nr - 1) / tile::nr;
  if (m_tiles * tile::mr >= n_tiles * tile::nr)
    p.threads_m = std::min(tasks, m_tiles);
  else
    p.threads_n = std::min(tasks, n_tiles);
  return p;
}

}  // namespace nax::kernels

#ifdef NAX_RUNTIME_TEMPLATE
namespace nax::NAX_ISA::kernels {
NAX_RUNTIME_TEMPLATE gemm_plan plan_gemm<float>(std::size_t, std::size_t, std::size_t, std::size_t,
                                                std::size_t, const cache_sizes&);
NAX_RUNTIME_TEMPLATE gemm_plan plan_gemm<double>(std::size_t, std::size_t, std::size_t, std::size_t,
                                                 std::size_t, const cache_sizes&);
}  // namespace nax::kernels
#endif
