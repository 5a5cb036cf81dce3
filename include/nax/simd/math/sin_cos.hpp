#pragma once
// nax::simd::sin and nax::simd::cos for float, double and xsimd batches of either.
//
// Both are computed in double: x = n pi/2 + r with |r| <= pi/4, then sin r or cos r by a
// polynomial, chosen and signed by n mod 4. Floats are widened to double and the result rounded
// once to float, so a float's sine is within half an ulp plus a double's error of the exact one.
// Where |x| > fast_limit (and for inf and NaN) a lane takes std::sin / std::cos of its value in
// double instead: Cody-Waite reduction with a fixed number of parts of pi/2 is exact only while
// n is small, and the C library reduces any argument exactly. The choice is the lane's own, so
// scalars and each lane of a batch give the same bits.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// sin r = r + r^3 S(r^2) and cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4. S and C: Chebyshev
// fits (mpmath's chebyfit, 60 digits) of degree 6 in r^2, relative error of the function below
// 1e-20 before rounding and 0.06 ulp (sin) / 0.01 ulp (cos) with the coefficients rounded.
struct trig_constants {
  static constexpr double s[] = {-0.16666666666666666666,    0.0083333333333333314921,
                                 -0.00019841269841265064947, 2.7557319219339166518e-6,
                                 -2.5052106232447577328e-8,  1.6058531618986146836e-10,
                                 -7.5866971177069179847e-13};
  static constexpr double c[] = {0.041666666666666666666,    -0.0013888888888888887865,
                                 0.000024801587301584646428, -2.7557319221402824394e-7,
                                 2.0876755791080423807e-9,   -1.1470460887609959107e-11,
                                 4.7458719020432915366e-14};
  // For float results: the first five of each (the rest add less than 1e-11 relative).
  static constexpr double s_short[] = {s[0], s[1], s[2], s[3], s[4]};
  static constexpr double c_short[] = {c[0], c[1], c[2], c[3], c[4]};
  static constexpr double two_over_pi = 0.6366197723675814;
  static constexpr double shift = 6755399441055744.0;  // 1.5 * 2^52: rounds to an integer
  // pi/2 = pio2[0] + ... + pio2[3] to 7e-49. The first three have 33 significant bits, so
  // n * pio2[i] is exact for |n| < 2^20, with or without FMA; the reduction then loses nothing
  // but the last rounding (x's that fall near a multiple of pi/2 included).
  static constexpr double pio2[] = {1.5707963267341256, 6.077100506303966e-11,
                                    2.0222662487111665e-21, 8.4784276603689e-32};
  // |x| <= fast_limit: |n| < 2^20.
  static constexpr double fast_limit = 1.6e6;
};

// sin x (Cos: cos x) of doubles by the reduction, for |x| <= fast_limit. Precise (double
// results): r is kept as r + r_lo and the polynomials take r_lo in. Otherwise (float results,
// computed in double): r alone and the polynomials' first five terms, 1e-11 relative, far below a
// float's rounding.
template <bool Cos, bool Precise, class V>
V sin_cos_reduced(const V& x) noexcept {
  using K = trig_constants;
  using U = uint_t<V>;
  const V t = mul_add(x, V(K::two_over_pi), V(K::shift));
  const V n = t - V(K::shift);
  const V r1 = mul_add(n, V(-K::pio2[0]), x);  // exact
  V sin_r, cos_r;
  if constexpr (Precise) {
    // r + r_lo = x - n pi/2 to about 2^-100 relative: the products by pio2[1] and pio2[2] are
    // exact; the subtraction of the first is rounded, and what it lost is kept (two-sum), with
    // the smaller parts, in the tail.
    const V b2 = n * V(K::pio2[1]);
    const V r2 = r1 - b2;
    const V b2_in = r2 - r1;  // the part of -b2 that r2 holds
    const V r2_lost = (r1 - (r2 - b2_in)) - (b2 + b2_in);
    const V tail = r2_lost - mul_add(n, V(K::pio2[3]), n * V(K::pio2[2]));
    const V r = r2 + tail;
    const V tail_in = r - r2;
    const V r_lo = (r2 - (r - tail_in)) + (tail - tail_in);
    const V z = r * r;
    // sin(r + r_lo) = sin r + r_lo cos r, cos(r + r_lo) = cos r - r_lo sin r, to the tail's
    // order.
    sin_r = r + mul_add(r * z, poly(z, K::s), r_lo * mul_add(z, V(-0.5), V(1.0)));
    // 1 - z/2 rounded, and what that rounding lost added back with the rest.
    const V half_z = z * V(0.5);
    const V w = V(1.0) - half_z;
    cos_r = w + mul_add(z * z, poly(z, K::c), mul_add(-r, r_lo, (V(1.0) - w) - half_z));
  } else {
    V r = mul_add(n, V(-K::pio2[1]), r1);
    r = mul_add(n, V(-K::pio2[2]), r);
    r = mul_add(n, V(-K::pio2[3]), r);
    const V z = r * r;
    sin_r = mul_add(r * z, poly(z, K::s_short), r);
    cos_r = mul_add(z * z, poly(z, K::c_short), mul_add(z, V(-0.5), V(1.0)));
  }
  // t's low bits are n (two's complement); cos x = sin(x + pi/2): one quadrant on.
  const U q = as_uint(t) + U(Cos ? 1 : 0);
  const U odd = U(0) - (q & U(1));  // all ones where cos r is the result
  const U bits = (as_uint(cos_r) & odd) | (as_uint(sin_r) & ~odd);
  const V y = from_uint<V>(bits ^ ((q & U(2)) << 62));  // negated in quadrants 2 and 3
  if constexpr (Cos)
    return y;
  else
    return pick(x == V(0), x, y);  // sin(-0) = -0: the sums above can give +0
}

