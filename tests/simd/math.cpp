// nax/simd/math.hpp: accuracy against long double references (the bounds documented in the
// headers and docs/simd_math.md), special values, and that scalars and every lane of a batch
// (whatever the other lanes hold) give the same bits.
//
// Sampling: uniform steps over [-20, 20] plus log-uniform magnitudes over the whole range, both
// signs, plus the neighbourhoods of each function's thresholds. Set NAX_SLOW_TESTS=1 for 16x as
// many points (and every float in [-20, 20] for exp, tanh and sigmoid).

#include <nax/simd/math.hpp>  // first: it carries the g++ 12 AVX-512 warning workaround

#include <nax/simd/arch.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/sanitizers.hpp"

namespace {

using ld = long double;
constexpr ld kPi = 3.141592653589793238462643383279502884L;
constexpr ld kSqrt2 = 1.414213562373095048801688724209698079L;

bool slow_tests() {
  const char* e = std::getenv("NAX_SLOW_TESTS");
  return e && *e && std::string(e) != "0";
}

// Instrumented builds run the vector code ~10x slower; sample less there.
constexpr std::size_t kScale = nax_test::sweep(4, 1);

// --- references -------------------------------------------------------------------------------
ld ref_exp(ld x) { return std::exp(x); }
ld ref_log(ld x) { return std::log(x); }
ld ref_tanh(ld x) { return std::tanh(x); }
ld ref_sigmoid(ld x) { return 1 / (1 + std::exp(-x)); }
ld ref_silu(ld x) { return x / (1 + std::exp(-x)); }
ld ref_erf(ld x) { return std::erf(x); }
ld ref_gelu(ld x) { return x * std::erfc(-x / kSqrt2) / 2; }
ld gelu_tanh_v(ld x) {
  const ld k0 = 2 * std::sqrt(2 / kPi);
  return x * (k0 + 0.044715L * k0 * x * x);  // (1 + tanh u) / 2 = sigmoid(2u)
}
ld ref_gelu_tanh(ld x) { return x / (1 + std::exp(-gelu_tanh_v(x))); }
ld ref_sin(ld x) { return std::sin(x); }
ld ref_cos(ld x) { return std::cos(x); }

// --- error in ulp -------------------------------------------------------------------------------
// |got - ref| in units of the spacing of T at ref (subnormal results: the smallest subnormal).
template <class T>
double ulp_error(T got, ld ref) {
  using lim = std::numeric_limits<T>;
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e300;
  if (std::isnan(got)) return 1e300;
  if (std::fabs(ref) > static_cast<ld>(lim::max()))  // rounds to +-inf or +-max
    return std::isinf(got) && std::signbit(got) == std::signbit(ref) ? 0 : 1e300;
  if (std::isinf(got)) return 1e300;
  int e = 0;
  std::frexp(ref, &e);
  e = std::max(e, lim::min_exponent);
  const ld ulp = std::ldexp(1.0L, e - lim::digits);
  return static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / ulp);
}

// --- the functions, as scalar and batch calls
// -----------------------------------------------------
template <class T>
using batch = xsimd::batch<T>;

struct function_info {
  const char* name;
  ld (*reference)(ld);
  bool positive_only;           // log
  double bound_f32, bound_f64;  // max ulp for normal results
  double per_v;                 // gelu_tanh: the bound grows by this many ulp per unit of |v|
  bool times_exp;               // silu, gelu_tanh: x e^v with e^v subnormal loses up to |x| ulp
  double sub_bound;             // subnormal results: max error in units of the smallest subnormal
  bool flushes;                 // sigmoid: 0 where the result is subnormal and e^-x overflows
};

template <class T, class X>
X call(int which, const X& x) {
  switch (which) {
    case 0: return nax::simd::exp(x);
    case 1: return nax::simd::log(x);
    case 2: return nax::simd::tanh(x);
    case 3: return nax::simd::sigmoid(x);
    case 4: return nax::simd::silu(x);
    case 5: return nax::simd::erf(x);
    case 6: return nax::simd::gelu(x);
    case 7: return nax::simd::gelu_tanh(x);
    case 8: return nax::simd::sin(x);
    default: return nax::simd::cos(x);
  }
}

