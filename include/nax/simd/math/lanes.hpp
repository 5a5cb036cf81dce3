#pragma once
// The lane operations nax's transcendental functions are written with. Each has an overload for
// float/double and one for xsimd::batch, so every function is one generic body, and a scalar call
// runs the same operations, in the same order, as each lane of a vector call: a tail computed
// with scalars gives bit for bit what the vector loop gives (the tests check this).
//
// What that needs, and why the helpers look the way they do:
//  - Only correctly rounded IEEE operations (+ - * / and fused multiply-add); no hardware
//    reciprocal or rsqrt estimates, whose bits differ between scalar and vector instructions.
//  - Every multiply feeding an add is an explicit mul_add(), so the compiler has no a*b+c left to
//    contract differently in the scalar and the vector code. mul_add() is fused when the target has
//    FMA (x86 -mfma, AArch64) and a separate multiply and add otherwise, on both sides.
//  - Bit manipulation through std::bit_cast / xsimd::bitwise_cast on unsigned lanes, whose
//    arithmetic wraps: no signed overflow, no float-to-int conversion of out-of-range values.
//  - Clamps that let NaN through (clamp_nan), for the functions that clamp their argument.

#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

// g++ 12 reports the self-initialised placeholders of its own AVX-512 intrinsics
// (_mm512_undefined_*) as uninitialised once they are inlined (GCC PR 105593, fixed in 13).
// Diagnostic state goes by source location, so this helps when this is the first include of
// xsimd in a translation unit.
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

namespace math_detail {
template <class T>
struct is_real_batch : std::false_type {};
template <class T, class A>
struct is_real_batch<xsimd::batch<T, A>>
    : std::bool_constant<std::is_same_v<T, float> || std::is_same_v<T, double>> {};
}  // namespace math_detail

/// What nax::simd's math functions take: float, double, or an xsimd batch of either.
template <class T>
concept real_value =
    std::same_as<T, float> || std::same_as<T, double> || math_detail::is_real_batch<T>::value;

namespace math_detail {

/// Whether mul_add() is fused (see above), for scalars and batches alike.
#if defined(__FMA__) || defined(__aarch64__) || defined(_M_ARM64)
inline constexpr bool fused_fma = true;
#else
inline constexpr bool fused_fma = false;
#endif

// --- lane types -----------------------------------------------------------------------------
template <class V>
struct lanes;
template <>
struct lanes<float> {
  using scalar = float;
  using uint = std::uint32_t;
  using mask = bool;
};
template <>
struct lanes<double> {
  using scalar = double;
  using uint = std::uint64_t;
  using mask = bool;
};
template <class T, class A>
struct lanes<xsimd::batch<T, A>> {
  using scalar = T;
  using uint = xsimd::batch<typename lanes<T>::uint, A>;
  using mask = xsimd::batch_bool<T, A>;
};

template <class V>
using scalar_t = typename lanes<V>::scalar;
/// Bytes in V's register (0 for a scalar).
template <class V>
inline constexpr std::size_t register_bytes = 0;
template <class T, class A>
inline constexpr std::size_t register_bytes<xsimd::batch<T, A>> = xsimd::batch<T, A>::size *
                                                                  sizeof(T);
template <class V>
using uint_t = typename lanes<V>::uint;
template <class V>
using mask_t = typename lanes<V>::mask;

// --- bits -----------------------------------------------------------------------------------
inline std::uint32_t as_uint(float x) noexcept { return std::bit_cast<std::uint32_t>(x); }
inline std::uint64_t as_uint(double x) noexcept { return std::bit_cast<std::uint64_t>(x); }
template <class T, class A>
uint_t<xsimd::batch<T, A>> as_uint(const xsimd::batch<T, A>& x) noexcept {
  return xsimd::bitwise_cast<uint_t<xsimd::batch<T, A>>>(x);
}

/// The V whose bits are u.
template <class V>
V from_uint(const uint_t<V>& u) noexcept {
  if constexpr (std::is_floating_point_v<V>)
    return std::bit_cast<V>(u);
  else
    return xsimd::bitwise_cast<V>(u);
}

// --- arithmetic -----------------------------------------------------------------------------
template <class V>
V mul_add(const V& a, const V& b, const V& c) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    if constexpr (fused_fma)
      return std::fma(a, b, c);
    else
      return a * b + c;  // no FMA instruction: nothing to contract
  } else {
    // xsimd 8's avx512f has no fma kernel (it falls back to a separate multiply and add), so
    // with FMA enabled call the instruction for the register width directly.
#if defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))
    using T = scalar_t<V>;
    constexpr std::size_t bytes = register_bytes<V>;
    constexpr bool f32 = std::is_same_v<T, float>;
    if constexpr (bytes == 16 && f32)
      return V(_mm_fmadd_ps(a, b, c));
    else if constexpr (bytes == 16)
      return V(_mm_fmadd_pd(a, b, c));
    else if constexpr (bytes == 32 && f32)
      return V(_mm256_fmadd_ps(a, b, c));
    else if constexpr (bytes == 32)
      return V(_mm256_fmadd_pd(a, b, c));
#if defined(__AVX512F__)
    else if constexpr (bytes == 64 && f32)
      return V(_mm512_fmadd_ps(a, b, c));
    else if constexpr (bytes == 64)
      return V(_mm512_fmadd_pd(a, b, c));
#endif
    else
      return xsimd::fma(a, b, c);
#else
    return xsimd::fma(a, b, c);
#endif
  }
}

