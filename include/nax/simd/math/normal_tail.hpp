#pragma once
// The scaled normal tail g(t) = Phi(-t) e^(t^2/2) for t >= 0 (Phi: the standard normal CDF),
// which erf and gelu build on. g is smooth, g(0) = 1/2 and g(t) ~ 1/(t sqrt(2 pi)); with it,
// Phi(-t) = e^(-t^2/2) g(t) keeps its relative accuracy far into the tail, where 1 + erf would
// cancel.

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// g(t) = P(t) / Q(t), Q(0) = 1: rational minimax (relative error) by a Remez exchange in
// 50-digit mpmath from a linearised least-squares start, our own fitter; rounded to S.
template <class S>
struct normal_tail_constants;

// Degree 4/5 on [0, 15] (Phi(-15) is below float's subnormals): relative error 6.3e-9.
template <>
struct normal_tail_constants<float> {
  static constexpr float p[] = {0.5000000031238992167f, 0.43931543355514334513f,
                                0.18399307755830472364f, 0.040889253546326783162f,
                                0.0041544465226826290285f};
  static constexpr float q[] = {1.0f,
                                1.6765158739667417531f,
                                1.2056472236259374f,
                                0.47147191924672215364f,
                                0.10250026645434661683f,
                                0.010413541662189112145f};
  static constexpr float t_max = 15.0f;
};

// Degree 10/11 on [0, 38.5] (Phi(-38.5) is below double's subnormals): relative error 9.1e-19.
template <>
struct normal_tail_constants<double> {
  static constexpr double p[] = {
      0.50000000000000000044,   0.82762995119916600423,   0.6791504635762135148,
      0.35699211539265212351,   0.13187371958087888567,   0.035609309852093305765,
      0.0071086536333309936737, 0.0010372355816573671219, 0.00010627255462204531921,
      6.952901200560573086e-6,  2.2331186053901815353e-7};
  static constexpr double q[] = {1.0,
                                 2.4531444632011975699,
                                 2.8156270197596877678,
                                 1.9999188474980783861,
                                 0.97908033142752195555,
                                 0.34784996502621367107,
                                 0.091824410573252286823,
                                 0.018084018453177468755,
                                 0.002617392375386439145,
                                 0.00026694555005329165776,
                                 0.000017428338740072086783,
                                 5.597598236874229164e-7};
  static constexpr double t_max = 39.0;  // a little past the fit: e^(-t^2/2) is 0 there
};

/// g(t) for 0 <= t <= t_max.
template <class V>
V normal_tail(const V& t) noexcept {
  using K = normal_tail_constants<scalar_t<V>>;
  return poly(t, K::p) / poly(t, K::q);
}

}  // namespace math_detail
}  // namespace nax::simd
