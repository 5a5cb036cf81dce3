// The softmax fusion pass: its variants, and when it is not taken. Execution is tested in
// tests/runtime/fused_patterns.cpp.
#include "fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("softmax from primitives is recognized in its variants") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto x2 = b.parameter("x2", f32({"batch", h}));
  // exp(x - max) / sum
  auto e = g::exp(x - g::reduce_max(x, {"h"}));
  auto sm = e / g::sum(e, {"h"});
  const g::program p = compile_steps(b, {sm});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].kind() == g::op_kind::softmax);
  CHECK(p.steps[0].as<g::softmax_op>().axis == 1);
  REQUIRE(p.steps[0].fused);
  CHECK(p.steps[0].fused->kind == g::fusion_kind::softmax);
  CHECK(p.steps[0].fused->ops.size() == 5);
  CHECK(p.values[p.steps[0].args[0]].origin == x.id());
  // exp(x) * (1 / sum(exp(x))), over the batch axis
  auto e2 = g::exp(x2);
  auto sm2 = e2 * (1.0 / g::sum(e2, {"batch"}));
  const g::program p2 = compile_steps(b, {sm2});
  REQUIRE(p2.steps.size() == 1);
  CHECK(p2.steps[0].kind() == g::op_kind::softmax);
  CHECK(p2.steps[0].as<g::softmax_op>().axis == 0);
  CHECK(kinds(p2) == "fused_softmax");
  check_decompositions(b, p);
  check_decompositions(b, p2);  // the constant 1 of 1 / sum is an argument
  CHECK(p2.steps[0].args.size() == 2);
  // Off: the ops stay (and the elementwise pass takes what it can).
  CHECK(kinds(compile_steps(b, {sm}, {.fuse = {.softmax = false}})) ==
        "reduce, fused_elementwise, reduce, elementwise");
}

TEST_CASE("softmax is not recognized when an intermediate escapes or the axes differ") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto e = g::exp(x - g::reduce_max(x, {"h"}));
  auto sm = e / g::sum(e, {"h"});
  CHECK(kinds(compile_steps(b, {sm, e})).find("softmax") == std::string::npos);  // e requested
  auto other = g::log(e) + 1.0;
  CHECK(kinds(compile_steps(b, {sm + other})).find("softmax") == std::string::npos);  // e read
  // max over h, sum over batch: not the five-op softmax, but exp(d) / sum(exp(d)) over batch
  // of the difference d is one (without the max).
  g::builder c;
  auto y = c.parameter("y", f32({"batch", h}));
  auto d = y - g::reduce_max(y, {"h"});
  auto ey = g::exp(d);
  auto bad = ey / g::sum(ey, {"batch"});
  const g::program pb = compile_steps(c, {bad});
  CHECK(kinds(pb) == "reduce, elementwise, fused_softmax");
  CHECK(pb.steps[2].as<g::softmax_op>().axis == 0);
  CHECK(pb.values[pb.steps[2].args[0]].origin == d.id());
  // div of an exp by a sum of another exp
  auto ez = g::exp(y);
  auto ew = g::exp(y * 2.0);
  CHECK(kinds(compile_steps(c, {ez / g::sum(ew, {"h"})})).find("softmax") == std::string::npos);
}

TEST_CASE("softmax is not recognized when the max or sum goes back along other axes") {
  // Unnamed axes broadcast from the right (see the layer_norm pass's test of the same name).
  g::builder b;
  auto x = b.parameter("x", f32({2, 2, 3}));
  auto softmax = [](g::value v, std::size_t axis) {
    auto e = g::exp(v - g::reduce_max(v, {axis}));
    return e / g::sum(e, {axis});
  };
  CHECK(kinds(compile_steps(b, {softmax(x, 1)})).find("softmax") == std::string::npos);
  auto e = g::exp(x);
  CHECK(kinds(compile_steps(b, {e / g::sum(e, {1})})).find("softmax") == std::string::npos);
  CHECK(kinds(compile_steps(b, {softmax(x, 0)})) == "fused_softmax");
  auto n = b.parameter("n", f32({dim::named("a", 2), dim::named("b", 2), dim::named("c", 3)}));
  CHECK(kinds(compile_steps(b, {softmax(n, 1)})) == "fused_softmax");
}
