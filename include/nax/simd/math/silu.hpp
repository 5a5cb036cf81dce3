#pragma once
// nax::simd::silu: x * sigmoid(x) (the swish activation) for float, double and xsimd batches.

#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/simd/math/lanes.hpp>
#include <nax/simd/math/sigmoid.hpp>

namespace nax::NAX_ISA::simd {

namespace math_detail {

// x below this gives silu(x) = -0 in S (x e^x underflows); clamping there keeps -inf * 0 out.
template <class S>
inline constexpr S silu_floor = std::is_same_v<S, float> ? S(-200) : S(-800);

template <class V>
V silu(const V& x) noexcept {
  V num, den;
  logistic_parts(x, num, den);
  return (max_nan(silu_floor<scalar_t<V>>, x) * num) / den;
}

}  // namespace math_detail

/// x * sigmoid(x), for float, double or an xsimd batch of either.
///
/// Error (against long double, see docs/simd_math.md): float <= 3 ulp, double <= 3 ulp
/// (measured 2.83 / 2.89), relative, where e^x is normal (x > -87.3 / -708.4); below, x e^x
/// multiplies a subnormal's rounding by |x| (within |x|/2 + 1 ulp); silu(+inf) = +inf, silu(-inf) =
/// -0, silu(NaN) = NaN. Scalars and each lane of a batch give the same bits.
template <real_value V>
V silu(V x) noexcept {
  return math_detail::silu(x);
}

}  // namespace nax::simd
