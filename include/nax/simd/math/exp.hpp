#pragma once
// nax::simd::exp: e^x for float, double and xsimd batches of either.

#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

template <class S>
struct exp_constants;

// exp(r) on |r| <= ln2/2 by a polynomial 1 + r + c2 r^2 + ... whose c2.. come from a weighted
// Remez exchange (minimax relative error, computed in 50-digit mpmath by our own fitter) and
// were then rounded to S. ln2 is split for Cody-Waite: ln2_hi has few enough bits that n*ln2_hi
// is exact for every n the reduction produces, with or without FMA.
template <>
struct exp_constants<float> {
  // Relative error of the polynomial before rounding: 3.1e-9 (0.03 ulp).
  static constexpr float c[] = {1.0f,
                                1.0f,
                                0.49999993451751137798f,
                                0.1666652068942822806f,
                                0.04166838734407627382f,
                                0.0083687098626155852708f,
                                0.0013814614441128228449f};
  // c with odd coefficients negated: e^-x from the same operations (see exp_reduce).
  static constexpr float c_neg[] = {1.0f,
                                    -1.0f,
                                    0.49999993451751137798f,
                                    -0.1666652068942822806f,
                                    0.04166838734407627382f,
                                    -0.0083687098626155852708f,
                                    0.0013814614441128228449f};
  static constexpr float log2e = 1.44269504088896340736f;
  static constexpr float ln2_hi = 0.693145751953125f;  // 16 bits: n * ln2_hi is exact
  static constexpr float ln2_lo = 1.4286068203094173e-06f;
  static constexpr float shift = 12582912.0f;  // 1.5 * 2^23: rounds to an integer
  static constexpr unsigned mantissa_bits = 23;
  static constexpr unsigned bias = 127;
  // |x| <= fast_limit: e^x is a normal finite number and scaling by 2^n is one integer add.
  static constexpr float fast_limit = 87.3f;
  // Beyond these e^x is 0 or +inf; clamping keeps n in the range of the two-step scaling.
  static constexpr float lo = -104.0f, hi = 89.0f;
};

template <>
struct exp_constants<double> {
  // Relative error of the polynomial before rounding: 3.6e-18 (0.03 ulp).
  static constexpr double c[] = {1.0,
                                 1.0,
                                 0.5000000000000010617,
                                 0.16666666666666412769,
                                 0.041666666666530264266,
                                 0.0083333333334943372991,
                                 0.0013888888943598065275,
                                 0.00019841269506770373617,
                                 0.000024801493135866572757,
                                 2.7557586274836454916e-6,
                                 2.7630234017460518288e-7,
                                 2.5000069564747215594e-8};
  static constexpr double c_neg[] = {1.0,
                                     -1.0,
                                     0.5000000000000010617,
                                     -0.16666666666666412769,
                                     0.041666666666530264266,
                                     -0.0083333333334943372991,
                                     0.0013888888943598065275,
                                     -0.00019841269506770373617,
                                     0.000024801493135866572757,
                                     -2.7557586274836454916e-6,
                                     2.7630234017460518288e-7,
                                     -2.5000069564747215594e-8};
  static constexpr double log2e = 1.44269504088896340736;
  static constexpr double ln2_hi = 0.6931471805598903;  // 42 bits: n * ln2_hi is exact
  static constexpr double ln2_lo = 5.497923018708371e-14;
  static constexpr double shift = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr unsigned mantissa_bits = 52;
  static constexpr unsigned bias = 1023;
  static constexpr double fast_limit = 708.3;
  static constexpr double lo = -746.0, hi = 710.0;
};

// e^x = 2^n e^r with n = round(x / ln2), r = x - n ln2 (|r| <= ln2/2), e^r by the polynomial.
// Sets e^r and t, whose low bits hold n (t = shift + n). Negate: the same for e^-x without
// negating x: every operation is the mirror image of exp(-x)'s (r and the odd coefficients
// change sign; round to nearest is symmetric), so the bits are exp(-x)'s and one operation is
// saved.
template <bool Negate, class V>
void exp_reduce(const V& x, V& p, V& t) noexcept {
  using K = exp_constants<scalar_t<V>>;
  constexpr auto sign = Negate ? -1 : 1;
  t = mul_add(x, V(sign * K::log2e), V(K::shift));
  const V n = t - V(K::shift);
  V r = mul_add(n, V(-sign * K::ln2_hi), x);  // exact
  r = mul_add(n, V(-sign * K::ln2_lo), r);
  if constexpr (Negate)
    p = poly(r, K::c_neg);
  else
    p = poly(r, K::c);
}

