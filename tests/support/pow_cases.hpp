#pragma once
// pow's special cases, those of C's Annex F (F.10.4.4, std::pow's), one list per clause with the
// value the clause gives, for the tests of every layer that runs pow (tests/simd/arch.cpp,
// tests/typed/elementwise_math.cpp, tests/runtime/pow.cpp): each checks, clause by clause, that
// its layer gives the clause's value bit for bit (any NaN where the clause says NaN) and that
// std::pow does too (the list is right). Every value is exact in float and double.

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace pow_cases {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

struct pair {
  double x, y, want;  // want NaN: any NaN
};

struct clause {
  const char* name;
  std::vector<pair> pairs;
};

inline const std::vector<clause>& clauses() {
  static const std::vector<clause> all{
      {"pow(+-0, y < 0 an odd integer) = +-inf",
       {{0.0, -1, inf}, {-0.0, -1, -inf}, {0.0, -3, inf}, {-0.0, -3, -inf}}},
      {"pow(+-0, -inf) = +inf, pow(+-0, y < 0 not an odd integer) = +inf",
       {{0.0, -inf, inf},
        {-0.0, -inf, inf},
        {0.0, -2, inf},
        {-0.0, -2, inf},
        {-0.0, -0.5, inf},
        {0.0, -1e30, inf}}},
      {"pow(+-0, y > 0 an odd integer) = +-0",
       {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {0.0, 3, 0.0}, {-0.0, 3, -0.0}}},
      {"pow(+-0, y > 0 not an odd integer) = +0",
       {{0.0, 2, 0.0},
        {-0.0, 2, 0.0},
        {-0.0, 0.5, 0.0},
        {0.0, inf, 0.0},
        {-0.0, inf, 0.0},
        {-0.0, 1e30, 0.0}}},
      {"pow(-1, +-inf) = 1", {{-1, inf, 1}, {-1, -inf, 1}}},
      {"pow(+1, y) = 1 for any y, NaN too",
       {{1, nan, 1}, {1, -nan, 1}, {1, inf, 1}, {1, -inf, 1}, {1, -3, 1}, {1, 0.5, 1}}},
      {"pow(x, +-0) = 1 for any x, NaN too",
       {{nan, 0.0, 1},
        {nan, -0.0, 1},
        {inf, 0.0, 1},
        {-inf, -0.0, 1},
        {0.0, 0.0, 1},
        {-0.0, -0.0, 1},
        {-2.5, 0.0, 1},
        {3, -0.0, 1}}},
      {"pow(x < 0 finite, y finite not an integer) = NaN",
       {{-2, 0.5, nan}, {-0.5, -2.5, nan}, {-1, 0.5, nan}, {-3, 1.5, nan}}},
      {"pow(x, -inf) = +inf for |x| < 1, +0 for |x| > 1",
       {{0.5, -inf, inf}, {-0.5, -inf, inf}, {2, -inf, 0.0}, {-2, -inf, 0.0}}},
      {"pow(x, +inf) = +0 for |x| < 1, +inf for |x| > 1",
       {{0.5, inf, 0.0}, {-0.5, inf, 0.0}, {2, inf, inf}, {-2, inf, inf}}},
      {"pow(-inf, y): -0, +0, -inf, +inf by y < 0 or > 0 and odd integer or not",
       {{-inf, -1, -0.0},
        {-inf, -3, -0.0},
        {-inf, -2, 0.0},
        {-inf, -0.5, 0.0},
        {-inf, -inf, 0.0},
        {-inf, 1, -inf},
        {-inf, 3, -inf},
        {-inf, 2, inf},
        {-inf, 0.5, inf},
        {-inf, inf, inf}}},
      {"pow(+inf, y < 0) = +0, pow(+inf, y > 0) = +inf",
       {{inf, -1, 0.0},
        {inf, -0.5, 0.0},
        {inf, -inf, 0.0},
        {inf, 1, inf},
        {inf, 0.5, inf},
        {inf, inf, inf}}},
      {"a NaN operand otherwise gives NaN",
       {{nan, 1, nan},
        {nan, -inf, nan},
        {-nan, 3, nan},
        {2, nan, nan},
        {0.0, nan, nan},
        {-0.0, nan, nan},
        {-1, nan, nan},
        {inf, nan, nan},
        {nan, nan, nan}}},
      // Not a clause of its own: the sign of a negative x's power by the parity of a large y.
      // 2^25 is even in both types (it was odd to xsimd's is_odd, y - 1 rounding to y in
      // float); 2^24 - 1 is odd in both.
      {"pow(x < 0, y a large integer): the sign by y's parity",
       {{-2, 33554432, inf},
        {-0.5, 33554432, 0.0},
        {-1, 33554432, 1},
        {-1, 16777215, -1},
        {-1, -16777215, -1}}},
  };
  return all;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Whether `got` is what the clause says pow(x, y) is: the same bits, or any NaN for NaN.
template <class T>
bool is(T got, double want) {
  return std::isnan(want) ? std::isnan(got) : same_bits(got, static_cast<T>(want));
}

/// "pow(x, y) = got, want w", every digit shown.
template <class T>
std::string describe(T x, T y, T got, double want) {
  auto show = [](double v) {
    char s[64];
    std::snprintf(s, sizeof s, "%.17g", v);
    return std::string(s);
  };
  return "pow(" + show(x) + ", " + show(y) + ") = " + show(got) + ", want " + show(want);
}

/// Checks a layer's pow, `eval(xs, ys)` (elementwise, the results), against each clause (one
/// doctest subcase each) in T: its
/// pairs laid out cyclically over `n` elements (vector bodies and tails alike, where n is odd
/// and spans several vectors), every element the clause's value, and std::pow's (the list).
template <class T, class Eval>
void check_clauses(Eval eval, std::size_t n = 37) {
  for (const clause& c : clauses()) {
    SUBCASE(c.name) {
      std::vector<T> xs(n), ys(n);
      for (std::size_t i = 0; i < n; ++i) {
        const pair& p = c.pairs[i % c.pairs.size()];
        xs[i] = static_cast<T>(p.x);
        ys[i] = static_cast<T>(p.y);
      }
      const std::vector<T> got = eval(xs, ys);
      REQUIRE(got.size() == n);
      std::size_t bad = 0, bad_std = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double want = c.pairs[i % c.pairs.size()].want;
        if (!is(got[i], want) && bad++ < 3) FAIL_CHECK(describe(xs[i], ys[i], got[i], want));
        const T s = std::pow(xs[i], ys[i]);
        if (!is(s, want) && bad_std++ < 3) FAIL_CHECK("std::", describe(xs[i], ys[i], s, want));
      }
      CHECK(bad == 0);
      CHECK(bad_std == 0);
    }
  }
}

}  // namespace pow_cases
