#pragma once
// nax::simd::tanh: the hyperbolic tangent for float, double and xsimd batches of either.

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// tanh x = x P(x^2) / Q(x^2), P(0) = Q(0) = 1 (so tanh x = x exactly for tiny x), fitted up to
// where tanh rounds to 1. Past the fit the rational keeps growing: at +-clamp it is more than
// 10 ulp beyond +-1, more than rounding can take back, so clamping x to +-clamp and the result
// to [-1, 1] gives exactly +-1 from there on (checked with the rounded coefficients).
// P and Q: rational minimax (relative error) by a Remez exchange in 50-digit mpmath, started
// from a linearised least-squares fit; our own fitter, coefficients rounded to S.
template <class S>
struct tanh_constants;

// Degree 4/4 in x^2, relative error 2.4e-8 before rounding, on |x| <= 9.1; 1 + 1.6e-6 at 10.
template <>
struct tanh_constants<float> {
  static constexpr float p[] = {1.0f, 0.13377404751006802104f, 0.003491178847433731805f,
                                0.000020532315542557985226f, 1.3240525763552842608e-8f};
  static constexpr float q[] = {1.0f, 0.46710724984033240463f, 0.025860486445917706716f,
                                0.00032782409619820858712f, 7.7314807971761688822e-7f};
  static constexpr float clamp = 10.0f;
};

// Degree 10/10 in x^2, relative error 1.7e-19 before rounding, on |x| <= 19.1; 1 + 7.7e-15
// at 21.
template <>
struct tanh_constants<double> {
  static constexpr double p[] = {1.0,
                                 0.15345553711771632971,
                                 0.0062241015377089247663,
                                 0.00010329553754868375904,
                                 8.3125148378773556024e-7,
                                 3.4785934046181121888e-9,
                                 7.6487959371911770213e-12,
                                 8.4593050922107943743e-15,
                                 4.1829742814117298894e-18,
                                 7.0503984094176233389e-22,
                                 1.7096832763709519737e-26};
  static constexpr double q[] = {1.0,
                                 0.48678887045104966156,
                                 0.035153725021392149414,
                                 0.00088427511946007595028,
                                 0.000010083141718054108254,
                                 5.8244501092761159852e-8,
                                 1.770233149445152583e-10,
                                 2.7861831042460011254e-13,
                                 2.1045347946836608986e-16,
                                 6.3912665655376236213e-20,
                                 4.9982338854024786576e-24};
  static constexpr double clamp = 21.0;
};

template <class V>
V tanh(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = tanh_constants<S>;
  const V c = clamp_nan(x, -K::clamp, K::clamp);
  const V z = c * c;
  return clamp_nan((c * poly(z, K::p)) / poly(z, K::q), S(-1), S(1));
}

}  // namespace math_detail

/// The hyperbolic tangent of x, for float, double or an xsimd batch of either.
///
/// Error (against std::tanh in long double, see docs/simd_math.md): float <= 5.5 ulp, double
/// <= 7.5 ulp (measured 5.19 / 6.85: rounding in P and Q; the fit itself is 0.2 ulp), relative
/// for every x (tanh x = x for tiny x, -0 kept); tanh(+-inf) = +-1,
/// tanh(NaN) = NaN. Scalars and each lane of a batch give the same bits.
template <real_value V>
V tanh(V x) noexcept {
  return math_detail::tanh(x);
}

}  // namespace nax::simd
