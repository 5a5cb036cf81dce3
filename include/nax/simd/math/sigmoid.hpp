#pragma once
// nax::simd::sigmoid: the logistic function 1 / (1 + e^-x) for float, double and xsimd batches.

#include <nax/simd/math/exp.hpp>
#include <nax/simd/math/lanes.hpp>

namespace nax::simd {

namespace math_detail {

// sigmoid(v) = num / den with e = e^-|v| <= 1 (never overflows): den = 1 + e, num = 1 for
// v >= 0 and e for v < 0 (e^v / (1 + e^v)), so large negative v keeps its relative accuracy
// down to the subnormals instead of cancelling or flushing to 0.
template <class V>
void logistic_parts(const V& v, V& num, V& den) noexcept {
  using S = scalar_t<V>;
  const V e = math_detail::exp(set_sign(v));
  den = V(S(1)) + e;
  num = pick(v < V(S(0)), e, V(S(1)));
}

template <class V>
V sigmoid(const V& x) noexcept {
  V num, den;
  logistic_parts(x, num, den);
  return num / den;
}

}  // namespace math_detail

/// The logistic sigmoid 1 / (1 + e^-x), for float, double or an xsimd batch of either.
///
/// Error (against long double, see docs/simd_math.md): float <= 2 ulp, double <= 2 ulp,
/// relative, for every x (large negative x gives e^x to that accuracy, subnormals included);
/// sigmoid(+inf) = 1, sigmoid(-inf) = 0, sigmoid(NaN) = NaN. Scalars and each lane of a batch
/// give the same bits.
template <real_value V>
V sigmoid(V x) noexcept {
  return math_detail::sigmoid(x);
}

}  // namespace nax::simd
