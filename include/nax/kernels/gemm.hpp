#pragma once
// C = act(alpha A B + beta C + bias), batched, float or double, on the persistent thread pool.
//
// The loop nest is the one of GotoBLAS/BLIS: for each kc x nc panel of B (packed into slivers of
// nr columns) and each mc x kc block of A (packed into slivers of mr rows), an mr x nr register
// tile of C accumulates one sliver of each with vector FMAs (a sliver of A held in L1 while those
// of B stream past from L2). Packing reads any layout (strided, transposed, or computed on the
// fly by a panel source: an expression), so the micro-kernel streams unit-stride, aligned memory.
// Small products skip packing: the micro-kernel reads a row-major A and B where they are. A row
// vector times a matrix (or a matrix times a column vector) streams the matrix once instead. The
// epilogue (beta, bias and an activation) is applied to each tile after its last K block, while it
// is still in L1.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/kernels/gemm_plan.hpp>
#include <nax/kernels/matrix_ref.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// What is applied to each element of C after the product: C = act(alpha AB + beta C + bias).
/// `bias` (optional) has n entries (one per column) or, with `bias_per_row`, m entries.
/// Activation is an op of nax/ops/elementwise.hpp with a unary `apply` (void: none); it runs on the
/// tile in registers, with the same body as the elementwise evaluator's.
template <class T, class Activation = void>
struct epilogue {
  using activation = Activation;
  const T* bias = nullptr;
  bool bias_per_row = false;
};

/// An operand the kernel cannot read in place but packs run by run: a matrix whose elements are
/// computed when read (nax::dot packs an expression's panels this way, without a temporary).
/// `batch(b)` and `at(i, j)` give sub-matrices like matrix_ref's; `read_run(i, j, len, out)` writes
/// `len` elements from (i, j) to out, along j when `row_runs()`, else along i. A source is copied
/// for each task (by batch()), so read_run may keep state.
template <class S, class T>
concept panel_source = requires(const S& s, std::size_t i, T* out) {
  { s.batch(i) } -> std::convertible_to<S>;
  { s.at(i, i) } -> std::convertible_to<S>;
  { s.row_runs() } -> std::convertible_to<bool>;
  s.read_run(i, i, i, out);
};

