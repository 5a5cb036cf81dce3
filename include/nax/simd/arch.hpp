#pragma once
// The SIMD vocabulary of nax: the xsimd architecture nax compiles for, vector and mask types by
// lane type, and helpers that take scalars and vectors alike, so that each op is written once.

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

// g++ 12 reports the self-initialised placeholders of its own AVX-512 intrinsics as
// uninitialised once inlined (GCC PR 105593, fixed in 13); diagnostic state goes by source
// location, so silencing them here helps wherever this is the first include of xsimd.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop
#else
#include <xsimd/xsimd.hpp>
#endif

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::simd {

/// The instruction set nax's kernels use. AVX2 with FMA when the compiler flags enable it, even
/// where AVX-512 is enabled too: 256-bit vectors already saturate memory bandwidth in the
/// elementwise kernels, avoid AVX-512's frequency drop on many CPUs, and g++ 12's AVX-512
/// intrinsic headers raise false -Wuninitialized errors under -Werror. Otherwise the widest set
/// the flags enable (xsimd's plain `avx2` tag has no FMA). Define NAX_SIMD_ARCH to choose,
/// e.g. -DNAX_SIMD_ARCH=xsimd::avx512bw.
#if defined(NAX_SIMD_ARCH)
using arch = NAX_SIMD_ARCH;
#elif XSIMD_WITH_FMA3_AVX2
using arch = xsimd::fma3<xsimd::avx2>;
#else
using arch = xsimd::default_arch;
#endif

/// A vector of lanes of T, and the mask of a comparison between two such vectors.
template <class T>
using vec = xsimd::batch<T, arch>;
template <class T>
using mask = xsimd::batch_bool<T, arch>;

/// Lanes per vector of T.
template <class T>
inline constexpr std::size_t width = vec<T>::size;

/// The instruction set of the row kernels (softmax, log_softmax, layer_norm along a row): AVX-512
/// when the flags enable it, else `arch`. A row's passes run from L1 and are bound by their
/// arithmetic (softmax's exps), not by memory as the elementwise kernels are, so wider vectors
/// pay there: measured in bench/RESULTS.md (rowops). NAX_SIMD_ARCH sets it too; define
/// NAX_ROW_SIMD_ARCH to choose it alone (its vectors must hold as many lanes as arch's, or twice).
#if defined(NAX_ROW_SIMD_ARCH)
using row_arch = NAX_ROW_SIMD_ARCH;
#elif defined(NAX_SIMD_ARCH)
using row_arch = arch;
#elif XSIMD_WITH_AVX512BW
using row_arch = xsimd::avx512bw;
#elif XSIMD_WITH_AVX512F
using row_arch = xsimd::avx512f;
#else
using row_arch = arch;
#endif

/// A vector of the row kernels (row_arch), and its mask.
template <class T>
using row_vec = xsimd::batch<T, row_arch>;
template <class T>
using row_mask = xsimd::batch_bool<T, row_arch>;

/// The vector W whose low half is lo and high half hi: two vectors of half W's lanes (a row
/// kernel's wide vector from two of an expression's vectors).
template <class W, class H>
W join(const H& lo, const H& hi) {
  using T = typename W::value_type;
  static_assert(std::is_same_v<T, typename H::value_type> && W::size == 2 * H::size,
                "nax::simd::join: W must hold twice H's lanes of the same type");
#if XSIMD_WITH_AVX512F
  if constexpr (sizeof(typename W::register_type) == 64 &&
                sizeof(typename H::register_type) == 32) {
    if constexpr (std::is_same_v<T, float>) {
      const __m512d low = _mm512_castpd256_pd512(_mm256_castps_pd(lo));
      return W(_mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(hi), 1)));
    } else if constexpr (std::is_same_v<T, double>) {
      return W(_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1));
    }
  }
#endif
  alignas(64) T lanes[W::size];
  lo.store_aligned(lanes);
  hi.store_aligned(lanes + H::size);
  return W::load_aligned(lanes);
}

/// The mask M (an xsimd::batch_bool) whose lanes are `lanes[0..M::size)`. Not M::load_aligned:
/// xsimd 8 builds it as `values != 0`, and for integer lanes in 256-bit registers with
/// AVX-512VL enabled, g++ 12 at -O2 inverts that mask in some inlined contexts (nax::where of
/// i64 values under a float comparison selected the wrong side for every lane); `values > 0`
/// has no negation to lose.
template <class M>
M load_mask(const bool* lanes) {
  using T = typename M::value_type;
  using V = typename M::batch_type;
  alignas(64) T values[M::size];
  for (std::size_t i = 0; i < M::size; ++i) values[i] = lanes[i] ? T(1) : T(0);
  return V::load_aligned(values) > V(T(0));
}

/// W (a vector, or a mask from bools through load_mask) from p[0..W::size), p unaligned.
template <class W, class T>
W load(const T* p) {
  if constexpr (xsimd::is_batch_bool<W>::value)
    return load_mask<W>(p);
  else
    return W::load_unaligned(p);
}