template <bool Cos>
double sin_cos_library(double x) noexcept {
  return Cos ? std::cos(x) : std::sin(x);
}

// The lanes of a batch beyond the reduction (or inf or NaN): the C library's result, lane by
// lane. Out of line, so that the common path stays small.
template <bool Cos, class V>
[[gnu::noinline, gnu::cold]] V sin_cos_large(const V& x, const V& reduced) noexcept {
  constexpr std::size_t n = V::size;
  alignas(64) std::array<double, n> in{}, out{};
  x.store_aligned(in.data());
  reduced.store_aligned(out.data());
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(in[i]) <= trig_constants::fast_limit)) out[i] = sin_cos_library<Cos>(in[i]);
  return V::load_aligned(out.data());
}

// sin x or cos x of a double or a batch of doubles.
template <bool Cos, bool Precise, class V>
V sin_cos_double(const V& x) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    if (!(std::fabs(x) <= trig_constants::fast_limit)) return sin_cos_library<Cos>(x);
    return sin_cos_reduced<Cos, Precise>(x);
  } else {
    const V reduced = sin_cos_reduced<Cos, Precise>(x);
    if (all_of(clear_sign(x) <= V(trig_constants::fast_limit))) [[likely]]
      return reduced;
    return sin_cos_large<Cos>(x, reduced);
  }
}

// A batch of floats as two batches of doubles (its low and high halves), and back: exact, and
// the narrowing rounds to nearest, for every lane alike.
template <class A>
std::pair<xsimd::batch<double, A>, xsimd::batch<double, A>> widen(
    const xsimd::batch<float, A>& x) noexcept {
  using D = xsimd::batch<double, A>;
  constexpr std::size_t n = xsimd::batch<float, A>::size;
  static_assert(D::size * 2 == n, "a batch of doubles holds half as many lanes as one of floats");
#if defined(__AVX512F__)
  if constexpr (n == 16) {
    const __m512 v = x;
    return {D(_mm512_cvtps_pd(_mm512_castps512_ps256(v))),
            D(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))))};
  }
#endif
#if defined(__AVX__)
  if constexpr (n == 8) {
    const __m256 v = x;
    return {D(_mm256_cvtps_pd(_mm256_castps256_ps128(v))),
            D(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)))};
  }
#endif
#if defined(__SSE2__)
  if constexpr (n == 4) {
    const __m128 v = x;
    return {D(_mm_cvtps_pd(v)), D(_mm_cvtps_pd(_mm_movehl_ps(v, v)))};
  }
#endif
  alignas(64) std::array<float, n> f{};
  alignas(64) std::array<double, n> d{};
  x.store_aligned(f.data());
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<double>(f[i]);
  return {D::load_aligned(d.data()), D::load_aligned(d.data() + D::size)};
}
template <class A>
xsimd::batch<float, A> narrow(const xsimd::batch<double, A>& lo,
                              const xsimd::batch<double, A>& hi) noexcept {
  using F = xsimd::batch<float, A>;
  constexpr std::size_t n = F::size;
#if defined(__AVX512F__)
  if constexpr (n == 16) {
    const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)));
    return F(_mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1)));
  }
#endif
#if defined(__AVX__)
  if constexpr (n == 8)
    return F(
        _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1));
#endif
#if defined(__SSE2__)
  if constexpr (n == 4) return F(_mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi)));
#endif
  alignas(64) std::array<double, n> d{};
  alignas(64) std::array<float, n> f{};
  lo.store_aligned(d.data());
  hi.store_aligned(d.data() + n / 2);
  for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(d[i]);
  return F::load_aligned(f.data());
}

template <bool Cos, class V>
V sin_cos(const V& x) noexcept {
  if constexpr (std::is_same_v<V, float>) {
    return static_cast<float>(sin_cos_double<Cos, false>(static_cast<double>(x)));
  } else if constexpr (std::is_same_v<V, double> || std::is_same_v<scalar_t<V>, double>) {
    return sin_cos_double<Cos, true>(x);
  } else {
    const auto [lo, hi] = widen(x);
    return narrow(sin_cos_double<Cos, false>(lo), sin_cos_double<Cos, false>(hi));
  }
}

}  // namespace math_detail

/// sin x for float, double or an xsimd batch of either.
///
/// Error (against std::sin in long double, see docs/simd_math.md): float <= 0.5 ulp plus a
/// double's rounding (measured 0.50), double <= 1 ulp (measured 0.75), for every finite x;
/// sin(+-0) = +-0, sin(+-inf) = NaN, sin(NaN) = NaN. Scalars and each lane of a batch give the
/// same bits.
template <real_value V>
V sin(V x) noexcept {
  return math_detail::sin_cos<false>(x);
}

/// cos x for float, double or an xsimd batch of either; errors as sin's. cos(+-0) = 1,
/// cos(+-inf) = NaN, cos(NaN) = NaN.
template <real_value V>
V cos(V x) noexcept {
  return math_detail::sin_cos<true>(x);
}

}  // namespace nax::NAX_ISA::simd
