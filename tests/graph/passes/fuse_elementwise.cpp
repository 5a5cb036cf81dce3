// The elementwise fusion pass: groups, their decompositions, extra results, no cycles, and
// broadcasts that join a group. Execution is tested in tests/runtime/fused_elementwise.cpp.
#include "fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("an elementwise chain with broadcasts becomes one step that keeps its ops") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto t = g::tanh(x * 2.0 + bias);
  auto y = g::exp(t) - x;
  const g::program p = compile_steps(b, {y});
  REQUIRE(p.steps.size() == 1);
  const g::program_step& s = p.steps[0];
  CHECK(s.kind() == g::op_kind::fused_elementwise);
  REQUIRE(s.fused);
  const g::decomposition& d = *s.fused;
  CHECK(d.kind == g::fusion_kind::elementwise);
  CHECK(s.extra_results.empty());
  // The arguments in first use: x, the constant 2, bias.
  REQUIRE(s.args.size() == 3);
  CHECK(p.values[s.args[0]].origin == x.id());
  CHECK(p.values[s.args[1]].role == g::value_role::constant);
  CHECK(p.values[s.args[2]].origin == bias.id());
  CHECK(d.num_args == 3);
  // Every builder op, in order, with its operands.
  REQUIRE(d.ops.size() == 5);
  const char* names[] = {"mul", "add", "tanh", "exp", "sub"};
  for (std::size_t j = 0; j < 5; ++j) {
    CAPTURE(j);
    CHECK(d.ops[j].kind() == g::op_kind::elementwise);
    CHECK(g::op_label(d.ops[j].op) == names[j]);
    const g::node& n = b.at(d.ops[j].origin);
    CHECK(n.op == d.ops[j].op);
    CHECK(n.shape == d.ops[j].shape);
  }
  CHECK(d.ops[0].inputs[0] == 0);  // x
  CHECK(d.ops[0].inputs[1] == 1);  // 2
  CHECK(d.ops[1].inputs[0] == 3);  // the mul (op 0)
  CHECK(d.ops[1].inputs[1] == 2);  // bias
  CHECK(d.ops[4].inputs[0] == 6);  // exp (op 3)
  CHECK(d.ops[4].inputs[1] == 0);  // x again
  REQUIRE(d.results.size() == 1);
  CHECK(d.results[0] == 4);
  CHECK(s.origin == y.id());
  CHECK(p.values[s.result].role == g::value_role::output);
  check_decompositions(b, p);
}

TEST_CASE("a member used outside its group becomes an extra result") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto a = g::exp(x);
  auto c = g::tanh(a) + 1.0;
  auto s = g::sum(a, {"h"});  // reads a: a is written once, by the fused step
  auto y = g::sigmoid(x) * 2.0;
  const g::program p = compile_steps(b, {c, s, y, a});
  CHECK(kinds(p) == "fused_elementwise, reduce, fused_elementwise");
  const g::program_step& f = p.steps[0];
  REQUIRE(f.extra_results.size() == 1);
  CHECK(p.values[f.extra_results[0]].origin == a.id());
  CHECK(p.values[f.result].origin == c.id());
  CHECK(f.fused->results.size() == 2);
  CHECK(p.values[f.extra_results[0]].last_step == 1);  // read by the reduction
  CHECK(p.steps[1].args[0] == f.extra_results[0]);
  // a is also requested: its value is result 3.
  CHECK(p.outputs[3] == f.extra_results[0]);
  check_decompositions(b, p);
}

TEST_CASE("a group never swallows a path that leaves it and comes back") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto a = g::exp(x);
  auto s = g::sum(a, {"h"});  // [batch]
  auto y = (a * s) + a;       // a -> sum -> mul: a and the mul in one step would be a cycle
  const g::program p = compile_steps(b, {y});
  CHECK(kinds(p) == "elementwise, reduce, fused_elementwise");
  // Crossed reductions: every step's operands are computed before it.
  g::builder c;
  auto z = c.parameter("z", f32({"batch", h}));
  auto p1 = g::exp(z);
  auto q1 = g::tanh(z);
  auto r1 = g::sum(p1, {"h"});
  auto r2 = g::sum(q1, {"h"});
  auto p2 = q1 * r1;
  auto q2 = p1 * r2;
  const g::program pc = compile_steps(c, {p2 + q2});
  CHECK(pc.steps.size() >= 4);  // placed in an order that runs: compile did not throw
  for (std::size_t i = 0; i < pc.steps.size(); ++i)
    for (g::value_index a2 : pc.steps[i].args)
      if (pc.values[a2].role == g::value_role::intermediate) CHECK(pc.values[a2].first_step < i);
}

TEST_CASE("explicit broadcasts to a group's shape, read only inside it, join the group") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto bb = b.broadcast(bias, x.shape());
  auto y = g::tanh(x * bb + bb);
  g::program p = compile_steps(b, {y});
  CHECK(kinds(p) == "fused_elementwise");
  REQUIRE(p.steps[0].fused);
  CHECK(p.steps[0].fused->ops.size() == 4);  // broadcast, mul, add, tanh
  CHECK(p.steps[0].fused->ops[0].kind() == g::op_kind::broadcast);
  check_decompositions(b, p);
  // Into a reduction's group too.
  CHECK(kinds(compile_steps(b, {g::sum(x * bb, {"batch"})})) == "fused_reduce");
  // Not when its value leaves the group: requested, or read by another step.
  CHECK(kinds(compile_steps(b, {y, bb})) == "broadcast, fused_elementwise");
  CHECK(kinds(compile_steps(b, {y, g::sum(bb, {"h"})})) == "broadcast, fused_elementwise, reduce");
  CHECK(kinds(compile_steps(b, {y}, {.fusion = false})) ==
        "broadcast, elementwise, elementwise, elementwise");
}
