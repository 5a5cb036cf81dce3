// The level-1 fusion passes: which nodes become which fused step, the decomposition each keeps,
// the options that turn them off, and the clusters of to_dot. Execution is tested in
// tests/runtime/fused_*.cpp.
#include <nax/graph/compile_program.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/to_dot.hpp>

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {

const dim h = dim::named("h", 8), k = dim::named("k", 5);

shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

g::program compile(const g::builder& b, std::initializer_list<g::value> outs,
                   g::compile_options o = {}) {
  return g::compile_program(b, std::span(outs.begin(), outs.size()), o);
}

// The kinds of the steps, in order, as text: "fused_elementwise, reduce".
std::string kinds(const g::program& p) {
  std::string r;
  for (const g::program_step& s : p.steps) {
    if (!r.empty()) r += ", ";
    r += s.fused ? g::name(s.fused->kind) : g::name(s.kind());
  }
  return r;
}

// Every fused step's decomposition against the builder: each op is its node, each operand the
// node that node reads (a step argument's value, or an earlier op), results the step's values.
void check_decompositions(const g::builder& b, const g::program& p) {
  for (const g::program_step& s : p.steps) {
    if (!s.fused) continue;
    const g::decomposition& d = *s.fused;
    REQUIRE(d.num_args == s.args.size());
    for (std::size_t j = 0; j < d.ops.size(); ++j) {
      const g::node& op = d.ops[j];
      const g::node& n = b.at(op.origin);
      CHECK(op.op == n.op);
      CHECK(op.shape == n.shape);
      REQUIRE(op.inputs.size() == n.inputs.size());
      for (std::size_t a = 0; a < op.inputs.size(); ++a) {
        const std::uint32_t in = op.inputs[a];
        const g::node_id want = n.inputs[a];
        if (d.is_arg(in)) {
          CHECK(p.values[s.args[in]].origin == want);
        } else {
          REQUIRE(in - d.num_args < j);  // an earlier op
          CHECK(d.ops[in - d.num_args].origin == want);
        }
      }
    }
    REQUIRE(d.results.size() == 1 + s.extra_results.size());
    CHECK(d.ops[d.results[0]].origin == p.values[s.result].origin);
    for (std::size_t r = 0; r < s.extra_results.size(); ++r)
      CHECK(d.ops[d.results[1 + r]].origin == p.values[s.extra_results[r]].origin);
  }
}

}  // namespace

TEST_CASE("an elementwise chain with broadcasts becomes one step that keeps its ops") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto t = g::tanh(x * 2.0 + bias);
  auto y = g::exp(t) - x;
  const g::program p = compile(b, {y});
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

TEST_CASE("fusion is turned off as a whole or per kind") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto y = g::tanh(g::dot_general(x, w, {{1, 0}}) + bias) * 3.0 + 1.0;
  CHECK(kinds(compile(b, {y})) == "fused_dense, fused_elementwise");
  CHECK(kinds(compile(b, {y}, {.fusion = false})) ==
        "dot_general, elementwise, elementwise, elementwise, elementwise");
  CHECK(kinds(compile(b, {y}, {.fuse = {.dense = false}})) == "dot_general, fused_elementwise");
  CHECK(kinds(compile(b, {y}, {.fuse = {.elementwise = false}})) ==
        "fused_dense, elementwise, elementwise");
  // Without fusion the steps are the builder's nodes in its order (what issue 5 compiled).
  const g::program p = compile(b, {y}, {.fusion = false});
  for (std::size_t i = 1; i < p.steps.size(); ++i) CHECK(p.steps[i - 1].origin < p.steps[i].origin);
}

TEST_CASE("a member used outside its group becomes an extra result") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto a = g::exp(x);
  auto c = g::tanh(a) + 1.0;
  auto s = g::sum(a, {"h"});  // reads a: a is written once, by the fused step
  auto y = g::sigmoid(x) * 2.0;
  const g::program p = compile(b, {c, s, y, a});
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
  const g::program p = compile(b, {y});
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
  const g::program pc = compile(c, {p2 + q2});
  CHECK(pc.steps.size() >= 4);  // placed in an order that runs: compile did not throw
  for (std::size_t i = 0; i < pc.steps.size(); ++i)
    for (g::value_index a2 : pc.steps[i].args)
      if (pc.values[a2].role == g::value_role::intermediate) CHECK(pc.values[a2].first_step < i);
}