// The bounds of docs/simd_math.md (measured maxima rounded up; see there).
const function_info kFunctions[] = {
    {"exp", ref_exp, false, 1.0, 1.0, 0, false, 1.0, false},
    {"log", ref_log, true, 1.0, 1.5, 0, false, 1.0, false},
    {"tanh", ref_tanh, false, 5.5, 7.5, 0, false, 1.0, false},
    {"sigmoid", ref_sigmoid, false, 2.5, 2.5, 0, false, 1.0, true},
    {"silu", ref_silu, false, 3.0, 3.0, 0, true, 400.0, false},
    {"erf", ref_erf, false, 2.5, 2.0, 0, false, 1.0, false},
    {"gelu", ref_gelu, false, 7.0, 8.0, 0, false, 4.0, false},
    {"gelu_tanh", ref_gelu_tanh, false, 3.0, 3.0, 2.5, true, 400.0, false},
    {"sin", ref_sin, false, 0.51, 1.0, 0, false, 1.0, false},
    {"cos", ref_cos, false, 0.51, 1.0, 0, false, 1.0, false},
};
constexpr int kFunctionCount = static_cast<int>(std::size(kFunctions));

template <class T>
std::vector<T> sample_points(bool positive_only) {
  std::vector<T> xs;
  const std::size_t n = kScale * (slow_tests() ? 16 : 1) * 25000;
  // Uniform steps over [-20, 20] (log: (0, 20]).
  for (std::size_t i = 0; i < n; ++i) {
    const ld u = static_cast<ld>(i) / static_cast<ld>(n);
    xs.push_back(positive_only ? T(20 * u + 1e-6L) : T(-20 + 40 * u));
  }
  // Log-uniform magnitudes over the whole finite range, random signs.
  std::mt19937_64 rng(20261121);
  const ld lo = std::log(static_cast<ld>(std::numeric_limits<T>::denorm_min()));
  const ld hi = std::log(static_cast<ld>(std::numeric_limits<T>::max()));
  std::uniform_real_distribution<double> uni(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    T x = T(std::exp(lo + (hi - lo) * static_cast<ld>(uni(rng))));
    if (!positive_only && (rng() & 1)) x = -x;
    xs.push_back(x);
  }
  // Around the thresholds where the algorithms switch or saturate.
  const T edges[] = {T(0),
                     T(1e-30),
                     T(1e-8),
                     T(0.5),
                     T(1),
                     T(2),
                     T(4),
                     T(5.9),
                     T(9.1),
                     T(15),
                     T(19.1),
                     T(38.5),
                     T(87.3),
                     T(88.7),
                     T(104),
                     T(708.3),
                     T(709.8),
                     T(745),
                     T(std::numeric_limits<T>::min())};
  for (T e : edges)
    for (T s : {T(1), T(-1)}) {
      if (positive_only && s < 0) continue;
      T x = s * e;
      for (int k = 0; k < 64; ++k) {
        xs.push_back(x);
        x = std::nextafter(x, s * std::numeric_limits<T>::infinity());
      }
    }
  return xs;
}

struct sweep_result {
  double max_ulp = 0;  // normal results, minus the allowance for |v| (gelu_tanh)
  double worst_x = 0;
  double max_sub_ulp = 0;      // subnormal results, in units of the smallest subnormal
  std::size_t mismatches = 0;  // scalar vs batch lanes
  std::size_t points = 0;
};

