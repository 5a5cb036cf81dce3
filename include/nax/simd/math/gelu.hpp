#pragma once
// nax::simd::gelu: x Phi(x) = x (1 + erf(x / sqrt2)) / 2, the exact GELU, for float, double and
// xsimd batches of either.

#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/simd/math/exp.hpp>
#include <nax/simd/math/lanes.hpp>
#include <nax/simd/math/normal_tail.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// x Phi(x) = relu(x) - |x| Phi(-|x|), and Phi(-t) = e^(-t^2/2) g(t) (normal_tail.hpp): one
// formula for every x, accurate relative to the result for large negative x too, where
// 1 + erf(x/sqrt2) would cancel. t^2 is split exactly (t^2 = h + l by fma) because e^(-t^2/2)
// amplifies an error in t^2 by t^2/2 (50 at t = 10); e^(-l/2) ~ 1 - l/2.
template <class V>
V gelu(const V& x) noexcept {
  using S = scalar_t<V>;
  using K = normal_tail_constants<S>;
  const V t = min_nan(K::t_max, clear_sign(x));  // Phi(-t_max) is 0 in S
  const V h = t * t;
  V l;  // t^2 - h, exactly
  if constexpr (fused_fma) {
    l = mul_add(t, t, -h);
  } else {  // Dekker: split t into halves whose products are exact
    const V c = t * V(std::is_same_v<S, float> ? S(4097) : S(134217729));  // 2^12+1, 2^27+1
    const V hi = c - (c - t);
    const V lo = t - hi;
    l = ((hi * hi - h) + V(S(2)) * hi * lo) + lo * lo;
  }
  V e = math_detail::exp(h * V(S(-0.5)));
  e = mul_add(e, l * V(S(-0.5)), e);
  // |x| Phi(-|x|) = (t g(t)) e: t g(t) ~ 0.4 first, so the product with e rounds once even
  // where e alone would already be below the normal range.
  const V tg = t * normal_tail(t);
  // relu by a select, not max: max(0, -0) is +0 or -0 depending on the instruction.
  return mul_add(-tg, e, pick(x > V(S(0)), x, V(S(0))));
}

}  // namespace math_detail

/// The exact (erf) GELU x Phi(x), for float, double or an xsimd batch of either.
///
/// Error (against long double 0.5 x erfc(-x/sqrt2), see docs/simd_math.md): float <= 7 ulp,
/// double <= 8 ulp (measured 6.5 / 7.8), relative, wherever the result is normal (large
/// negative x included); subnormal results within 4 units of the smallest subnormal;
/// gelu(+inf) = +inf, gelu(-inf) = 0, gelu(NaN) = NaN. Scalars and each lane of a batch give
/// the same bits.
template <real_value V>
V gelu(V x) noexcept {
  return math_detail::gelu(x);
}

}  // namespace nax::simd
