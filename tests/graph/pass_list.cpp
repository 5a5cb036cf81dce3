// The pass list: compile_options turn the fusion passes off as a whole or one by one; a list of
// one's own replaces it.
#include "passes/fusion_test.hpp"

#include <nax/graph/pass_list.hpp>

using namespace fusion_test;

TEST_CASE("fusion is turned off as a whole or per kind") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto y = g::tanh(g::dot_general(x, w, {{1, 0}}) + bias) * 3.0 + 1.0;
  CHECK(kinds(compile_steps(b, {y})) == "fused_dense, fused_elementwise");
  CHECK(kinds(compile_steps(b, {y}, {.fusion = false})) ==
        "dot_general, elementwise, elementwise, elementwise, elementwise");
  CHECK(kinds(compile_steps(b, {y}, {.fuse = {.dense = false}})) ==
        "dot_general, fused_elementwise");
  CHECK(kinds(compile_steps(b, {y}, {.fuse = {.elementwise = false}})) ==
        "fused_dense, elementwise, elementwise");
  // Without fusion the steps are the builder's nodes in its order (what issue 5 compiled).
  const g::program p = compile_steps(b, {y}, {.fusion = false});
  for (std::size_t i = 1; i < p.steps.size(); ++i) CHECK(p.steps[i - 1].origin < p.steps[i].origin);
}

namespace {
std::size_t nodes_seen = 0;
void count_nodes(g::ir& ir) { nodes_seen = ir.size(); }
}  // namespace

TEST_CASE("the default pass list, in order, and a list of one's own") {
  std::vector<std::string> names;
  for (const g::pass& p : g::make_pass_list()) names.emplace_back(p.name);
  CHECK(names == std::vector<std::string>{"dead_code", "cse", "fuse_layer_norm", "fuse_softmax",
                                          "fuse_dense", "fuse_elementwise", "fuse_reduce"});
  names.clear();
  for (const g::pass& p : g::make_pass_list({.fuse = {.softmax = false, .reduce = false}}))
    names.emplace_back(p.name);
  CHECK(names == std::vector<std::string>{"dead_code", "cse", "fuse_layer_norm", "fuse_dense",
                                          "fuse_elementwise"});
  CHECK(g::make_pass_list({.fusion = false}).size() == 2);

  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto dead = g::exp(x);
  (void)dead;
  auto y = g::tanh(x) * 2.0 + g::tanh(x);
  // Only the passes given run, in the order given: here no CSE, so tanh is computed twice.
  g::compile_options o;
  o.passes = {{"dead_code", &g::passes::dead_code},
              {"count", &count_nodes},
              {"fuse_elementwise", &g::passes::fuse_elementwise}};
  CHECK(kinds(compile_steps(b, {y}, o)) == "fused_elementwise");
  CHECK(nodes_seen == 6);  // x, tanh, 2, mul, tanh, add
  o.passes.insert(o.passes.begin() + 1, {"cse", &g::passes::cse});
  (void)compile_steps(b, {y}, o);
  CHECK(nodes_seen == 5);
}