template <class T, class B>
sweep_result sweep(int which, const std::vector<T>& xs, const function_info& f) {
  sweep_result r;
  constexpr std::size_t w = B::size;
  alignas(64) T in[w], out[w];
  for (std::size_t i = 0; i < xs.size(); i += w) {
    for (std::size_t j = 0; j < w; ++j) in[j] = xs[std::min(i + j, xs.size() - 1)];
    // Every other batch carries a NaN in its last lane, so batches on the general paths are
    // compared with scalars on the fast paths.
    const bool poison = (i / w) % 2 == 1 && w > 1;
    if (poison) in[w - 1] = std::numeric_limits<T>::quiet_NaN();
    call<T>(which, B::load_aligned(in)).store_aligned(out);
    for (std::size_t j = 0; j < w; ++j) {
      const T s = call<T>(which, in[j]);
      if (std::memcmp(&s, &out[j], sizeof(T)) != 0 && !(std::isnan(s) && std::isnan(out[j]))) {
        if (r.mismatches < 5)
          MESSAGE(std::string(f.name), ": x = ", static_cast<double>(in[j]), " scalar ",
                  static_cast<double>(s), " lane ", static_cast<double>(out[j]));
        ++r.mismatches;
      }
      if (poison && j == w - 1) continue;
      ++r.points;
      const ld ref = f.reference(static_cast<ld>(in[j]));
      const double e = ulp_error<T>(out[j], ref);
      if (std::fabs(ref) < static_cast<ld>(std::numeric_limits<T>::min())) {
        // sigmoid flushes to 0 where e^-x overflows (documented).
        const bool flushed = f.flushes && out[j] == T(0) && std::isinf(std::exp(-in[j]));
        if (!flushed) r.max_sub_ulp = std::max(r.max_sub_ulp, e);
        continue;
      }
      // gelu_tanh: v = x (k0 + k1 x^2) is rounded (and so are k0, k1), and e^v amplifies an
      // error in v by |v|. silu, gelu_tanh: below the normal range of e^v, x e^v multiplies a
      // subnormal's rounding error by |x|.
      const ld v = f.per_v > 0 ? gelu_tanh_v(static_cast<ld>(in[j])) : static_cast<ld>(in[j]);
      double allowance = f.per_v * static_cast<double>(std::fabs(v));
      if (f.times_exp && std::exp(-std::fabs(v)) < static_cast<ld>(std::numeric_limits<T>::min()))
        allowance += static_cast<double>(std::fabs(in[j]));
      if (e - allowance > r.max_ulp) {
        r.max_ulp = e - allowance;
        r.worst_x = static_cast<double>(in[j]);
      }
    }
  }
  return r;
}

template <class T>
void check_accuracy() {
  for (int which = 0; which < kFunctionCount; ++which) {
    const function_info& f = kFunctions[which];
    const std::vector<T> xs = sample_points<T>(f.positive_only);
    const sweep_result r = sweep<T, batch<T>>(which, xs, f);
    // Without FMA the multiply-adds round twice: a little more error.
    const double documented = sizeof(T) == 4 ? f.bound_f32 : f.bound_f64;
    const double bound = nax::simd::math_detail::fused_fma ? documented : 1.25 * documented + 0.5;
    INFO(std::string(f.name), std::string(sizeof(T) == 4 ? " float" : " double"), ": ", r.points,
         " points, max ", r.max_ulp, " ulp at x = ", r.worst_x, "; subnormal results within ",
         r.max_sub_ulp, " units of the smallest subnormal");
#ifdef NAX_MATH_REPORT  // the numbers of docs/simd_math.md's table
    MESSAGE(std::string(f.name), std::string(sizeof(T) == 4 ? " float" : " double"), ": ", r.points,
            " points, max ", r.max_ulp, " ulp at x = ", r.worst_x, "; subnormal results within ",
            r.max_sub_ulp);
#endif
    CHECK(r.max_ulp <= bound);
    CHECK(r.mismatches == 0);
    // Subnormal results: most round once or twice; silu and gelu_tanh multiply a rounded
    // subnormal e^v by |x| <= 800 (< 0.5 |x| + 1 units).
    CHECK(r.max_sub_ulp <= f.sub_bound);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("accuracy within the documented bounds; scalars equal batch lanes", T, float,
                   double) {
  check_accuracy<T>();
}

#if XSIMD_WITH_FMA3_AVX2 && XSIMD_WITH_AVX512F
TEST_CASE_TEMPLATE("an AVX2+FMA batch gives the same bits as scalars and AVX-512", T, float,
                   double) {
  using narrow = xsimd::batch<T, xsimd::fma3<xsimd::avx2>>;
  for (int which = 0; which < kFunctionCount; ++which) {
    const std::vector<T> xs = sample_points<T>(kFunctions[which].positive_only);
    std::vector<T> some(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 8));
    some.insert(some.end(), xs.end() - 2000, xs.end());
    CHECK(sweep<T, narrow>(which, some, kFunctions[which]).mismatches == 0);
  }
}
#endif

// exp_in_range(v) must give exp(v)'s bits wherever every lane is within exp_fast_limit (the row
// ops check a row, then skip exp's own check), at both widths the kernels use.
template <class T, class V>
void check_exp_in_range() {
  const T limit = nax::simd::exp_fast_limit<T>;
  std::vector<T> xs = {-limit, limit, T(0), -T(0), std::nextafter(-limit, T(0))};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<T> u(-limit, limit), small(T(-1), T(1));
  for (int k = 0; k < 4000; ++k) xs.push_back(k % 2 ? u(rng) : small(rng));
  while (xs.size() % V::size) xs.push_back(T(0.5));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < xs.size(); i += V::size) {
    const V v = V::load_unaligned(xs.data() + i);
    alignas(64) T fast[V::size], full[V::size];
    nax::simd::exp_in_range(v).store_aligned(fast);
    nax::simd::exp(v).store_aligned(full);
    mismatches += static_cast<std::size_t>(std::memcmp(fast, full, sizeof fast) != 0);
  }
  CHECK(mismatches == 0);
}

