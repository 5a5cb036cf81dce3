#pragma once
// nax::simd::gelu_tanh: the tanh approximation of GELU,
// x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, for float, double and xsimd batches.

#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>
#include <nax/simd/math/sigmoid.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// (1 + tanh u) / 2 = sigmoid(2u): x sigmoid(v) with v = x (k0 + k1 x^2), k0 = 2 sqrt(2/pi),
// k1 = 0.044715 k0. The sigmoid form keeps relative accuracy for large negative x, where
// 1 + tanh u cancels.
template <class V>
V gelu_tanh(const V& x) noexcept {
  using S = scalar_t<V>;
  const S k0 = S(1.5957691216057307117597842397375);             // 2 sqrt(2/pi)
  const S k1 = S(0.071354816272600248776338752279864);           // 0.044715 * 2 sqrt(2/pi)
  const S floor = std::is_same_v<S, float> ? S(-200) : S(-800);  // gelu_tanh = -0 below
  const V v = x * mul_add(V(k1), x * x, V(k0));
  V num, den;
  logistic_parts(v, num, den);
  return (max_nan(floor, x) * num) / den;
}

}  // namespace math_detail

/// The tanh approximation of GELU, for float, double or an xsimd batch of either.
///
/// Error (against the formula in long double, see docs/simd_math.md): <= 3 + 2.5 |v| ulp,
/// float and double, where v = x (k0 + k1 x^2) is the sigmoid's argument (8 ulp at |x| = 1, 30
/// at x = -4): v is rounded (so are k0, k1) and e^v turns an error in v into |v| times as many
/// ulp; the function itself is that sensitive. Where e^v is subnormal add |x| ulp. gelu_tanh(+inf)
/// = +inf, gelu_tanh(-inf) = -0, NaN gives NaN. Scalars and each lane of a batch give the same
/// bits.
template <real_value V>
V gelu_tanh(V x) noexcept {
  return math_detail::gelu_tanh(x);
}

}  // namespace nax::simd