TEST_CASE("softmax from primitives is recognized in its variants") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto x2 = b.parameter("x2", f32({"batch", h}));
  // exp(x - max) / sum
  auto e = g::exp(x - g::reduce_max(x, {"h"}));
  auto sm = e / g::sum(e, {"h"});
  const g::program p = compile(b, {sm});
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
  const g::program p2 = compile(b, {sm2});
  REQUIRE(p2.steps.size() == 1);
  CHECK(p2.steps[0].kind() == g::op_kind::softmax);
  CHECK(p2.steps[0].as<g::softmax_op>().axis == 0);
  CHECK(kinds(p2) == "fused_softmax");
  check_decompositions(b, p);
  check_decompositions(b, p2);  // the constant 1 of 1 / sum is an argument
  CHECK(p2.steps[0].args.size() == 2);
  // Off: the ops stay (and the elementwise pass takes what it can).
  CHECK(kinds(compile(b, {sm}, {.fuse = {.softmax = false}})) ==
        "reduce, fused_elementwise, reduce, elementwise");
}

TEST_CASE("softmax is not recognized when an intermediate escapes or the axes differ") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto e = g::exp(x - g::reduce_max(x, {"h"}));
  auto sm = e / g::sum(e, {"h"});
  CHECK(kinds(compile(b, {sm, e})).find("softmax") == std::string::npos);  // e requested
  auto other = g::log(e) + 1.0;
  CHECK(kinds(compile(b, {sm + other})).find("softmax") == std::string::npos);  // e read
  // max over h, sum over batch: not the five-op softmax, but exp(d) / sum(exp(d)) over batch
  // of the difference d is one (without the max).
  g::builder c;
  auto y = c.parameter("y", f32({"batch", h}));
  auto d = y - g::reduce_max(y, {"h"});
  auto ey = g::exp(d);
  auto bad = ey / g::sum(ey, {"batch"});
  const g::program pb = compile(c, {bad});
  CHECK(kinds(pb) == "reduce, elementwise, fused_softmax");
  CHECK(pb.steps[2].as<g::softmax_op>().axis == 0);
  CHECK(pb.values[pb.steps[2].args[0]].origin == d.id());
  // div of an exp by a sum of another exp
  auto ez = g::exp(y);
  auto ew = g::exp(y * 2.0);
  CHECK(kinds(compile(c, {ez / g::sum(ew, {"h"})})).find("softmax") == std::string::npos);
}

namespace {

// layer_norm spelled from primitives, in one of its variants.
struct ln_spelling {
  bool rsqrt = true, pow = false, eps_first = false, gamma = true, gamma_first = false, beta = true,
       beta_first = false;
};

g::value layer_norm_from_primitives(g::builder& b, g::value x, g::value gamma, g::value beta,
                                    const char* axis, ln_spelling v, double eps = 1e-5) {
  auto mu = g::mean(x, {axis});
  auto d = x - mu;
  auto sq = v.pow ? g::pow(d, 2.0) : d * d;
  auto var = g::mean(sq, {axis});
  auto c = b.constant(eps);
  auto ve = v.eps_first ? c + var : var + c;
  auto n = v.rsqrt ? d * g::rsqrt(ve) : d / g::sqrt(ve);
  if (v.gamma) n = v.gamma_first ? gamma * n : n * gamma;
  if (v.beta) n = v.beta_first ? beta + n : n + beta;
  return n;
}

}  // namespace

TEST_CASE("layer_norm from primitives is recognized in its variants") {
  const ln_spelling variants[] = {
      {},
      {.rsqrt = false},
      {.pow = true, .eps_first = true},
      {.gamma = false, .beta = false},
      {.gamma = true, .beta = false},
      {.gamma = false, .beta = true},
  };
  for (std::size_t i = 0; i < std::size(variants); ++i) {
    CAPTURE(i);
    const ln_spelling& v = variants[i];
    g::builder b;
    auto x = b.parameter("x", f32({"batch", "seq", h}));
    auto gamma = b.parameter("gamma", f32({h}));
    auto beta = b.parameter("beta", f32({h}));
    auto y = layer_norm_from_primitives(b, x, gamma, beta, "h", v, 1e-3);
    const g::program p = compile(b, {y});
    REQUIRE(p.steps.size() == 1);
    const g::program_step& s = p.steps[0];
    CHECK(s.kind() == g::op_kind::layer_norm);
    REQUIRE(s.fused);
    CHECK(s.fused->kind == g::fusion_kind::layer_norm);
    const g::layer_norm_op& ln = s.as<g::layer_norm_op>();
    CHECK(ln.axis == 2);
    CHECK(ln.has_gamma == v.gamma);
    CHECK(ln.has_beta == v.beta);
    CHECK(ln.epsilon == doctest::Approx(1e-3));
    CHECK(s.args.size() == std::size_t(2 + v.gamma + v.beta + v.pow));  // + eps (and 2)
    CHECK(p.values[s.args[0]].origin == x.id());
    if (v.gamma) CHECK(p.values[s.args[1]].origin == gamma.id());
    if (v.beta) CHECK(p.values[s.args[1 + v.gamma]].origin == beta.id());
    check_decompositions(b, p);
  }
  // beta + gamma * n: gamma and beta in front keep the axes in order only on a vector (by
  // name, gamma * n[batch, h] is [h, batch]).
  g::builder b;
  auto x = b.parameter("x", f32({h}));
  auto gamma = b.parameter("gamma", f32({h}));
  auto beta = b.parameter("beta", f32({h}));
  auto y =
      layer_norm_from_primitives(b, x, gamma, beta, "h", {.gamma_first = true, .beta_first = true});
  CHECK(kinds(compile(b, {y})) == "fused_layer_norm");
  CHECK(kinds(compile(b, {y}, {.fuse = {.layer_norm = false}})).find("layer_norm") ==
        std::string::npos);
  auto x2 = b.parameter("x2", f32({"batch", h}));
  auto y2 = layer_norm_from_primitives(b, x2, gamma, beta, "h", {.gamma_first = true});
  CHECK(kinds(compile(b, {y2})) == "fused_layer_norm, fused_elementwise");  // [h, batch]
}