namespace detail {

template <class T>
using vec = gemm_vec<T>;

template <class S, class T>
inline constexpr bool is_matrix_ref_v = std::is_same_v<S, matrix_ref<const T>>;

// Per-thread packing buffers, 64-byte aligned, grown on demand and reused across calls.
template <class T, int Which>
struct pack_tag;
template <class T, int Which>
T* pack_buffer(std::size_t elements) {
  return reinterpret_cast<T*>(
      nax::detail::thread_scratch<pack_tag<T, Which>>(elements * sizeof(T)));
}

#if XSIMD_WITH_SSE2
// 16-byte vectors: four floats or two doubles, the square blocks pack_a transposes.
template <class T>
using quad = xsimd::batch<T, xsimd::sse2>;

/// d[p * mr + i] = a(i, p) for the q = quad<T>::size rows i < q of a (contiguous along p) and
/// p < kc: q x q blocks transposed in registers (a scalar loop stores 4x slower, and the
/// packing of A showed as 12% of a 1024^3 product).
template <class T>
void transpose_rows(const matrix_ref<const T>& a, std::size_t kc, T* d) {
  constexpr std::size_t mr = register_tile<T>::mr, q = quad<T>::size;
  using Q = quad<T>;
  std::size_t p = 0;
  for (; p + q <= kc; p += q) {
    if constexpr (q == 4) {
      const Q r0 = Q::load_unaligned(&a(0, p)), r1 = Q::load_unaligned(&a(1, p)),
              r2 = Q::load_unaligned(&a(2, p)), r3 = Q::load_unaligned(&a(3, p));
      using D = xsimd::batch<double, xsimd::sse2>;
      const D t0 = xsimd::bitwise_cast<D>(xsimd::zip_lo(r0, r1)),
              t1 = xsimd::bitwise_cast<D>(xsimd::zip_hi(r0, r1)),
              t2 = xsimd::bitwise_cast<D>(xsimd::zip_lo(r2, r3)),
              t3 = xsimd::bitwise_cast<D>(xsimd::zip_hi(r2, r3));
      xsimd::bitwise_cast<Q>(xsimd::zip_lo(t0, t2)).store_unaligned(d + p * mr);
      xsimd::bitwise_cast<Q>(xsimd::zip_hi(t0, t2)).store_unaligned(d + (p + 1) * mr);
      xsimd::bitwise_cast<Q>(xsimd::zip_lo(t1, t3)).store_unaligned(d + (p + 2) * mr);
      xsimd::bitwise_cast<Q>(xsimd::zip_hi(t1, t3)).store_unaligned(d + (p + 3) * mr);
    } else {
      const Q r0 = Q::load_unaligned(&a(0, p)), r1 = Q::load_unaligned(&a(1, p));
      xsimd::zip_lo(r0, r1).store_unaligned(d + p * mr);
      xsimd::zip_hi(r0, r1).store_unaligned(d + (p + 1) * mr);
    }
  }
  for (; p < kc; ++p)
    for (std::size_t i = 0; i < q; ++i) d[p * mr + i] = a(i, p);
}
#endif

/// Packs rows [0, mc) x columns [0, kc) of a into slivers of mr rows: sliver s holds, for each
/// p, its mr values of column p side by side (rows past mc are zero).
template <class T>
void pack_a(const matrix_ref<const T>& a, std::size_t mc, std::size_t kc, T* dst) {
  constexpr std::size_t mr = register_tile<T>::mr;
  for (std::size_t ir = 0; ir < mc; ir += mr) {
    const std::size_t rows = std::min(mr, mc - ir);
    T* d = dst + ir * kc;
    if (rows < mr) std::fill(d, d + mr * kc, T(0));
    if (a.cs == 1) {  // rows of A are contiguous along k: a transpose
      std::size_t i = 0;
#if XSIMD_WITH_SSE2
      for (; i + quad<T>::size <= rows; i += quad<T>::size)
        transpose_rows(a.at(ir + i, 0), kc, d + i);
#endif
      for (; i < rows; ++i) {
        const T* src = &a(ir + i, 0);
        for (std::size_t p = 0; p < kc; ++p) d[p * mr + i] = src[p];
      }
    } else {  // columns contiguous (a transposed operand) or any stride
      for (std::size_t p = 0; p < kc; ++p)
        for (std::size_t i = 0; i < rows; ++i) d[p * mr + i] = a(ir + i, p);
    }
  }
}

/// Packs rows [0, kc) x columns [0, nc) of b into slivers of nr columns: sliver s holds, for
/// each p, its nr values of row p side by side (columns past nc are zero).
template <class T>
void pack_b(const matrix_ref<const T>& b, std::size_t kc, std::size_t nc, T* dst) {
  constexpr std::size_t nr = register_tile<T>::nr, w = vec<T>::size;
  if (b.cs == 1) {
    // Row by row: each row of the panel is read once, sequentially (sliver by sliver, the
    // reads of a wide B step a whole row apart, which no prefetcher follows: packing took
    // half of a 32 x 768 x 3072 product).
    const std::size_t full = nc / nr * nr, rest = nc - full;
    for (std::size_t p = 0; p < kc; ++p) {
      const T* src = &b(p, 0);
      for (std::size_t jr = 0; jr < full; jr += nr)
        for (std::size_t v = 0; v < nr; v += w)
          vec<T>::load_unaligned(src + jr + v).store_aligned(dst + jr * kc + p * nr + v);
      if (rest) {
        T* d = dst + full * kc + p * nr;
        std::copy(src + full, src + nc, d);
        std::fill(d + rest, d + nr, T(0));
      }
    }
    return;
  }
  for (std::size_t jr = 0; jr < nc; jr += nr) {
    const std::size_t cols = std::min(nr, nc - jr);
    T* d = dst + jr * kc;
    if (b.rs == 1) {  // columns contiguous (a transposed operand)
      if (cols < nr) std::fill(d, d + nr * kc, T(0));
      for (std::size_t j = 0; j < cols; ++j) {
        const T* src = &b(0, jr + j);
        for (std::size_t p = 0; p < kc; ++p) d[p * nr + j] = src[p];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p)
        for (std::size_t j = 0; j < nr; ++j) d[p * nr + j] = j < cols ? b(p, jr + j) : T(0);
    }
  }
}

/// pack_a for a panel source: runs along k go through a small buffer; runs along m land in place.
template <class T, class S>
void pack_a(const S& a, std::size_t mc, std::size_t kc, T* dst) {
  constexpr std::size_t mr = register_tile<T>::mr;
  T* const run = a.row_runs() ? pack_buffer<T, 2>(kc) : nullptr;
  for (std::size_t ir = 0; ir < mc; ir += mr) {
    const std::size_t rows = std::min(mr, mc - ir);
    T* d = dst + ir * kc;
    if (rows < mr) std::fill(d, d + mr * kc, T(0));
    if (run) {
      for (std::size_t i = 0; i < rows; ++i) {
        a.read_run(ir + i, 0, kc, run);
        for (std::size_t p = 0; p < kc; ++p) d[p * mr + i] = run[p];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) a.read_run(ir, p, rows, d + p * mr);
    }
  }
}

/// pack_b for a panel source: runs along n land in place; runs along k go through a buffer.
template <class T, class S>
void pack_b(const S& b, std::size_t kc, std::size_t nc, T* dst) {
  constexpr std::size_t nr = register_tile<T>::nr;
  T* const run = b.row_runs() ? nullptr : pack_buffer<T, 2>(kc);
  for (std::size_t jr = 0; jr < nc; jr += nr) {
    const std::size_t cols = std::min(nr, nc - jr);
    T* d = dst + jr * kc;
    if (cols < nr) std::fill(d, d + nr * kc, T(0));
    if (!run) {
      for (std::size_t p = 0; p < kc; ++p) b.read_run(p, jr, cols, d + p * nr);
    } else {
      for (std::size_t j = 0; j < cols; ++j) {
        b.read_run(0, jr + j, kc, run);
        for (std::size_t p = 0; p < kc; ++p) d[p * nr + j] = run[p];
      }
    }
  }
}

/// acc = the Rows x nr tile of A B over kc steps. A is packed (a sliver of mr rows, of which
/// the first Rows are used: edge tiles of fewer rows run fewer FMAs), or (the small path) read
/// in place by rows a_rs apart, at unit stride along k. B is packed, or read in place by rows
/// b_rs apart, at unit stride along n.
template <class T, std::size_t Rows, bool PackedA, bool PackedB>
[[gnu::always_inline]] inline void micro_kernel(
    std::size_t kc, const T* a, std::ptrdiff_t a_rs, const T* b, std::ptrdiff_t b_rs,
    vec<T> (&acc)[register_tile<T>::mr][register_tile<T>::vectors]) {
  using tile = register_tile<T>;
  constexpr std::size_t mr = tile::mr, nv = tile::vectors, w = vec<T>::size;
#pragma GCC unroll 16
  for (std::size_t i = 0; i < Rows; ++i)
    for (std::size_t v = 0; v < nv; ++v) acc[i][v] = vec<T>(T(0));
  for (std::size_t p = 0; p < kc; ++p) {
    const T* bp = PackedB ? b + p * tile::nr : b + static_cast<std::ptrdiff_t>(p) * b_rs;
    vec<T> bv[nv];
#pragma GCC unroll 4
    for (std::size_t v = 0; v < nv; ++v)
      bv[v] = PackedB ? vec<T>::load_aligned(bp + v * w) : vec<T>::load_unaligned(bp + v * w);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < Rows; ++i) {
      const vec<T> ai(PackedA ? a[p * mr + i] : a[static_cast<std::ptrdiff_t>(i) * a_rs + p]);
#pragma GCC unroll 4
      for (std::size_t v = 0; v < nv; ++v) acc[i][v] = xsimd::fma(ai, bv[v], acc[i][v]);
    }
  }
}

