#include <nax/simd/arch.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "support/pow_cases.hpp"

namespace {

// The same bits, or both NaN (payloads aside).
template <class T>
bool same_bits(T x, T y) {
  return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("vector widths follow the chosen instruction set") {
  static_assert(nax::simd::width<float> * sizeof(float) == nax::simd::arch::alignment());
  static_assert(nax::simd::width<double> * 2 == nax::simd::width<float>);
  static_assert(nax::simd::is_vec_v<nax::simd::vec<float>>);
  static_assert(!nax::simd::is_vec_v<float>);
  static_assert(nax::simd::is_mask_v<nax::simd::mask<float>>);
#if XSIMD_WITH_FMA3_AVX2 && !defined(NAX_SIMD_ARCH)
  static_assert(std::is_same_v<nax::simd::arch, xsimd::fma3<xsimd::avx2>>);
#endif
  CHECK(nax::simd::width<std::int32_t> == nax::simd::width<float>);
}

TEST_CASE_TEMPLATE("row vectors: AVX-512 where the flags enable it; join keeps lane order", T,
                   float, double) {
  using W = nax::simd::row_vec<T>;
  using H = nax::simd::vec<T>;
  static_assert(W::size == H::size || W::size == 2 * H::size);
#if XSIMD_WITH_AVX512F && !defined(NAX_SIMD_ARCH) && !defined(NAX_ROW_SIMD_ARCH)
  static_assert(sizeof(typename W::register_type) == 64);
#elif !XSIMD_WITH_AVX512F && !defined(NAX_ROW_SIMD_ARCH)
  static_assert(std::is_same_v<W, H>);
#endif
  if constexpr (W::size == 2 * H::size) {
    alignas(64) T in[W::size], out[W::size];
    for (std::size_t j = 0; j < W::size; ++j) in[j] = T(j) * T(1.5) - T(7);
    const W joined = nax::simd::join<W>(H::load_aligned(in), H::load_aligned(in + H::size));
    joined.store_aligned(out);
    for (std::size_t j = 0; j < W::size; ++j) CHECK(out[j] == in[j]);
  }
}

TEST_CASE_TEMPLATE("helpers agree on scalars and vectors", T, float, double) {
  using V = nax::simd::vec<T>;
  const T a = T(-2.5), b = T(4);
  CHECK(nax::simd::max(a, b) == b);
  CHECK(nax::simd::min(a, b) == a);
  CHECK(nax::simd::abs(a) == T(2.5));
  CHECK(nax::simd::sqrt(b) == T(2));
  CHECK(nax::simd::fma(a, b, T(1)) == T(-9));
  CHECK(nax::simd::pow(b, T(0.5)) == doctest::Approx(2));
  CHECK(nax::simd::select(true, a, b) == a);
  const V va(a), vb(b);
  CHECK(nax::simd::max(va, vb).get(0) == b);
  CHECK(nax::simd::min(va, vb).get(1) == a);
  CHECK(nax::simd::abs(va).get(0) == T(2.5));
  CHECK(nax::simd::sqrt(vb).get(0) == T(2));
  CHECK(nax::simd::fma(va, vb, V(T(1))).get(0) == T(-9));
  CHECK(nax::simd::select(va < vb, va, vb).get(0) == a);
  const auto yes = va < vb, no = vb < va;  // masks: where over bool values
  CHECK(nax::simd::select(yes, no, yes).get(0) == false);
  CHECK(nax::simd::select(no, no, yes).get(0) == true);
  for (T x : {T(0.3), T(1.7), T(2), T(9.25)})
    for (T y : {T(-1.5), T(0.5), T(3.1)})  // one body: a scalar gives a lane's bits
      CHECK(nax::simd::pow(x, y) == nax::simd::pow(V(x), V(y)).get(0));
  CHECK(nax::simd::logical_and(true, false) == false);
  CHECK(nax::simd::logical_or(true, false) == true);
  CHECK(nax::simd::logical_not(false) == true);
  CHECK(nax::simd::logical_not(va < vb).get(0) == false);
  CHECK(nax::simd::abs(std::int32_t(-3)) == 3);
  CHECK(nax::simd::abs(std::uint8_t(3)) == 3);
}

TEST_CASE_TEMPLATE("pow: xsimd's bits where its exp is defined, +inf, 0 or NaN beyond", T, float,
                   double) {
  using V = nax::simd::vec<T>;
  using lim = std::numeric_limits<T>;
  // Inside exp's range xsimd::pow is defined: the same operations give the same bits, x = +-0
  // aside (xsimd gives 0 for every y there; C's rules, below, do not).
  for (T x : {T(-4), T(-2.5), T(-1), T(0.3), T(1), T(2), T(3.75)})
    for (T y : {T(-10), T(-3), T(-2.5), T(-1), T(0), T(0.5), T(1), T(2), T(3), T(7.25)}) {
      const T want = xsimd::pow(V(x), V(y)).get(0), got = nax::simd::pow(x, y);
      CHECK(same_bits(got, want));
    }
  // y ln|x| far past exp's range, infinite or NaN: xsimd's exp converts it to an integer first,
  // which was undefined behaviour for doubles (found by the run fuzz target under UBSan).
  const T big = lim::max() / 2, inf = lim::infinity();
  CHECK(nax::simd::pow(big, T(4)) == inf);
  CHECK(nax::simd::pow(T(2), T(1e6)) == inf);
  CHECK(nax::simd::pow(T(2), T(-1e6)) == T(0));
  CHECK(nax::simd::pow(T(0.5), T(1e6)) == T(0));
  CHECK(nax::simd::pow(T(-2), T(1000001)) == -inf);  // an odd power keeps the sign
  CHECK(nax::simd::pow(T(-2), T(1e6)) == inf);
  CHECK(nax::simd::pow(T(2), inf) == inf);
  CHECK(nax::simd::pow(T(2), -inf) == T(0));
  CHECK(nax::simd::pow(T(0.5), inf) == T(0));
  CHECK(nax::simd::pow(T(-2), inf) == inf);
  CHECK(std::isnan(nax::simd::pow(lim::quiet_NaN(), T(2))));
  CHECK(std::isnan(nax::simd::pow(T(2), lim::quiet_NaN())));
  CHECK(std::isnan(nax::simd::pow(T(-2), lim::quiet_NaN())));
  CHECK(std::isnan(nax::simd::pow(T(-2), T(0.5))));  // a negative base to a non-integer
  CHECK(nax::simd::pow(T(0), T(3)) == T(0));
}

// C's special cases (Annex F.10.4.4), in every lane of a vector and as a scalar (one lane).
TEST_CASE_TEMPLATE("pow: std::pow's special cases (C Annex F), vector lanes and scalars", T, float,
                   double) {
  using V = nax::simd::vec<T>;
  pow_cases::check_clauses<T>([](const std::vector<T>& x, const std::vector<T>& y) {
    std::vector<T> out(x.size());
    std::size_t i = 0;
    for (; i + V::size <= x.size(); i += V::size)
      nax::simd::pow(V::load_unaligned(x.data() + i), V::load_unaligned(y.data() + i))
          .store_unaligned(out.data() + i);
    for (; i < x.size(); ++i) out[i] = nax::simd::pow(x[i], y[i]);
    return out;
  });
  pow_cases::check_clauses<T>([](const std::vector<T>& x, const std::vector<T>& y) {
    std::vector<T> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = nax::simd::pow(x[i], y[i]);
    return out;
  });
}

// Elsewhere within the tolerance of the typed layer's pow test (tests/typed/elementwise_math.cpp)
// of std::pow in long double, negative bases with integer exponents included.
TEST_CASE_TEMPLATE("pow: random operands within tolerance of std::pow", T, float, double) {
  const double rel = (std::is_same_v<T, float> ? 2e-6 : 1e-13) * 16;
  std::uint32_t s = 12345;
  auto next = [&s](double lo, double hi) {
    s = s * 1664525u + 1013904223u;
    return lo + (hi - lo) * (s >> 8) / double(1u << 24);
  };
  std::size_t bad = 0;
  for (int i = 0; i < 20000; ++i) {
    const T x = static_cast<T>(next(-8, 8));
    T y = static_cast<T>(next(-8, 8));
    if (i % 2 == 0) y = std::round(y);  // (a negative x then has a real power)
    const T want =
        static_cast<T>(std::pow(static_cast<long double>(x), static_cast<long double>(y)));
    const T got = nax::simd::pow(x, y);
    const bool ok = std::isnan(want)   ? std::isnan(got)
                    : std::isinf(want) ? got == want
                                       : std::abs(double(got) - double(want)) <=
                                             rel * std::max(1.0, std::abs(double(want)));
    if (!ok && bad++ < 3) FAIL_CHECK("pow(", x, ", ", y, ") = ", got, ", want ", double(want));
  }
  CHECK(bad == 0);
}

TEST_CASE_TEMPLATE("max and min: a NaN operand gives NaN; a lane gives the scalar's bits", T, float,
                   double) {
  using V = nax::simd::vec<T>;
  using lim = std::numeric_limits<T>;
  const T values[] = {lim::quiet_NaN(), -lim::infinity(), T(-1), T(-0.0), T(0), T(2),
                      lim::infinity()};
  for (T a : values)
    for (T b : values) {
      CAPTURE(a);
      CAPTURE(b);
      const T mx = nax::simd::max(a, b), mn = nax::simd::min(a, b);
      if (std::isnan(a) || std::isnan(b)) {
        CHECK(std::isnan(mx));
        CHECK(std::isnan(mn));
      } else {
        CHECK(mx == std::max(a, b));  // (a tie, +0 and -0, gives a, as std::max does)
        CHECK(mn == std::min(a, b));
      }
      for (std::size_t lane = 0; lane < V::size; ++lane) {
        CHECK(same_bits(nax::simd::max(V(a), V(b)).get(lane), mx));
        CHECK(same_bits(nax::simd::min(V(a), V(b)).get(lane), mn));
      }
    }
  // Integers keep their instructions.
  CHECK(nax::simd::max(nax::simd::vec<std::int32_t>(-3), nax::simd::vec<std::int32_t>(2)).get(0) ==
        2);
  CHECK(nax::simd::min(std::int32_t(-3), std::int32_t(2)) == -3);
}