TEST_CASE("layer_norm is not recognized when an intermediate escapes or the axes differ") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto gamma = b.parameter("gamma", f32({h}));
  auto beta = b.parameter("beta", f32({h}));
  auto mu = g::mean(x, {"h"});
  auto d = x - mu;
  auto var = g::mean(d * d, {"h"});
  auto y = d * g::rsqrt(var + 1e-5) * gamma + beta;
  CHECK(kinds(compile(b, {y})) == "fused_layer_norm");
  CHECK(kinds(compile(b, {y, var})).find("layer_norm") == std::string::npos);
  CHECK(kinds(compile(b, {y + mu})).find("layer_norm") == std::string::npos);  // mu read
  // The variance over another axis than the mean.
  auto var2 = g::mean(d * d, {"batch"});
  auto y2 = d * g::rsqrt(var2 + 1e-5);
  CHECK(kinds(compile(b, {y2})).find("layer_norm") == std::string::npos);
  // A square of something else than the centred x.
  auto var3 = g::mean(x * x, {"h"});
  CHECK(kinds(compile(b, {d * g::rsqrt(var3 + 1e-5)})).find("layer_norm") == std::string::npos);
  // gamma along another axis is not a scale of the normalized axis (the norm alone is taken).
  auto other = b.parameter("other", f32({"batch"}));
  const g::program p = compile(b, {d * g::rsqrt(var + 1e-5) * other});
  CHECK(kinds(p) == "fused_layer_norm, elementwise");
}

TEST_CASE("dense: dot_general, bias and activation become one step") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto y = g::gelu(g::dot_general(x, w, {{1, 0}}) + bias);
  g::program p = compile(b, {y});
  REQUIRE(p.steps.size() == 1);
  const g::program_step& s = p.steps[0];
  CHECK(s.kind() == g::op_kind::fused_dense);
  CHECK(s.as<g::fused_dense_op>().has_activation);
  CHECK(s.as<g::fused_dense_op>().activation == nax::ops::id::gelu);
  CHECK(s.as<g::fused_dense_op>().has_bias);
  REQUIRE(s.args.size() == 3);
  CHECK(p.values[s.args[2]].origin == bias.id());
  CHECK(s.fused->ops.size() == 3);
  CHECK(s.fused->ops[0].kind() == g::op_kind::dot_general);
  check_decompositions(b, p);
  // Without an activation, without a bias.
  CHECK(kinds(compile(b, {g::dot_general(x, w, {{1, 0}}) + bias})) == "fused_dense");
  p = compile(b, {g::relu(g::dot_general(x, w, {{1, 0}}))});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].args.size() == 2);
  CHECK(p.steps[0].as<g::fused_dense_op>().activation == nax::ops::id::relu);
  CHECK(!p.steps[0].as<g::fused_dense_op>().has_bias);
  // The product read elsewhere, or the bias along the rows: not fused.
  auto dot = g::dot_general(x, w, {{1, 0}});
  CHECK(kinds(compile(b, {g::tanh(dot + bias), dot})) == "dot_general, fused_elementwise");
  auto row_bias = b.parameter("row_bias", f32({"batch"}));
  CHECK(kinds(compile(b, {g::tanh(dot + row_bias)})).find("dense") == std::string::npos);
}