/// Asks for the rows of a C tile while the micro-kernel runs: C is read (or written) once per
/// K block, and its lines are usually in memory.
template <class T>
[[gnu::always_inline]] inline void prefetch_tile(const matrix_ref<T>& c, std::size_t rows) {
  constexpr std::size_t row_bytes = register_tile<T>::nr * sizeof(T);
  for (std::size_t i = 0; i < rows; ++i) {
    const char* p = reinterpret_cast<const char*>(c.data + static_cast<std::ptrdiff_t>(i) * c.rs);
    __builtin_prefetch(p, 1, 3);
    __builtin_prefetch(p + row_bytes - 1, 1, 3);
  }
}

/// Asks L2 for a rows x cols matrix of unit stride along rows or columns (else nothing): the
/// next product of a batch of small ones, whose operands come from L3 or memory, while the
/// current one runs.
template <class T>
void prefetch_l2(const matrix_ref<const T>& x, std::size_t rows, std::size_t cols) {
  const bool by_rows = x.cs == 1;
  if (!by_rows && x.rs != 1) return;
  const std::size_t lines = by_rows ? rows : cols, bytes = (by_rows ? cols : rows) * sizeof(T);
  const std::ptrdiff_t step = by_rows ? x.rs : x.cs;
  for (std::size_t l = 0; l < lines; ++l) {
    const char* p = reinterpret_cast<const char*>(x.data + static_cast<std::ptrdiff_t>(l) * step);
    for (std::size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 2);
    __builtin_prefetch(p + bytes - 1, 0, 2);
  }
}

/// What a tile store does besides writing alpha * acc.
template <class T>
struct tile_update {
  T alpha, beta;
  bool first;  // the first K block: C = alpha AB + beta C (C not read when beta is 0)
  bool last;   // the last K block: then bias and activation
};

template <class Act, class X>
X activate(const X& x) {
  if constexpr (std::is_void_v<Act>)
    return x;
  else
    return Act::apply(x);
}

// The new value of C from the product, for one element or one vector alike: alpha times the
// product, plus C (scaled by beta in the first K block; not read when beta is 0 there), then in
// the last K block the bias (`bias` yields it, called only when there is one) and the activation.
template <class Act, class X, class T, class Old, class Bias>
[[gnu::always_inline]] inline X updated(const X& product, const tile_update<T>& u, bool has_bias,
                                        Old old, Bias bias) {
  X x = product * X(u.alpha);
  if (!u.first)
    x += old();
  else if (u.beta != T(0))
    x = simd::fma(X(u.beta), old(), x);
  if (u.last) {
    if (has_bias) x += bias();
    x = activate<Act>(x);
  }
  return x;
}

/// An epilogue with a member row_hook(c, step, n) (the runtime's fused dense: an activation chosen
/// at run time) has it applied to each finished run of a row of C, while the run is in L1.
template <class T, class Epi>
void finish_row(const Epi& epi, T* c, std::ptrdiff_t step, std::size_t n) {
  if constexpr (requires { epi.row_hook(c, step, n); }) epi.row_hook(c, step, n);
}

/// Writes n values of the product (alpha not yet applied) to a row of C at `step`, through
/// updated(): vectors of the elementwise kernels (nax/simd/arch.hpp, the evaluator's op bodies)
/// where C and the bias are contiguous, else one element at a time. The bias of element j is
/// bias[row] (per row) or bias[col0 + j].
template <class T, class Epi>
void update_row(const T* product, T* c, std::ptrdiff_t step, std::size_t n, const tile_update<T>& u,
                const Epi& epi, std::size_t row, std::size_t col0) {
  using out_vec = simd::vec<T>;
  using act = typename Epi::activation;
  const bool has_bias = epi.bias != nullptr;
  std::size_t j = 0;
  if (step == 1) {
    for (; j + out_vec::size <= n; j += out_vec::size)
      updated<act>(
          out_vec::load_unaligned(product + j), u, has_bias,
          [&] { return out_vec::load_unaligned(c + j); },
          [&] {
            return epi.bias_per_row ? out_vec(epi.bias[row])
                                    : out_vec::load_unaligned(epi.bias + col0 + j);
          })
          .store_unaligned(c + j);
  }
  for (; j < n; ++j) {
    T& cj = c[static_cast<std::ptrdiff_t>(j) * step];
    cj = updated<act>(
        product[j], u, has_bias, [&] { return cj; },
        [&] { return epi.bias[epi.bias_per_row ? row : col0 + j]; });
  }
  if (u.last) finish_row(epi, c, step, n);
}

