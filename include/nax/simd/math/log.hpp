#pragma once
// nax::simd::log: the natural logarithm for float, double and xsimd batches of either.

#include <limits>

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// x = 2^e m with m in [sqrt(1/2), sqrt(2)), read off the bits (adding (1 - sqrt(1/2))'s
// mantissa offset moves the exponent carry to sqrt(2)), so log x = e ln2 + log1p(f), f = m - 1
// exact, |f| <= 0.414. Coefficients: weighted Remez exchange in 50-digit mpmath by our own
// fitter, rounded to S. ln2 split so that e * ln2_hi is exact without FMA too.
template <class S>
struct log_constants;

// log1p(f) = f + f^2 P(f); |P - (log1p(f) - f)/f^2| <= 2.4e-8, which is <= 1.2e-8 (0.1 ulp)
// relative to log1p(f) itself.
template <>
struct log_constants<float> {
  static constexpr float c[] = {
      -0.49999997733197509375f, 0.33333312941541245622f,  -0.25000751220652372685f,
      0.20002695558682994865f,  -0.16628920120891985254f, 0.14173454032330827013f,
      -0.13072553228859002618f, 0.12917874747497441823f,  -0.080646638228245761242f};
  static constexpr std::uint32_t offset = 0x3F800000u - 0x3F3504F3u;  // bits(1) - bits(sqrt .5)
  static constexpr std::uint32_t sqrt_half = 0x3F3504F3u;
  static constexpr std::uint32_t mantissa = 0x007FFFFFu;
  static constexpr std::uint32_t two_pow_mantissa_bits = 0x4B000000u;  // bits(2^23)
  static constexpr float exponent_shift = 8388608.0f + 127.0f;         // 2^23 + bias
  static constexpr unsigned mantissa_bits = 23;
  static constexpr float ln2_hi = 0.693145751953125f;  // 16 bits
  static constexpr float ln2_lo = 1.4286068203094173e-06f;
  static constexpr float subnormal_scale = 8388608.0f;  // 2^23
  static constexpr float subnormal_exponent = 23.0f;
};

// log1p(f) = 2 atanh(s) = f - s (f - R(s^2)), s = f / (2 + f), |s| <= 0.1716;
// R(z) = sum c_k z^k, k = 1..7, relative error 1.2e-18 (as part of log1p).
template <>
struct log_constants<double> {
  static constexpr double c[] = {0.0,
                                 0.66666666666667341551,
                                 0.39999999999416374871,
                                 0.28571428742014739225,
                                 0.22222198610869972725,
                                 0.18183562400430578017,
                                 0.15314098958512883611,
                                 0.14795473919839984176};
  static constexpr std::uint64_t offset = 0x3FF0000000000000u - 0x3FE6A09E667F3BCDu;
  static constexpr std::uint64_t sqrt_half = 0x3FE6A09E667F3BCDu;
  static constexpr std::uint64_t mantissa = 0x000FFFFFFFFFFFFFu;
  static constexpr std::uint64_t two_pow_mantissa_bits = 0x4330000000000000u;  // bits(2^52)
  static constexpr double exponent_shift = 4503599627370496.0 + 1023.0;
  static constexpr unsigned mantissa_bits = 52;
  static constexpr double ln2_hi = 0.6931471805598903;  // 42 bits
  static constexpr double ln2_lo = 5.497923018708371e-14;
  static constexpr double subnormal_scale = 4503599627370496.0;  // 2^52
  static constexpr double subnormal_exponent = 52.0;
};

// log x for x > 0 normal; e_adjust is subtracted from the exponent (the subnormal prescaling).
template <bool Adjust, class V>
V log_core(const V& x, const V& e_adjust) noexcept {
  using S = scalar_t<V>;
  using K = log_constants<S>;
  using U = uint_t<V>;
  const U u = as_uint(x) + U(K::offset);
  const V m = from_uint<V>((u & U(K::mantissa)) + U(K::sqrt_half));
  V e = from_uint<V>((u >> K::mantissa_bits) | U(K::two_pow_mantissa_bits)) -
        V(K::exponent_shift);  // exact
  if constexpr (Adjust) e = e - e_adjust;
  const V f = m - V(S(1));  // exact
  V l;
  if constexpr (std::is_same_v<S, float>) {
    l = mul_add(f * f, poly(f, K::c), f);
  } else {
    const V s = f / (V(2.0) + f);
    const V r = poly(s * s, K::c);
    l = mul_add(-s, f - r, f);
  }
  return mul_add(e, V(K::ln2_hi), mul_add(e, V(K::ln2_lo), l));
}

template <class V>
V log(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = log_constants<S>;
  using lim = std::numeric_limits<S>;
  if (all_of(both(x >= V(lim::min()), x <= V(lim::max())))) return log_core<false>(x, x);
  // Some lane is subnormal, zero, negative, infinite or NaN: prescale subnormals into the
  // normal range, then overwrite the special cases. Normal lanes get the fast path's bits.
  const auto sub = x < V(lim::min());
  const V y = log_core<true>(pick(sub, x * V(K::subnormal_scale), x),
                             pick(sub, V(K::subnormal_exponent), V(S(0))));
  V r = pick(x == V(lim::infinity()), x, y);
  r = pick(x == V(S(0)), V(-lim::infinity()), r);
  return pick(!(x >= V(S(0))), V(lim::quiet_NaN()), r);
}

}  // namespace math_detail

/// The natural logarithm of x, for float, double or an xsimd batch of either.
///
/// Error (against std::log in long double, see docs/simd_math.md): float <= 1 ulp, double
/// <= 1.5 ulp (measured 0.91 / 1.09), for every positive x including subnormals. log(+-0) = -inf,
/// log(x < 0) = NaN, log(+inf) = +inf, log(NaN) = NaN. Scalars and each lane of a batch give the
/// same bits.
template <real_value V>
V log(V x) noexcept {
  return math_detail::log(x);
}

}  // namespace nax::simd