TEST_CASE_TEMPLATE("exp_in_range gives exp's bits in range, at the kernels' widths", T, float,
                   double) {
  check_exp_in_range<T, nax::simd::vec<T>>();
  check_exp_in_range<T, nax::simd::row_vec<T>>();
}

TEST_CASE_TEMPLATE("every float in [-20, 20] (NAX_SLOW_TESTS)", T, float) {
  if (!slow_tests()) return;
  for (int which : {0, 2, 3}) {
    std::vector<T> xs;
    for (std::uint32_t b = std::bit_cast<std::uint32_t>(T(0));
         b <= std::bit_cast<std::uint32_t>(T(20)); ++b) {
      xs.push_back(std::bit_cast<T>(b));
      xs.push_back(-std::bit_cast<T>(b));
    }
    const sweep_result r = sweep<T, batch<T>>(which, xs, kFunctions[which]);
    INFO(std::string(kFunctions[which].name), ": max ", r.max_ulp, " ulp at ", r.worst_x);
    CHECK(r.max_ulp <= kFunctions[which].bound_f32);
    CHECK(r.mismatches == 0);
  }
}

namespace {
template <class T>
bool same(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}
// f(x) as a scalar and in every lane of a batch agree, and equal `want` (same bits, NaN: any NaN).
template <class T, class F>
void expect(F f, T x, T want) {
  INFO("x = ", static_cast<double>(x), ", want ", static_cast<double>(want));
  const T s = f(x);
  CHECK_MESSAGE(same(s, want), "scalar gives ", static_cast<double>(s));
  const batch<T> v = f(batch<T>(x));
  for (std::size_t i = 0; i < batch<T>::size; ++i)
    CHECK_MESSAGE(same(v.get(i), want), "lane gives ", static_cast<double>(v.get(i)));
}
}  // namespace

#define NAX_F(NAME) [](auto x) { return nax::simd::NAME(x); }

