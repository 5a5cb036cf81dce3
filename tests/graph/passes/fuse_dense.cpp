// The dense fusion pass: dot_general, bias and activation as one GEMM step. Execution is tested
// in tests/runtime/fused_patterns.cpp.
#include "fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("dense: dot_general, bias and activation become one step") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  auto y = g::gelu(g::dot_general(x, w, {{1, 0}}) + bias);
  g::program p = compile_steps(b, {y});
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
  CHECK(kinds(compile_steps(b, {g::dot_general(x, w, {{1, 0}}) + bias})) == "fused_dense");
  p = compile_steps(b, {g::relu(g::dot_general(x, w, {{1, 0}}))});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].args.size() == 2);
  CHECK(p.steps[0].as<g::fused_dense_op>().activation == nax::ops::id::relu);
  CHECK(!p.steps[0].as<g::fused_dense_op>().has_bias);
  // The product read elsewhere, or the bias along the rows: not fused.
  auto dot = g::dot_general(x, w, {{1, 0}});
  CHECK(kinds(compile_steps(b, {g::tanh(dot + bias), dot})) == "dot_general, fused_elementwise");
  auto row_bias = b.parameter("row_bias", f32({"batch"}));
  CHECK(kinds(compile_steps(b, {g::tanh(dot + row_bias)})).find("dense") == std::string::npos);
}
