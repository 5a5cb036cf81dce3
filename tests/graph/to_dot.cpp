// Graphviz of a program: fused steps as clusters of their original ops.
#include <nax/graph/to_dot.hpp>
#include "passes/fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("to_dot draws each fused step as a cluster of its original ops") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto a = g::exp(x);
  auto y = g::silu(g::dot_general(g::tanh(a) * 2.0, w, {{1, 0}}) + bias);
  const std::string dot = g::to_dot(compile_steps(b, {y, a}));
  CHECK(dot.find("subgraph cluster_0 {") != std::string::npos);
  CHECK(dot.find("label=\"fused_elementwise\"") != std::string::npos);
  CHECK(dot.find("subgraph cluster_1 {") != std::string::npos);
  CHECK(dot.find("label=\"fused_dense\"") != std::string::npos);
  for (const char* op :
       {"\"exp\"", "\"tanh\"", "\"mul\"", "\"dot_general\"", "\"add\"", "\"silu\""})
    CHECK(dot.find(op) != std::string::npos);
  CHECK(dot.find("peripheries=2") != std::string::npos);  // a and y are results
  CHECK(dot.find(" -> f") != std::string::npos);          // edges into the clusters' inner ops
  check_decompositions(b, compile_steps(b, {y, a}));
}