/// Writes the first `rows` (<= Rows) x `cols` of the tile acc to C at (row0, col0) (c points
/// there). Whole rows of a row-major C go straight from the accumulators; the rest (edge
/// columns, strided C, and the activation, which only the last K block applies) through an L1
/// buffer, so the epilogue runs on the elementwise kernels' vectors whatever width the
/// micro-kernel uses (and g++ 12 raises false -Wmaybe-uninitialized errors on AVX-512 min/max).
template <class T, std::size_t Rows, class Epi>
[[gnu::always_inline]] inline void store_tile(
    const vec<T> (&acc)[register_tile<T>::mr][register_tile<T>::vectors], const matrix_ref<T>& c,
    std::size_t rows, std::size_t cols, const tile_update<T>& u, const Epi& epi, std::size_t row0,
    std::size_t col0) {
  using tile = register_tile<T>;
  constexpr std::size_t nv = tile::vectors, nr = tile::nr, w = vec<T>::size;
  if (cols == nr && c.cs == 1 && (std::is_void_v<typename Epi::activation> || !u.last)) {
    const bool has_bias = epi.bias != nullptr;
#pragma GCC unroll 16
    for (std::size_t i = 0; i < Rows; ++i) {
      if (i >= rows) break;
      T* ci = c.data + static_cast<std::ptrdiff_t>(i) * c.rs;
#pragma GCC unroll 4
      for (std::size_t v = 0; v < nv; ++v)
        updated<void>(
            acc[i][v], u, has_bias, [&] { return vec<T>::load_unaligned(ci + v * w); },
            [&] {
              return epi.bias_per_row ? vec<T>(epi.bias[row0 + i])
                                      : vec<T>::load_unaligned(epi.bias + col0 + v * w);
            })
            .store_unaligned(ci + v * w);
      if (u.last) finish_row(epi, ci, 1, nr);  // a run-time activation, while the row is in L1
    }
    return;
  }
  alignas(64) T tmp[Rows][nr];
  for (std::size_t i = 0; i < Rows; ++i)
    for (std::size_t v = 0; v < nv; ++v) acc[i][v].store_aligned(&tmp[i][v * w]);
  for (std::size_t i = 0; i < rows; ++i)
    update_row(tmp[i], c.data + static_cast<std::ptrdiff_t>(i) * c.rs, c.cs, cols, u, epi, row0 + i,
               col0);
}

/// One tile of C: the micro-kernel for Rows rows, then the store.
template <class T, std::size_t Rows, bool PackedA, bool PackedB, class Epi>
[[gnu::always_inline]] inline void tile_of_rows(std::size_t kc, const T* a, std::ptrdiff_t a_rs,
                                                const T* b, std::ptrdiff_t b_rs,
                                                const matrix_ref<T>& c, std::size_t rows,
                                                std::size_t cols, const tile_update<T>& u,
                                                const Epi& epi, std::size_t row0,
                                                std::size_t col0) {
  vec<T> acc[register_tile<T>::mr][register_tile<T>::vectors];
  micro_kernel<T, Rows, PackedA, PackedB>(kc, a, a_rs, b, b_rs, acc);
  store_tile<T, Rows>(acc, c, rows, cols, u, epi, row0, col0);
}

/// The tile at c of `rows` (<= mr) x `cols` (<= nr): an edge of fewer rows runs the kernel of
/// a third or two thirds of mr rows (64 = 5 x 12 + 4 would otherwise waste 8/12 of a tile).
template <class T, bool PackedA, bool PackedB, class Epi>
void compute_tile(std::size_t kc, const T* a, std::ptrdiff_t a_rs, const T* b, std::ptrdiff_t b_rs,
                  const matrix_ref<T>& c, std::size_t rows, std::size_t cols,
                  const tile_update<T>& u, const Epi& epi, std::size_t row0, std::size_t col0) {
  constexpr std::size_t mr = register_tile<T>::mr, third = mr / 3;
  static_assert(mr % 3 == 0, "edge tiles are thirds of the register tile");
  if (rows > 2 * third)
    tile_of_rows<T, mr, PackedA, PackedB>(kc, a, a_rs, b, b_rs, c, rows, cols, u, epi, row0, col0);
  else if (rows > third)
    tile_of_rows<T, 2 * third, PackedA, PackedB>(kc, a, a_rs, b, b_rs, c, rows, cols, u, epi, row0,
                                                 col0);
  else
    tile_of_rows<T, third, PackedA, PackedB>(kc, a, a_rs, b, b_rs, c, rows, cols, u, epi, row0,
                                             col0);
}

// C = act(beta C + bias) for k = 0 (an empty sum).
template <class T, class Epi>
void scale_only(const matrix_ref<T>& c, std::size_t m0, std::size_t m1, std::size_t n0,
                std::size_t n1, T beta, const Epi& epi) {
  const tile_update<T> u{T(0), beta, true, true};
  for (std::size_t i = m0; i < m1; ++i)
    for (std::size_t j = n0; j < n1; ++j) {
      T& cij = c(i, j);
      cij = updated<typename Epi::activation>(
          T(0), u, epi.bias != nullptr, [&] { return cij; },
          [&] { return epi.bias[epi.bias_per_row ? i : j]; });
    }
  for (std::size_t i = m0; i < m1 && n0 < n1; ++i) finish_row(epi, &c(i, n0), c.cs, n1 - n0);
}

