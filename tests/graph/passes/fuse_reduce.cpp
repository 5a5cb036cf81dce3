// The reduction fusion pass: an elementwise group into the reduction that alone reads it.
// Execution is tested in tests/kernels/fused_reduce.cpp and tests/runtime/fused_patterns.cpp.
#include "fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("an elementwise group read only by a reduction over a run of its axes joins it") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", "seq", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto e = g::exp(x * 2.0 + bias);
  auto s = g::sum(e, {"h"});
  g::program p = compile_steps(b, {s});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].kind() == g::op_kind::fused_reduce);
  CHECK(g::name(p.steps[0].fused->kind) == "fused_reduce");
  CHECK(p.steps[0].fused->ops.size() == 4);  // mul, add, exp, reduce_sum
  CHECK(p.steps[0].as<g::fused_reduce_op>().reduce.axes[0] == 2);
  check_decompositions(b, p);
  // Over the two trailing axes; a single elementwise node.
  p = compile_steps(b, {g::reduce_max(g::tanh(x), {"seq", "h"})});
  CHECK(kinds(p) == "fused_reduce");
  // Over leading and middle runs (a sum over the batch, as a bias gradient).
  p = compile_steps(b, {g::sum(e, {"batch"})});
  CHECK(kinds(p) == "fused_reduce");
  CHECK(p.steps[0].as<g::fused_reduce_op>().reduce.axes[0] == 0);
  check_decompositions(b, p);
  CHECK(kinds(compile_steps(b, {g::mean(e, {"batch", "seq"})})) == "fused_reduce");
  CHECK(kinds(compile_steps(b, {g::reduce_min(e, {"seq"})})) == "fused_reduce");
  // Not: over axes that are not one run, the group's result read elsewhere, or the option off.
  CHECK(kinds(compile_steps(b, {g::sum(e, {"batch", "h"})})) == "fused_elementwise, reduce");
  CHECK(kinds(compile_steps(b, {s, e})) == "fused_elementwise, reduce");
  CHECK(kinds(compile_steps(b, {s + g::sum(e, {"seq"})})).find("fused_reduce") ==
        std::string::npos);
  CHECK(kinds(compile_steps(b, {s}, {.fuse = {.reduce = false}})) == "fused_elementwise, reduce");
  // A group with an extra result stays a group.
  auto a = g::tanh(x);
  auto t = a * 3.0;
  CHECK(kinds(compile_steps(b, {g::sum(t, {"h"}), a})) == "fused_elementwise, reduce");
}