/// Whether T is a vector or mask type (as opposed to a scalar).
template <class T>
inline constexpr bool is_vec_v = xsimd::is_batch<T>::value;
template <class T>
inline constexpr bool is_mask_v = xsimd::is_batch_bool<T>::value;

namespace detail {
template <class X, bool = is_vec_v<X>>
struct element_of {
  using type = X;
};
template <class X>
struct element_of<X, true> {
  using type = typename X::value_type;
};
}  // namespace detail
/// The element type of a scalar (itself) or of a vector (its lanes').
template <class X>
using element_t = typename detail::element_of<X>::type;

// Helpers that accept scalars and vectors, so an op's body is one expression for both.

template <class X>
X select(bool m, const X& a, const X& b) {
  return m ? a : b;
}
template <class T, class A>
xsimd::batch<T, A> select(const xsimd::batch_bool<T, A>& m, const xsimd::batch<T, A>& a,
                          const xsimd::batch<T, A>& b) {
  return xsimd::select(m, a, b);
}

/// Whether x is NaN, on scalars and in each lane (on x86, xsimd's != is the ordered compare, so
/// a NaN lane is not != itself: write is_nan(x), never x != x).
template <class X>
auto is_nan(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::isnan(x);
  else
    return x != x;
}

// max and min: a NaN operand gives NaN (numpy's maximum and minimum), and a lane gives the
// scalar's bits (a tie, +0 against -0 included, gives a). The instructions do neither: x86's
// return the second operand when either is NaN, so a NaN was dropped or kept by its place (a
// vector lane or a scalar tail, the accumulator or the element of a reduction).
template <class X>
X max(const X& a, const X& b) {
  if constexpr (is_vec_v<X>) {
    if constexpr (std::is_floating_point_v<typename X::value_type>)
      return xsimd::select((a < b) | xsimd::isnan(b), b, a);
    else
      return xsimd::max(a, b);
  } else if constexpr (std::is_floating_point_v<X>) {
    return a < b || b != b ? b : a;  // (b != b: a NaN)
  } else {
    return a < b ? b : a;
  }
}
template <class X>
X min(const X& a, const X& b) {
  if constexpr (is_vec_v<X>) {
    if constexpr (std::is_floating_point_v<typename X::value_type>)
      return xsimd::select((b < a) | xsimd::isnan(b), b, a);
    else
      return xsimd::min(a, b);
  } else if constexpr (std::is_floating_point_v<X>) {
    return b < a || b != b ? b : a;
  } else {
    return b < a ? b : a;
  }
}
template <class X>
X abs(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::abs(x);
  else if constexpr (std::is_unsigned_v<X>)
    return x;
  else
    return x < X(0) ? X(-x) : x;
}
template <class X>
X sqrt(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::sqrt(x);
  else
    return std::sqrt(x);
}
// Rounding to an integer value, on scalars and in each lane: floor, ceil, and nearbyint (to
// nearest, halves to even: the vector form always, the scalar form in the default rounding mode).
template <class X>
X floor(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::floor(x);
  else
    return std::floor(x);
}
template <class X>
X ceil(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::ceil(x);
  else
    return std::ceil(x);
}
template <class X>
X nearbyint(const X& x) {
  if constexpr (is_vec_v<X>)
    return xsimd::nearbyint(x);
  else
    return std::nearbyint(x);
}
template <class X>
X fma(const X& a, const X& b, const X& c) {
  if constexpr (is_vec_v<X>)
    return xsimd::fma(a, b, c);
  else
    return std::fma(a, b, c);
}
// x^y as e^(y ln|x|), then C's special cases (Annex F.10.4.4, std::pow's) as compares and blends
// on that result: 1 for y = +-0 or x = 1 (a NaN operand too) and for x = -1 with y = +-inf;
// for x = +-0, +-inf for y < 0 and +-0 for y > 0, the sign x's for an odd integer y and + else;
// for x < 0, the sign x's for an odd integer y, and NaN for a finite x and a finite non-integer
// y (x = -inf then gives +0 or +inf, as +inf does); any other NaN operand gives NaN. The value
// elsewhere is xsimd's pow's bits (its log and exp, the same operations in the same order), with
// two differences: an odd integer is one whose half is not an integer (xsimd asks whether y - 1
// is even, and y - 1 rounds to y for |y| >= 2^24 in float: pow(-2, 2^25) gave -inf), and y ln|x|
// is clamped to +-1000 before the exp, a NaN there taken aside. xsimd's exp converts its
// argument / ln2 to an integer, which for doubles is a scalar conversion: a huge, infinite or
// NaN argument made it undefined behaviour (UBSan), though e^t is then +inf, 0 or NaN anyway.
// A scalar runs the vector body in one lane: std::pow rounds differently, and a scalar (a tail,
// a typed reader's scalar(i)) must give each lane's bits.
template <class X>
X pow(const X& x, const X& y) {
  if constexpr (is_vec_v<X>) {
    using T = typename X::value_type;
    using lim = std::numeric_limits<T>;
    const X zero(T(0)), one(T(1)), inf(lim::infinity());
    const X ax = xsimd::abs(x);
    const auto y_inf = xsimd::isinf(y), integer = xsimd::is_flint(y);
    const auto odd = integer && !xsimd::is_flint(y * X(T(0.5)));
    // (x = +-0: ln 0 = -inf, and t = +-inf gives e^t = +inf for y < 0 and +0 for y > 0.)
    const X t = y * xsimd::log(ax);
    const auto nan = xsimd::isnan(t);
    // Past +-1000, e^t is +inf or 0 for either type, as it is at +-1000.
    X z = xsimd::exp(xsimd::select(nan, zero, xsimd::min(X(T(1000)), xsimd::max(X(T(-1000)), t))));
    z = xsimd::select(nan, t, z);
    z = xsimd::select(odd, xsimd::copysign(z, x), z);  // (z >= 0 or NaN here)
    z = xsimd::select(x < zero && ax != inf && !(integer || y_inf), X(lim::quiet_NaN()), z);
    return xsimd::select(y == zero || x == one || (ax == one && y_inf), one, z);
  } else {
    return simd::pow(vec<X>(x), vec<X>(y)).get(0);  // (qualified: ADL would find xsimd::pow)
  }
}