TEST_CASE("external steps are left alone and compile keeps dead nodes out of groups") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto dead = g::exp(x) * 3.0;
  (void)dead;
  auto y = g::tanh(x) + 1.0;
  const g::program p = compile(b, {y});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].fused->ops.size() == 2);
}

TEST_CASE("to_dot draws each fused step as a cluster of its original ops") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto a = g::exp(x);
  auto y = g::silu(g::dot_general(g::tanh(a) * 2.0, w, {{1, 0}}) + bias);
  const std::string dot = g::to_dot(compile(b, {y, a}));
  CHECK(dot.find("subgraph cluster_0 {") != std::string::npos);
  CHECK(dot.find("label=\"fused_elementwise\"") != std::string::npos);
  CHECK(dot.find("subgraph cluster_1 {") != std::string::npos);
  CHECK(dot.find("label=\"fused_dense\"") != std::string::npos);
  for (const char* op :
       {"\"exp\"", "\"tanh\"", "\"mul\"", "\"dot_general\"", "\"add\"", "\"silu\""})
    CHECK(dot.find(op) != std::string::npos);
  CHECK(dot.find("peripheries=2") != std::string::npos);  // a and y are results
  CHECK(dot.find(" -> f") != std::string::npos);          // edges into the clusters' inner ops
  check_decompositions(b, compile(b, {y, a}));
}

TEST_CASE("explicit broadcasts to a group's shape, read only inside it, join the group") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto bb = b.broadcast(bias, x.shape());
  auto y = g::tanh(x * bb + bb);
  g::program p = compile(b, {y});
  CHECK(kinds(p) == "fused_elementwise");
  REQUIRE(p.steps[0].fused);
  CHECK(p.steps[0].fused->ops.size() == 4);  // broadcast, mul, add, tanh
  CHECK(p.steps[0].fused->ops[0].kind() == g::op_kind::broadcast);
  check_decompositions(b, p);
  // Into a reduction's group too.
  CHECK(kinds(compile(b, {g::sum(x * bb, {"batch"})})) == "fused_reduce");
  // Not when its value leaves the group: requested, or read by another step.
  CHECK(kinds(compile(b, {y, bb})) == "broadcast, fused_elementwise");
  CHECK(kinds(compile(b, {y, g::sum(bb, {"h"})})) == "broadcast, fused_elementwise, reduce");
  CHECK(kinds(compile(b, {y}, {.fusion = false})) ==
        "broadcast, elementwise, elementwise, elementwise");
}

TEST_CASE("an elementwise group read only by a reduction over a run of its axes joins it") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", "seq", h}));
  auto bias = b.parameter("bias", f32({h}));
  auto e = g::exp(x * 2.0 + bias);
  auto s = g::sum(e, {"h"});
  g::program p = compile(b, {s});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].kind() == g::op_kind::fused_reduce);
  CHECK(g::name(p.steps[0].fused->kind) == "fused_reduce");
  CHECK(p.steps[0].fused->ops.size() == 4);  // mul, add, exp, reduce_sum
  CHECK(p.steps[0].as<g::fused_reduce_op>().reduce.axes[0] == 2);
  check_decompositions(b, p);
  // Over the two trailing axes; a single elementwise node.
  p = compile(b, {g::reduce_max(g::tanh(x), {"seq", "h"})});
  CHECK(kinds(p) == "fused_reduce");
  // Over leading and middle runs (a sum over the batch, as a bias gradient).
  p = compile(b, {g::sum(e, {"batch"})});
  CHECK(kinds(p) == "fused_reduce");
  CHECK(p.steps[0].as<g::fused_reduce_op>().reduce.axes[0] == 0);
  check_decompositions(b, p);
  CHECK(kinds(compile(b, {g::mean(e, {"batch", "seq"})})) == "fused_reduce");
  CHECK(kinds(compile(b, {g::reduce_min(e, {"seq"})})) == "fused_reduce");
  // Not: over axes that are not one run, the group's result read elsewhere, or the option off.
  CHECK(kinds(compile(b, {g::sum(e, {"batch", "h"})})) == "fused_elementwise, reduce");
  CHECK(kinds(compile(b, {s, e})) == "fused_elementwise, reduce");
  CHECK(kinds(compile(b, {s + g::sum(e, {"seq"})})).find("fused_reduce") == std::string::npos);
  CHECK(kinds(compile(b, {s}, {.fuse = {.reduce = false}})) == "fused_elementwise, reduce");
  // A group with an extra result stays a group.
  auto a = g::tanh(x);
  auto t = a * 3.0;
  CHECK(kinds(compile(b, {g::sum(t, {"h"}), a})) == "fused_elementwise, reduce");
}