/// Rows [m0, m1) x columns [n0, n1) of one product, packed, on the calling thread. For each K
/// block, an mc x kc block of A is packed once (mc is large: the block stays in L3) and each
/// kc x nc panel of B in turn; the panel stays in L2 and each sliver of A (mr x kc) in L1
/// while the slivers of B stream past it (the order of BLIS, whose micro-panels are these
/// transposed). Packing A once per panel of B instead cost 7-8% at 2048^3.
template <class T, class Epi, class A, class B>
void gemm_packed(const gemm_plan& plan, const A& a, const B& b, const matrix_ref<T>& c,
                 std::size_t m0, std::size_t m1, std::size_t n0, std::size_t n1, T alpha, T beta,
                 const Epi& epi) {
  using tile = register_tile<T>;
  constexpr std::size_t mr = tile::mr, nr = tile::nr;
  const std::size_t k = plan.k;
  const std::size_t mc = std::min(plan.mc, round_up(m1 - m0, mr));
  T* const apack = pack_buffer<T, 0>(round_up(mc, mr) * plan.kc);
  T* const bpack = pack_buffer<T, 1>(plan.kc * detail::round_up(plan.nc, nr));
  for (std::size_t pc = 0; pc < k; pc += plan.kc) {
    const std::size_t kb = std::min(plan.kc, k - pc);
    const tile_update<T> u{alpha, beta, pc == 0, pc + kb == k};
    for (std::size_t ic = m0; ic < m1; ic += mc) {
      const std::size_t mb = std::min(mc, m1 - ic);
      pack_a<T>(a.at(ic, pc), mb, kb, apack);
      for (std::size_t jc = n0; jc < n1; jc += plan.nc) {
        const std::size_t nb = std::min(plan.nc, n1 - jc);
        pack_b<T>(b.at(pc, jc), kb, nb, bpack);
        for (std::size_t ir = 0; ir < mb; ir += mr) {
          const std::size_t rows = std::min(mr, mb - ir);
          for (std::size_t jr = 0; jr < nb; jr += nr) {
            if (jr + nr < nb) prefetch_tile(c.at(ic + ir, jc + jr + nr), rows);
            compute_tile<T, true, true>(kb, apack + ir * kb, 0, bpack + jr * kb, 0,
                                        c.at(ic + ir, jc + jr), rows, std::min(nr, nb - jr), u, epi,
                                        ic + ir, jc + jr);
          }
        }
      }
    }
  }
}

/// The same without cache blocking (the whole product fits in L2). A row-major A is read in
/// place (packing it cost a quarter of a 64^3 product), but for a last tile of rows that no
/// edge kernel covers exactly, which is packed (the kernel would read rows past m); any other
/// A is packed once, whole. B is read in place where it has unit stride along n, else packed a
/// sliver at a time (so is its last sliver when narrower than nr).
template <class T, class Epi>
void gemm_small(const gemm_plan& plan, const matrix_ref<const T>& a, const matrix_ref<const T>& b,
                const matrix_ref<T>& c, std::size_t m0, std::size_t m1, std::size_t n0,
                std::size_t n1, T alpha, T beta, const Epi& epi) {
  using tile = register_tile<T>;
  constexpr std::size_t mr = tile::mr, nr = tile::nr, third = mr / 3;
  const std::size_t k = plan.k;
  const tile_update<T> u{alpha, beta, true, true};
  const bool a_in_place = a.cs == 1;
  // Rows of A from `packed_from` on are read from apack.
  const std::size_t edge = (m1 - m0) % mr;
  const std::size_t packed_from = !a_in_place ? m0 : edge % third != 0 ? m1 - edge : m1;
  T* const apack = pack_buffer<T, 0>(round_up(m1 - packed_from, mr) * k);
  T* const bpack = pack_buffer<T, 1>(nr * k);
  if (packed_from < m1) pack_a(a.at(packed_from, 0), m1 - packed_from, k, apack);
  for (std::size_t jr = n0; jr < n1; jr += nr) {
    const std::size_t cols = std::min(nr, n1 - jr);
    const bool b_in_place = cols == nr && b.cs == 1;
    if (!b_in_place) pack_b(b.at(0, jr), k, cols, bpack);
    const T* const bp = b_in_place ? &b(0, jr) : bpack;
    for (std::size_t ir = m0; ir < m1; ir += mr) {
      const std::size_t rows = std::min(mr, m1 - ir);
      const matrix_ref<T> ct = c.at(ir, jr);
      if (ir < packed_from) {
        if (b_in_place)
          compute_tile<T, false, false>(k, &a(ir, 0), a.rs, bp, b.rs, ct, rows, cols, u, epi, ir,
                                        jr);
        else
          compute_tile<T, false, true>(k, &a(ir, 0), a.rs, bp, 0, ct, rows, cols, u, epi, ir, jr);
      } else {
        const T* ap = apack + (ir - packed_from) * k;
        if (b_in_place)
          compute_tile<T, true, false>(k, ap, 0, bp, b.rs, ct, rows, cols, u, epi, ir, jr);
        else
          compute_tile<T, true, true>(k, ap, 0, bp, 0, ct, rows, cols, u, epi, ir, jr);
      }
    }
  }
}

/// Elements of the result a matrix-vector product keeps in L1 at a time.
template <class T>
inline constexpr std::size_t gemv_chunk = 8192 / sizeof(T);

/// t plus the products a[p] b[p] for p in [from, to), one at a time: the end of a column's dot
/// product in gemv(), one function so that a column gives the same bits whether it is computed
/// in a group of four or alone (which depends on where a range of columns starts and ends: a
/// pipelined tile's rows, runtime/pipeline.hpp).
template <class T>
inline T dot_tail(T t, const T* a, const T* b, std::size_t from, std::size_t to) {
  for (std::size_t p = from; p < to; ++p) t += a[p] * b[p];
  return t;
}

/// Rows of b that gemv() sums as one part when b's rows are contiguous: a column's sum is the
/// parts' sums added in order, each part's rows summed from zero. Threads may then take whole
/// parts (each streaming its own contiguous rows of b, which reads memory faster than splitting
/// every row between them: 1.35x on a 2-core Zen 5 at batch-1 decode's shapes) and the order of
/// the sum, so its bits, stay those of one thread.
inline constexpr std::size_t gemv_part_rows = 64;