/// |x| by clearing the sign bit.
template <class V>
V clear_sign(const V& x) noexcept {
  using S = scalar_t<V>;
  return from_uint<V>(as_uint(x) & uint_t<V>(as_uint(S(-0.0)) - 1));
}

/// x clamped to [lo, hi], NaN passed through. For batches this relies on x86's maxps/minps
/// (which return the second operand when either is NaN) and on NEON's (which return NaN).
template <class V>
V clamp_nan(const V& x, scalar_t<V> lo, scalar_t<V> hi) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    const V y = lo > x ? lo : x;
    return hi < y ? hi : y;
  } else {
    return xsimd::min(V(hi), xsimd::max(V(lo), x));
  }
}
/// max(lo, x), NaN passed through.
template <class V>
V max_nan(scalar_t<V> lo, const V& x) noexcept {
  if constexpr (std::is_floating_point_v<V>)
    return lo > x ? lo : x;
  else
    return xsimd::max(V(lo), x);
}
/// min(hi, x), NaN passed through.
template <class V>
V min_nan(scalar_t<V> hi, const V& x) noexcept {
  if constexpr (std::is_floating_point_v<V>)
    return hi < x ? hi : x;
  else
    return xsimd::min(V(hi), x);
}

// --- masks ----------------------------------------------------------------------------------
template <class V>
V pick(const mask_t<V>& m, const V& a, const V& b) noexcept {
  if constexpr (std::is_floating_point_v<V>)
    return m ? a : b;
  else
    return xsimd::select(m, a, b);
}
inline bool any_of(bool m) noexcept { return m; }
template <class T, class A>
bool any_of(const xsimd::batch_bool<T, A>& m) noexcept {
  return xsimd::any(m);
}
inline bool both(bool a, bool b) noexcept { return a && b; }
template <class T, class A>
xsimd::batch_bool<T, A> both(const xsimd::batch_bool<T, A>& a,
                             const xsimd::batch_bool<T, A>& b) noexcept {
  return a & b;
}
inline bool all_of(bool m) noexcept { return m; }
template <class T, class A>
bool all_of(const xsimd::batch_bool<T, A>& m) noexcept {
  return xsimd::all(m);
}

// --- polynomials ----------------------------------------------------------------------------
template <class V, class S, std::size_t N, std::size_t... I>
V poly_unrolled(const V& x, const S (&c)[N], std::index_sequence<I...>) noexcept {
  V p(c[N - 1]);
  ((p = mul_add(p, x, V(c[N - 2 - I]))), ...);
  return p;
}
/// c[0] + x (c[1] + x (c[2] + ...)): Horner's scheme with mul_add, coefficients lowest degree
/// first, unrolled at compile time.
template <class V, class S, std::size_t N>
V poly(const V& x, const S (&c)[N]) noexcept {
  return poly_unrolled(x, c, std::make_index_sequence<N - 1>{});
}

}  // namespace math_detail
}  // namespace nax::simd
