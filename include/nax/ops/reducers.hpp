#pragma once
// The bodies of the reductions, each defined once: an identity and a combine that runs on scalars
// and on xsimd vectors alike. The typed reductions, the runtime's reduce kernels and the row ops
// fold with these.

#include <limits>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/ops/reduce_kind.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA {
namespace reducers {

struct sum {
  static constexpr std::string_view name = "sum";
  template <class T>
  static constexpr T identity() {
    return T(0);
  }
  template <class X>
  static X combine(const X& a, const X& b) {
    return a + b;
  }
};
struct max {
  static constexpr std::string_view name = "max";
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity)
      return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }
  template <class X>
  static X combine(const X& a, const X& b) {
    return simd::max(a, b);
  }
};
struct min {
  static constexpr std::string_view name = "min";
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity)
      return std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::max();
  }
  template <class X>
  static X combine(const X& a, const X& b) {
    return simd::min(a, b);
  }
};

}  // namespace reducers

}  // namespace nax