/// acc[0, len) = the sum over rows p in [p0, p1) of av[p] b(p, j0 + j), from zero, row by row,
/// b's rows contiguous (b.cs == 1): eight rows of b at a time, then four (as many sequential
/// streams), the accumulator loaded and stored once per group. The eight-row group gives the
/// four-row groups' bits (one load and store fewer: 1.1x on one Zen 5 core, 1.2x on two with
/// 256-bit vectors).
template <class T>
void gemv_rows(const T* av, const matrix_ref<const T>& b, std::size_t p0, std::size_t p1,
               std::size_t j0, std::size_t len, T* acc) {
  using V = vec<T>;
  constexpr std::size_t w = V::size;
  const std::size_t full = len / w * w;
  const std::ptrdiff_t rs = b.rs;
  std::fill(acc, acc + len, T(0));
  std::size_t p = p0;
  for (; p + 8 <= p1; p += 8) {
    const T* b0 = &b(p, j0);
    const T* b4 = b0 + 4 * rs;
    const V a0(av[p]), a1(av[p + 1]), a2(av[p + 2]), a3(av[p + 3]);
    const V a4(av[p + 4]), a5(av[p + 5]), a6(av[p + 6]), a7(av[p + 7]);
    for (std::size_t j = 0; j < full; j += w) {
      V x = V::load_aligned(acc + j);
      x = xsimd::fma(a0, V::load_unaligned(b0 + j), x);
      x = xsimd::fma(a1, V::load_unaligned(b0 + rs + j), x);
      x = xsimd::fma(a2, V::load_unaligned(b0 + 2 * rs + j), x);
      x = xsimd::fma(a3, V::load_unaligned(b0 + 3 * rs + j), x);
      x = xsimd::fma(a4, V::load_unaligned(b4 + j), x);
      x = xsimd::fma(a5, V::load_unaligned(b4 + rs + j), x);
      x = xsimd::fma(a6, V::load_unaligned(b4 + 2 * rs + j), x);
      x = xsimd::fma(a7, V::load_unaligned(b4 + 3 * rs + j), x);
      x.store_aligned(acc + j);
    }
    for (std::size_t j = full; j < len; ++j) {
      acc[j] += av[p] * b0[j] + av[p + 1] * b0[rs + j] + av[p + 2] * b0[2 * rs + j] +
                av[p + 3] * b0[3 * rs + j];
      acc[j] += av[p + 4] * b4[j] + av[p + 5] * b4[rs + j] + av[p + 6] * b4[2 * rs + j] +
                av[p + 7] * b4[3 * rs + j];
    }
  }
  for (; p + 4 <= p1; p += 4) {
    const T* b0 = &b(p, j0);
    const V a0(av[p]), a1(av[p + 1]), a2(av[p + 2]), a3(av[p + 3]);
    for (std::size_t j = 0; j < full; j += w) {
      V x = V::load_aligned(acc + j);
      x = xsimd::fma(a0, V::load_unaligned(b0 + j), x);
      x = xsimd::fma(a1, V::load_unaligned(b0 + rs + j), x);
      x = xsimd::fma(a2, V::load_unaligned(b0 + 2 * rs + j), x);
      x = xsimd::fma(a3, V::load_unaligned(b0 + 3 * rs + j), x);
      x.store_aligned(acc + j);
    }
    for (std::size_t j = full; j < len; ++j)
      acc[j] += av[p] * b0[j] + av[p + 1] * b0[rs + j] + av[p + 2] * b0[2 * rs + j] +
                av[p + 3] * b0[3 * rs + j];
  }
  for (; p < p1; ++p) {
    const T* bp = &b(p, j0);
    const V ap(av[p]);
    for (std::size_t j = 0; j < full; j += w)
      xsimd::fma(ap, V::load_unaligned(bp + j), V::load_aligned(acc + j)).store_aligned(acc + j);
    for (std::size_t j = full; j < len; ++j) acc[j] += av[p] * bp[j];
  }
}

/// acc[0, len) += part[0, len): one part's sums added to the parts' before it.
template <class T>
void add_part(T* acc, const T* part, std::size_t len) {
  using V = vec<T>;
  constexpr std::size_t w = V::size;
  std::size_t j = 0;
  for (; j + w <= len; j += w)
    (V::load_aligned(acc + j) + V::load_aligned(part + j)).store_aligned(acc + j);
  for (; j < len; ++j) acc[j] += part[j];
}

/// a's row as a contiguous vector (a may be strided): a buffer of this thread's.
template <class T>
const T* gemv_vector(std::size_t k, const matrix_ref<const T>& a) {
  if (a.cs == 1) return a.data;
  T* const av = pack_buffer<T, 0>(k);
  for (std::size_t p = 0; p < k; ++p) av[p] = a(0, p);
  return av;
}

