#pragma once
// nax::simd::erf: the error function for float, double and xsimd batches of either.

#include <nax/core/isa.hpp>
#include <nax/simd/math/exp.hpp>
#include <nax/simd/math/lanes.hpp>
#include <nax/simd/math/normal_tail.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// |x| < 1: erf x = x P(x^2), a minimax polynomial (relative error, Remez exchange in 50-digit
// mpmath, our own fitter). |x| >= 1: erf x = sign(x) (1 - erfc|x|) with
// erfc a = 2 Phi(-a sqrt2) = 2 e^(-a^2) g(a sqrt2) (normal_tail.hpp); erfc|x| <= 0.16 there, so
// the subtraction loses nothing. Beyond `one` erf rounds to +-1.
template <class S>
struct erf_constants;

// Degree 6 in x^2, relative error 1.2e-9.
template <>
struct erf_constants<float> {
  static constexpr float c[] = {1.1283791657267259373f,     -0.37612625824315360491f,
                                0.11283585149181699248f,    -0.026853811949592620425f,
                                0.005188327700493752219f,   -0.00080101936743760684578f,
                                0.000078538613104912492499f};
  static constexpr float one = 4.0f;
};

// Degree 11 in x^2, relative error 7.3e-18.
template <>
struct erf_constants<double> {
  static constexpr double c[] = {
      1.1283791670955125657,     -0.3761263890318351954,      0.1128379167094418476,
      -0.026866170643111472349,  0.0052239776061185066904,    -0.00085483259293156930474,
      0.00012055293576926805601, -0.000014924712302354576612, 1.6447131573866856869e-6,
      -1.6206313767338631759e-7, 1.3710980395279499578e-8,    -7.7794684175630636563e-10};
  static constexpr double one = 6.0;
};

template <class V>
V erf(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = erf_constants<S>;
  const V a = clear_sign(x);
  const auto small = a < V(S(1));
  V r = x * poly(x * x, K::c);
  if (all_of(small)) return r;
  // Some lane has |x| >= 1 or is NaN (NaN: a = NaN below, so the tail gives NaN).
  const V t = min_nan(K::one, a);
  const V sqrt2 = V(S(1.41421356237309504880));
  const V erfc = (V(S(2)) * math_detail::exp<true>(t * t)) * normal_tail(t * sqrt2);
  const V tail = from_uint<V>(as_uint(V(S(1)) - erfc) | (as_uint(x) & uint_t<V>(as_uint(S(-0.0)))));
  return pick(small, r, tail);
}

}  // namespace math_detail

/// The error function, for float, double or an xsimd batch of either.
///
/// Error (against std::erf in long double, see docs/simd_math.md): float <= 2.5 ulp, double
/// <= 2 ulp (measured 2.30 / 1.51), relative, for every x; erf(+-inf) = +-1, erf(NaN) = NaN,
/// erf(-0) = -0. Scalars and each lane of a batch give the same bits.
template <real_value V>
V erf(V x) noexcept {
  return math_detail::erf(x);
}

}  // namespace nax::simd
