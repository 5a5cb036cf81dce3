// Without a compiler (NAX_NATIVE_CXX names none), executables under every native policy run
// their fused groups on the interpreter with the same results, and say so in stats().
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cstdlib>
#include <cstring>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

TEST_CASE("no compiler: the interpreter runs every group, under eager and background alike") {
  ::setenv("NAX_NATIVE_CXX", "/nonexistent/c++", 1);  // (before the first use of the tier)
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f32, {"n"}));
  const g::value y = g::tanh(x * 2.0 + 1.0) - x;
  auto plain = g::compile(b, {y}, {.native = {g::native_policy::off, 16}});
  const std::vector<dyn_tensor> in = {
      dyn_tensor(shape::make(dtype::f32, {nax::dim::named("n", 999)}))};
  const dyn_tensor want = plain.run(in)[0];
  for (g::native_policy p : {g::native_policy::eager, g::native_policy::background}) {
    auto e = g::compile(b, {y}, {.native = {p, 0}});
    for (int i = 0; i < 3; ++i)
      CHECK(std::memcmp(e.run(in)[0].data(), want.data(), want.bytes()) == 0);
    e.wait_native();
    CHECK(e.stats().native_failed == 1);
    CHECK(e.stats().native_ready == 0);
    CHECK(e.to_dot({{"n", 999}}).find("fused_elementwise, interpreted") != std::string::npos);
  }
}