/// Columns [n0, n1) of c (1 x n) = a (1 x k) times b (k x n), b read once, in place: with unit
/// stride along n, rows of b are added into a chunk of the result held in L1, by parts of
/// gemv_part_rows rows (gemv_rows); with unit stride along k, four columns at a time are dot
/// products with a. b's layout must be one of the two (gemm() checks).
template <class T, class Epi>
void gemv(std::size_t k, const matrix_ref<const T>& a, const matrix_ref<const T>& b,
          const matrix_ref<T>& c, std::size_t n0, std::size_t n1, T alpha, T beta, const Epi& epi) {
  using V = vec<T>;
  constexpr std::size_t w = V::size, chunk = gemv_chunk<T>;
  const T* const av = gemv_vector(k, a);
  alignas(64) T acc[chunk];
  const tile_update<T> u{alpha, beta, true, true};
  for (std::size_t j0 = n0; j0 < n1; j0 += chunk) {
    const std::size_t len = std::min(chunk, n1 - j0);
    if (b.cs == 1) {
      alignas(64) T part[chunk];
      gemv_rows(av, b, 0, std::min(k, gemv_part_rows), j0, len, acc);
      for (std::size_t p = gemv_part_rows; p < k; p += gemv_part_rows) {
        gemv_rows(av, b, p, std::min(k, p + gemv_part_rows), j0, len, part);
        add_part(acc, part, len);
      }
    } else {  // b.rs == 1: each column of b is contiguous along k
      const std::size_t kfull = k / w * w;
      std::size_t j = 0;
      for (; j + 4 <= len; j += 4) {
        const T* col[4];
        for (std::size_t q = 0; q < 4; ++q) col[q] = &b(0, j0 + j + q);
        V s0(T(0)), s1(T(0)), s2(T(0)), s3(T(0));
        for (std::size_t p = 0; p < kfull; p += w) {
          const V x = V::load_unaligned(av + p);
          s0 = xsimd::fma(x, V::load_unaligned(col[0] + p), s0);
          s1 = xsimd::fma(x, V::load_unaligned(col[1] + p), s1);
          s2 = xsimd::fma(x, V::load_unaligned(col[2] + p), s2);
          s3 = xsimd::fma(x, V::load_unaligned(col[3] + p), s3);
        }
        acc[j] = dot_tail(xsimd::hadd(s0), av, col[0], kfull, k);
        acc[j + 1] = dot_tail(xsimd::hadd(s1), av, col[1], kfull, k);
        acc[j + 2] = dot_tail(xsimd::hadd(s2), av, col[2], kfull, k);
        acc[j + 3] = dot_tail(xsimd::hadd(s3), av, col[3], kfull, k);
      }
      for (; j < len; ++j) {
        const T* cj = &b(0, j0 + j);
        V s(T(0));
        for (std::size_t p = 0; p < kfull; p += w)
          s = xsimd::fma(V::load_unaligned(av + p), V::load_unaligned(cj + p), s);
        acc[j] = dot_tail(xsimd::hadd(s), av, cj, kfull, k);
      }
    }
    update_row(acc, &c(0, j0), c.cs, len, u, epi, 0, j0);
  }
}

/// c (1 x n) = a (1 x k) times b (k x n), b's rows contiguous, on `tasks` tasks that each take
/// whole parts of b's rows (contiguous memory) instead of a range of its columns: each part's
/// sums go to a buffer, then the parts are added in order and c updated as gemv() does, so the
/// bits are gemv()'s. Needs k >= tasks * gemv_part_rows.
template <class T, class Epi>
void gemv_by_parts(std::size_t k, std::size_t n, const matrix_ref<const T>& a,
                   const matrix_ref<const T>& b, const matrix_ref<T>& c, T alpha, T beta,
                   const Epi& epi, std::size_t tasks) {
  constexpr std::size_t chunk = gemv_chunk<T>;
  const std::size_t parts = (k + gemv_part_rows - 1) / gemv_part_rows;
  const std::size_t stride = round_up(n, 64 / sizeof(T));  // each part's row 64-byte aligned
  T* const sums = pack_buffer<T, 3>(parts * stride);
  parallel_for(0, tasks, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
      const index_range mine = split_range(0, parts, t, tasks);
      const T* const av = gemv_vector(k, a);
      for (std::size_t q = mine.begin; q < mine.end; ++q)
        for (std::size_t j0 = 0; j0 < n; j0 += chunk)
          gemv_rows(av, b, q * gemv_part_rows, std::min(k, (q + 1) * gemv_part_rows), j0,
                    std::min(chunk, n - j0), sums + q * stride + j0);
    }
  });
  const tile_update<T> u{alpha, beta, true, true};
  alignas(64) T acc[chunk];
  for (std::size_t j0 = 0; j0 < n; j0 += chunk) {
    const std::size_t len = std::min(chunk, n - j0);
    std::copy(sums + j0, sums + j0 + len, acc);
    for (std::size_t q = 1; q < parts; ++q) add_part(acc, sums + q * stride + j0, len);
    update_row(acc, &c(0, j0), c.cs, len, u, epi, 0, j0);
  }
}

/// Whether gemv() can run C = A B for this plan and these operands: one of m and n is 1 and the
/// matrix operand has unit stride along one dimension.
template <class T>
bool gemv_applies(const gemm_plan& plan, const matrix_ref<const T>& a,
                  const matrix_ref<const T>& b) {
  if (plan.m == 1) return b.cs == 1 || b.rs == 1;
  if (plan.n == 1) return a.cs == 1 || a.rs == 1;
  return false;
}

/// One product's rows [m0, m1) x columns [n0, n1) by the plan's algorithm (or packed when the
/// operands cannot be read in place or the algorithm does not apply).
template <class T, class Epi, class A, class B>
void gemm_one(const gemm_plan& plan, const A& a, const B& b, const matrix_ref<T>& c, std::size_t m0,
              std::size_t m1, std::size_t n0, std::size_t n1, T alpha, T beta, const Epi& epi) {
  if (plan.k == 0) return scale_only(c, m0, m1, n0, n1, beta, epi);
  if constexpr (is_matrix_ref_v<A, T> && is_matrix_ref_v<B, T>) {
    if (plan.algorithm == gemm_algorithm::gemv && gemv_applies(plan, a, b)) {
      if (plan.m == 1) return gemv(plan.k, a, b, c, n0, n1, alpha, beta, epi);
      // C^T (1 x m) = B^T (1 x k) A^T (k x m); a bias per row of C is per column of C^T.
      Epi flipped = epi;
      flipped.bias_per_row = !epi.bias_per_row;
      return gemv(plan.k, b.transposed(), a.transposed(), c.transposed(), m0, m1, alpha, beta,
                  flipped);
    }
    if (plan.algorithm == gemm_algorithm::small)
      return gemm_small(plan, a, b, c, m0, m1, n0, n1, alpha, beta, epi);
  }
  gemm_packed(plan, a, b, c, m0, m1, n0, n1, alpha, beta, epi);
}

