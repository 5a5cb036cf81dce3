// pow through the runtime: a graph's pow gives std::pow's special cases (C Annex F) in each way a
// graph runs it: one op unfused (the interpreter's elementwise kernel), in a fused group, and
// that group as native code (the native tier), for f32 and f64; random operands elsewhere give
// the interpreter's bits in every tier and stay within tolerance of std::pow.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/pow_cases.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

enum class way { unfused, fused, native };

g::compile_options options(way w) {
  g::compile_options o;
  o.fusion = w != way::unfused;
  o.native = {w == way::native ? g::native_policy::eager : g::native_policy::off, 16};
  return o;
}

// pow(x, y) over x[n], y[n] of T, run the way `w` says; `* 1.0` before and after (values keep
// their bits: -0, inf, NaN) so that the fused ways have a group of three ops to fuse.
template <class T>
std::vector<T> run_pow(way w, const std::vector<T>& x, const std::vector<T>& y) {
  constexpr dtype t = nax::dtype_of<T>;
  g::builder b;
  const g::value gx = b.parameter("x", shape::make(t, {"n"}));
  const g::value gy = b.parameter("y", shape::make(t, {"n"}));
  const g::value z = w == way::unfused ? g::pow(gx, gy) : g::pow(gx * 1.0, gy) * 1.0;
  auto e = g::compile(b, {z}, options(w));
  const shape s = shape::make(t, {dim::named("n", x.size())});
  const std::vector<dyn_tensor> out = e.run({dyn_tensor::wrap(s, const_cast<T*>(x.data())),
                                             dyn_tensor::wrap(s, const_cast<T*>(y.data()))});
  if (w == way::unfused) CHECK(e.program().steps.size() == 1);
  if (w != way::unfused) {
    REQUIRE(e.program().steps.size() == 1);
    CHECK(e.program().steps[0].kind() == g::op_kind::fused_elementwise);
  }
  if (w == way::native) REQUIRE(e.stats().native_ready == 1);  // (eager: compiled by the run)
  const T* p = out[0].data<T>();
  return std::vector<T>(p, p + x.size());
}

}  // namespace

TEST_CASE_TEMPLATE("graph pow: std::pow's special cases (C Annex F), unfused, fused and native", T,
                   float, double) {
  for (way w : {way::unfused, way::fused, way::native}) {
    CAPTURE(static_cast<int>(w));
    pow_cases::check_clauses<T>(
        [w](const std::vector<T>& x, const std::vector<T>& y) { return run_pow<T>(w, x, y); });
  }
}

TEST_CASE_TEMPLATE("graph pow: random operands, the same bits in every way, near std::pow", T,
                   float, double) {
  const std::size_t n = 4099;
  std::vector<T> x(n), y(n);
  std::uint32_t s = 99;
  auto next = [&s] {
    s = s * 1664525u + 1013904223u;
    return -8 + 16 * double(s >> 8) / double(1u << 24);
  };
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<T>(next());
    y[i] = static_cast<T>(i % 2 == 0 ? std::round(next()) : next());
  }
  const std::vector<T> base = run_pow<T>(way::unfused, x, y);
  CHECK(std::memcmp(run_pow<T>(way::fused, x, y).data(), base.data(), n * sizeof(T)) == 0);
  CHECK(std::memcmp(run_pow<T>(way::native, x, y).data(), base.data(), n * sizeof(T)) == 0);
  const double rel = (std::is_same_v<T, float> ? 2e-6 : 1e-13) * 16;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T want =
        static_cast<T>(std::pow(static_cast<long double>(x[i]), static_cast<long double>(y[i])));
    const bool ok = std::isnan(want)   ? std::isnan(base[i])
                    : std::isinf(want) ? base[i] == want
                                       : std::abs(double(base[i]) - double(want)) <=
                                             rel * std::max(1.0, std::abs(double(want)));
    if (!ok && bad++ < 3) FAIL_CHECK("pow(", x[i], ", ", y[i], ") = ", base[i], ", want ", want);
  }
  CHECK(bad == 0);
}