TEST_CASE_TEMPLATE("special values", T, float, double) {
  using lim = std::numeric_limits<T>;
  const T inf = lim::infinity(), nan = lim::quiet_NaN(), tiny = lim::denorm_min();
  const T big = lim::max();

  // exp: overflow to +inf, underflow to 0 through correctly rounded subnormals.
  expect(NAX_F(exp), T(0), T(1));
  expect(NAX_F(exp), T(-0.0), T(1));
  expect(NAX_F(exp), inf, inf);
  expect(NAX_F(exp), -inf, T(0));
  expect(NAX_F(exp), nan, nan);
  expect(NAX_F(exp), big, inf);
  expect(NAX_F(exp), -big, T(0));
  expect(NAX_F(exp), T(sizeof(T) == 4 ? 89 : 710), inf);
  expect(NAX_F(exp), T(sizeof(T) == 4 ? -104 : -746), T(0));
  const T sub_x = sizeof(T) == 4 ? T(-100) : T(-730);  // e^x is subnormal
  CHECK(ulp_error<T>(nax::simd::exp(sub_x), std::exp(static_cast<ld>(sub_x))) <= 1);
  CHECK(nax::simd::exp(sub_x) > 0);

  // log: -inf at +-0, NaN below 0, subnormals exact in range.
  expect(NAX_F(log), T(1), T(0));
  expect(NAX_F(log), T(0), -inf);
  expect(NAX_F(log), T(-0.0), -inf);
  expect(NAX_F(log), T(-1), nan);
  expect(NAX_F(log), -inf, nan);
  expect(NAX_F(log), inf, inf);
  expect(NAX_F(log), nan, nan);
  CHECK(ulp_error<T>(nax::simd::log(tiny), std::log(static_cast<ld>(tiny))) <= 1);
  CHECK(ulp_error<T>(nax::simd::log(big), std::log(static_cast<ld>(big))) <= 1);

  // tanh: odd, exact +-1 at the ends, x for tiny x.
  expect(NAX_F(tanh), T(0), T(0));
  expect(NAX_F(tanh), T(-0.0), T(-0.0));
  expect(NAX_F(tanh), inf, T(1));
  expect(NAX_F(tanh), -inf, T(-1));
  expect(NAX_F(tanh), big, T(1));
  expect(NAX_F(tanh), T(30), T(1));
  expect(NAX_F(tanh), nan, nan);
  expect(NAX_F(tanh), T(1e-20), T(1e-20));
  expect(NAX_F(tanh), tiny, tiny);

  // sigmoid: saturates to exactly 1 and 0, relative accuracy far into the negative side.
  expect(NAX_F(sigmoid), T(0), T(0.5));
  expect(NAX_F(sigmoid), inf, T(1));
  expect(NAX_F(sigmoid), -inf, T(0));
  expect(NAX_F(sigmoid), T(100), T(1));
  expect(NAX_F(sigmoid), nan, nan);
  const T neg = sizeof(T) == 4 ? T(-80) : T(-700);  // sigmoid(x) ~ e^x, still normal
  CHECK(ulp_error<T>(nax::simd::sigmoid(neg), ref_sigmoid(neg)) <= 2);

  // sin, cos: the signed zero kept; inf and NaN give NaN; beyond the reduction's range, the C
  // library's double result (rounded to T).
  expect(NAX_F(sin), T(0), T(0));
  expect(NAX_F(sin), T(-0.0), T(-0.0));
  expect(NAX_F(sin), tiny, tiny);
  expect(NAX_F(sin), inf, nan);
  expect(NAX_F(sin), -inf, nan);
  expect(NAX_F(sin), nan, nan);
  expect(NAX_F(cos), T(0), T(1));
  expect(NAX_F(cos), T(-0.0), T(1));
  expect(NAX_F(cos), inf, nan);
  expect(NAX_F(cos), nan, nan);
  expect(NAX_F(sin), big, T(std::sin(static_cast<double>(big))));
  expect(NAX_F(cos), T(1e7), T(std::cos(1e7)));
  // silu
  expect(NAX_F(silu), T(0), T(0));
  expect(NAX_F(silu), inf, inf);
  expect(NAX_F(silu), -inf, T(-0.0));
  expect(NAX_F(silu), nan, nan);
  CHECK(ulp_error<T>(nax::simd::silu(neg), ref_silu(neg)) <= 2.5);

  // erf
  expect(NAX_F(erf), T(0), T(0));
  expect(NAX_F(erf), T(-0.0), T(-0.0));
  expect(NAX_F(erf), inf, T(1));
  expect(NAX_F(erf), -inf, T(-1));
  expect(NAX_F(erf), T(10), T(1));
  expect(NAX_F(erf), nan, nan);

  // gelu: accurate relative to the (tiny) result for large negative x.
  expect(NAX_F(gelu), T(0), T(0));
  expect(NAX_F(gelu), inf, inf);
  expect(NAX_F(gelu), -inf, T(0));
  expect(NAX_F(gelu), nan, nan);
  expect(NAX_F(gelu), T(50), T(50));
  const T gneg = sizeof(T) == 4 ? T(-12) : T(-37);  // gelu(x) ~ 1e-32 / 1e-298, normal
  CHECK(ulp_error<T>(nax::simd::gelu(gneg), ref_gelu(gneg)) <= 5);

  // gelu_tanh
  expect(NAX_F(gelu_tanh), T(0), T(0));
  expect(NAX_F(gelu_tanh), inf, inf);
  expect(NAX_F(gelu_tanh), -inf, T(-0.0));
  expect(NAX_F(gelu_tanh), nan, nan);
  expect(NAX_F(gelu_tanh), T(50), T(50));
}

TEST_CASE("scalar overloads take float and double; batches of any architecture") {
  static_assert(std::is_same_v<decltype(nax::simd::exp(1.0f)), float>);
  static_assert(std::is_same_v<decltype(nax::simd::log(1.0)), double>);
  static_assert(std::is_same_v<decltype(nax::simd::gelu(batch<float>(1))), batch<float>>);
  static_assert(!nax::simd::real_value<int>);
  static_assert(!nax::simd::real_value<xsimd::batch<std::int32_t>>);
  static_assert(nax::simd::real_value<xsimd::batch<double>>);
  CHECK(nax::simd::exp(1.0f) == doctest::Approx(2.718281828));
}