template <class T, class Epi, class A, class B>
void run_gemm(const gemm_plan& plan, const A& a, const B& b, const matrix_ref<T>& c, T alpha,
              T beta, const Epi& epi) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "nax::kernels::gemm: float or double elements");
  using tile = register_tile<T>;
  if (plan.m == 0 || plan.n == 0 || plan.batch == 0) return;
  // A matrix-vector product with n = 1 splits m in nr tiles, not mr: gemv() and update_row()
  // put an element on the vector or the scalar path by its offset from the range's start, so
  // ranges starting at multiples of the vector width give the same result on any thread count.
  const std::size_t m_unit =
      plan.algorithm == gemm_algorithm::gemv && plan.n == 1 ? tile::nr : tile::mr;
  const std::size_t m_tiles = (plan.m + m_unit - 1) / m_unit;
  const std::size_t n_tiles = (plan.n + tile::nr - 1) / tile::nr;
  auto task = [&](std::size_t t) {
    const std::size_t tb = t / (plan.threads_m * plan.threads_n);
    const std::size_t tm = t / plan.threads_n % plan.threads_m, tn = t % plan.threads_n;
    const index_range batches = split_range(0, plan.batch, tb, plan.threads_batch);
    const index_range mt = split_range(0, m_tiles, tm, plan.threads_m);
    const index_range nt = split_range(0, n_tiles, tn, plan.threads_n);
    const std::size_t m0 = mt.begin * m_unit, m1 = std::min(plan.m, mt.end * m_unit);
    const std::size_t n0 = nt.begin * tile::nr, n1 = std::min(plan.n, nt.end * tile::nr);
    if (m0 >= m1 || n0 >= n1) return;
    for (std::size_t bi = batches.begin; bi < batches.end; ++bi) {
      if constexpr (is_matrix_ref_v<A, T> && is_matrix_ref_v<B, T>)
        if (plan.algorithm == gemm_algorithm::small && bi + 1 < batches.end) {
          prefetch_l2(a.batch(bi + 1).at(m0, 0), m1 - m0, plan.k);
          prefetch_l2(b.batch(bi + 1).at(0, n0), plan.k, n1 - n0);
        }
      gemm_one(plan, a.batch(bi), b.batch(bi), c.batch(bi), m0, m1, n0, n1, alpha, beta, epi);
    }
  };
  const std::size_t tasks = plan.tasks();
  if (tasks == 1) {
    task(0);
    return;
  }
  // A matrix-vector product whose matrix has contiguous rows along the result: by parts of k.
  if constexpr (is_matrix_ref_v<A, T> && is_matrix_ref_v<B, T>)
    if (plan.algorithm == gemm_algorithm::gemv && plan.batch == 1 &&
        plan.k >= tasks * gemv_part_rows) {
      if (plan.m == 1 && b.cs == 1)
        return gemv_by_parts(plan.k, plan.n, a, b, c, alpha, beta, epi, tasks);
      if (plan.n == 1 && a.rs == 1) {
        Epi flipped = epi;  // as in gemm_one
        flipped.bias_per_row = !epi.bias_per_row;
        return gemv_by_parts(plan.k, plan.m, b.transposed(), a.transposed(), c.transposed(), alpha,
                             beta, flipped, tasks);
      }
    }
  parallel_for(0, tasks, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) task(t);
  });
}

}  // namespace detail

/// C[b] = act(alpha A[b] B[b] + beta C[b] + bias) for every b < plan.batch, as planned by
/// plan_gemm(m, n, k, batch) (A is m x k, B k x n, C m x n; any strides; batches step by each
/// matrix_ref's `bs`). C must not overlap A or B. With beta = 0, C is not read (it may hold
/// anything, NaN included).
template <class T, class Epi = epilogue<T>>
void gemm(const gemm_plan& plan, matrix_ref<const T> a, matrix_ref<const T> b, matrix_ref<T> c,
          T alpha = T(1), T beta = T(0), const Epi& epi = {}) {
  detail::run_gemm(plan, a, b, c, alpha, beta, epi);
}

/// The same with operands that are matrices or panel sources (packed whatever the plan says).
template <class T, class A, class B, class Epi = epilogue<T>>
requires((panel_source<A, T> || std::is_same_v<A, matrix_ref<const T>>)&&(
    panel_source<B, T> ||
    std::is_same_v<B, matrix_ref<const T>>)) void gemm(const gemm_plan& plan, const A& a,
                                                       const B& b, matrix_ref<T> c, T alpha = T(1),
                                                       T beta = T(0), const Epi& epi = {}) {
  detail::run_gemm(plan, a, b, c, alpha, beta, epi);
}

}  // namespace nax::kernels

// The dense products of tensors (nax::dot, the runtime's dot_general) come compiled with the
// component (nax/core/linkage.hpp); products that pack an expression's panels stay templates.
#ifdef NAX_RUNTIME_TEMPLATE
namespace nax::NAX_ISA::kernels::detail {
NAX_RUNTIME_TEMPLATE void
run_gemm<float, epilogue<float>, matrix_ref<const float>, matrix_ref<const float>>(
    const gemm_plan&, const matrix_ref<const float>&, const matrix_ref<const float>&,
    const matrix_ref<float>&, float, float, const epilogue<float>&);
NAX_RUNTIME_TEMPLATE void
run_gemm<double, epilogue<double>, matrix_ref<const double>, matrix_ref<const double>>(
    const gemm_plan&, const matrix_ref<const double>&, const matrix_ref<const double>&,
    const matrix_ref<double>&, double, double, const epilogue<double>&);
}  // namespace nax::kernels::detail
#endif