/// x, a floating-point result of one op, as computed: rounded to its type before the next op reads
/// it, as when the ops run one by one through memory (the runtime's interpreter). g++ and clang
/// both contract a * b + c into one fused multiply-add by default, at any -std, which would give
/// a chain fused in one loop (the typed evaluator, the native tier) other bits than the same ops
/// run apart. An empty asm the value passes through keeps each op's rounding and emits nothing.
/// Within an op's body, contraction stays as the compiler chooses: every layer runs that same
/// body.
template <class X>
X op_result(X x) {
  if constexpr (is_vec_v<X>) {
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
#if defined(__x86_64__)
      asm("" : "+v"(x.data));
#elif defined(__aarch64__)
      asm("" : "+w"(x.data));
#else
      asm("" : "+m"(x));
#endif
    }
  } else if constexpr (std::is_floating_point_v<X>) {
#if defined(__x86_64__)
    asm("" : "+v"(x));
#elif defined(__aarch64__)
    asm("" : "+w"(x));
#else
    asm("" : "+m"(x));
#endif
  }
  return x;
}

/// The alignment stream_store needs: a vector's size.
inline constexpr std::size_t stream_alignment = sizeof(vec<float>);

/// Stores v at p, which must be aligned to the vector's size, with a non-temporal store (it
/// bypasses the caches, so streaming a large output does not first read each line in) where the
/// instruction set has one, else with an aligned store. Call stream_fence() after a series.
template <class T, class A>
void stream_store(T* p, const xsimd::batch<T, A>& v) {
  using reg = typename xsimd::batch<T, A>::register_type;
#if XSIMD_WITH_AVX512F
  if constexpr (sizeof(reg) == 64) {
    if constexpr (std::is_same_v<T, float>)
      return _mm512_stream_ps(p, v);
    else if constexpr (std::is_same_v<T, double>)
      return _mm512_stream_pd(p, v);
    else
      return _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
  }
#endif
#if XSIMD_WITH_AVX
  if constexpr (sizeof(reg) == 32) {
    if constexpr (std::is_same_v<T, float>)
      return _mm256_stream_ps(p, v);
    else if constexpr (std::is_same_v<T, double>)
      return _mm256_stream_pd(p, v);
    else
      return _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
  }
#endif
#if XSIMD_WITH_SSE2
  if constexpr (sizeof(reg) == 16) {
    if constexpr (std::is_same_v<T, float>)
      return _mm_stream_ps(p, v);
    else if constexpr (std::is_same_v<T, double>)
      return _mm_stream_pd(p, v);
    else
      return _mm_stream_si128(reinterpret_cast<__m128i*>(p), v);
  }
#endif
  v.store_aligned(p);
}

/// Orders the non-temporal stores before it ahead of later stores (and of handing the data to
/// another thread).
inline void stream_fence() {
#if XSIMD_WITH_SSE2
  _mm_sfence();
#endif
}

/// Logical operations on scalar bools and on masks.
template <class M>
M logical_and(const M& a, const M& b) {
  if constexpr (is_mask_v<M>)
    return a & b;
  else
    return a && b;
}
template <class M>
M logical_or(const M& a, const M& b) {
  if constexpr (is_mask_v<M>)
    return a | b;
  else
    return a || b;
}
template <class M>
M logical_not(const M& a) {
  if constexpr (is_mask_v<M>)
    return !a;
  else
    return !a;
}

/// select between masks (where over bool values): a's lanes where m holds, b's elsewhere.
template <class T>
mask<T> select(const mask<T>& m, const mask<T>& a, const mask<T>& b) {
  return logical_or(logical_and(m, a), logical_and(logical_not(m), b));
}

}  // namespace nax::NAX_ISA::simd