// The general path: clamp (NaN passes), then scale by 2^n1 * 2^n2 with n1 = floor(n/2) and
// n2 = n - n1, both normal, so overflow gives +inf and underflow a correctly rounded subnormal
// (one rounding, in the last multiply) or 0. Out of line, so that the fast path is small enough
// to inline into the loops that call exp.
template <bool Negate, class V>
[[gnu::noinline, gnu::cold]] V exp_general(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = exp_constants<S>;
  using U = uint_t<V>;
  constexpr S lo = Negate ? -K::hi : K::lo, hi = Negate ? -K::lo : K::hi;
  V p, t;
  exp_reduce<Negate>(clamp_nan(x, lo, hi), p, t);
  const U u = as_uint(t) - U(as_uint(K::shift) - 2 * K::bias);  // n + 2 bias > 0
  const U e1 = u >> 1;                                          // n1 + bias
  const U e2 = u - e1;                                          // n2 + bias
  return (p * from_uint<V>(e1 << K::mantissa_bits)) * from_uint<V>(e2 << K::mantissa_bits);
}

// The fast path, for |x| <= fast_limit in every lane: e^x is normal, so 2^n is applied by adding
// n to the exponent field of p (t's low bits are n, shift's are 0).
template <bool Negate, class V>
V exp_fast(const V& x) noexcept {
  using K = exp_constants<scalar_t<V>>;
  V p, t;
  exp_reduce<Negate>(x, p, t);
  return from_uint<V>(as_uint(p) + (as_uint(t) << K::mantissa_bits));
}

/// e^x (e^-x when Negate). Every lane is computed by the same operations whatever the others
/// hold: a batch with a lane outside [-fast_limit, fast_limit] (or NaN) takes the general path
/// for all its lanes, and the general path gives bit for bit the fast path's result where both
/// apply.
template <bool Negate = false, class V>
V exp(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = exp_constants<S>;
#if defined(__AVX512F__)
  if constexpr (register_bytes<V> == 64) {
    V p, t;
    constexpr S lo = Negate ? -K::hi : K::lo, hi = Negate ? -K::lo : K::hi;
    // AVX-512's vscalefps/pd computes p 2^n with one rounding, overflow and subnormals
    // included: the general path's result, in one instruction and without a branch.
    exp_reduce<Negate>(clamp_nan(x, lo, hi), p, t);
    const V n = t - V(K::shift);
    if constexpr (std::is_same_v<S, float>)
      return V(_mm512_scalef_ps(p, n));
    else
      return V(_mm512_scalef_pd(p, n));
  }
#endif
  if (all_of(clear_sign(x) <= V(K::fast_limit))) [[likely]]
    return exp_fast<Negate>(x);
  return exp_general<Negate>(x);
}

}  // namespace math_detail

/// The |x| up to which exp(x) is computed by its fast path: e^x is a normal number there.
template <class S>
inline constexpr S exp_fast_limit = math_detail::exp_constants<S>::fast_limit;

/// exp(x) for a batch whose lanes the caller knows to lie in [-exp_fast_limit, exp_fast_limit]
/// (the row ops check a whole row at once): exp(x)'s bits, without its check of every batch.
template <class V>
V exp_in_range(const V& x) noexcept {
  // (AVX-512's exp has no check, but clamps and scales with vscalefps: 2^n added to the exponent
  // field is the same result for a normal e^x, in fewer operations.)
  return math_detail::exp_fast<false>(x);
}

/// e^x for float, double or an xsimd batch of either.
///
/// Error (against std::exp in long double, see docs/simd_math.md): float <= 1 ulp, double
/// <= 1 ulp (measured 0.88 / 0.90), over all finite x. exp(x) overflows to +inf (float: x > 88.72,
/// double: x > 709.78), results below the normal range are subnormals rounded once (not flushed)
/// and 0 below those; exp(+-inf) = +inf / 0, exp(NaN) = NaN. Scalars and each lane of a batch give
/// the same bits.
template <real_value V>
V exp(V x) noexcept {
  return math_detail::exp(x);
}

}  // namespace nax::simd
