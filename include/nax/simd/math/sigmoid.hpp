#pragma once
// nax::simd::sigmoid: the logistic function 1 / (1 + e^-x) for float, double and xsimd batches.

#include <nax/core/isa.hpp>
#include <nax/simd/math/exp.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// sigmoid(v) = num / den with e = e^-|v| <= 1 (never overflows): den = 1 + e, num = 1 for
// v >= 0 and e for v < 0 (e^v / (1 + e^v)), so large negative v keeps its relative accuracy
// down to the subnormals instead of cancelling or flushing to 0.
template <class V>
void logistic_parts(const V& v, V& num, V& den) noexcept {
  using S = scalar_t<V>;
  const V e = math_detail::exp<true>(clear_sign(v));  // e^-|v|
  den = V(S(1)) + e;
  num = pick(v < V(S(0)), e, V(S(1)));
}

// sigmoid itself: 1 / (1 + e^-x) is as accurate (e^-x's relative error passes through the add
// and the division almost unchanged) and two operations cheaper than num / den; it only loses
// what lies below the normal range: for x < -88.7 (double: -709.8) e^-x overflows and the
// result is 0 where the true one is subnormal.
template <class V>
V sigmoid(const V& x) noexcept {
  using S = scalar_t<V>;
  return V(S(1)) / (V(S(1)) + math_detail::exp<true>(x));  // exp<true>(x) = e^-x
}

}  // namespace math_detail

/// The logistic sigmoid 1 / (1 + e^-x), for float, double or an xsimd batch of either.
///
/// Error (against long double, see docs/simd_math.md): float <= 2.5 ulp, double <= 2.5 ulp,
/// relative, wherever the result is a normal number (large negative x included: no 1 - ...
/// cancellation); results below the normal range are within 1 unit of the smallest subnormal
/// or flushed to 0 (float: x < -88.7, double: x < -709.8). sigmoid(+inf) = 1,
/// sigmoid(-inf) = 0, sigmoid(NaN) = NaN. Scalars and each lane of a batch give the same bits.
template <real_value V>
V sigmoid(V x) noexcept {
  return math_detail::sigmoid(x);
}

}  // namespace nax::simd
