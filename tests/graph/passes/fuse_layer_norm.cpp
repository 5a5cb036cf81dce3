// The layer_norm fusion pass: its variants, and when it is not taken. Execution is tested in
// tests/runtime/fused_patterns.cpp.
#include "fusion_test.hpp"

using namespace fusion_test;

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
    const g::program p = compile_steps(b, {y});
    REQUIRE(p.steps.size() == 1);
    const g::program_step& s = p.steps[0];
    CHECK(s.kind() == g::op_kind::layer_norm);
    REQUIRE(s.fused);
    CHECK(s.fused->kind == g::fusion_kind::layer_norm);
    const g::layer_norm_op& ln = s.as<g::layer_norm_op>();
    CHECK(ln.centered);
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
  CHECK(kinds(compile_steps(b, {y})) == "fused_layer_norm");
  CHECK(kinds(compile_steps(b, {y}, {.fuse = {.layer_norm = false}})).find("layer_norm") ==
        std::string::npos);
  auto x2 = b.parameter("x2", f32({"batch", h}));
  auto y2 = layer_norm_from_primitives(b, x2, gamma, beta, "h", {.gamma_first = true});
  CHECK(kinds(compile_steps(b, {y2})) == "fused_layer_norm, fused_elementwise");  // [h, batch]
}

TEST_CASE("RMSNorm from primitives is a layer_norm that subtracts no mean") {
  for (int v = 0; v < 4; ++v) {
    CAPTURE(v);
    const bool rsqrt = v % 2 == 0, pow = v >= 2;
    g::builder b;
    auto x = b.parameter("x", f32({"batch", h}));
    auto gamma = b.parameter("gamma", f32({h}));
    auto var = g::mean(pow ? g::pow(x, 2.0) : x * x, {"h"});
    auto ve = var + b.constant(1e-6);
    auto y = (rsqrt ? x * g::rsqrt(ve) : x / g::sqrt(ve)) * gamma;
    const g::program p = compile_steps(b, {y});
    REQUIRE(p.steps.size() == 1);
    const g::program_step& s = p.steps[0];
    REQUIRE(s.fused);
    CHECK(s.fused->kind == g::fusion_kind::layer_norm);
    const g::layer_norm_op& ln = s.as<g::layer_norm_op>();
    CHECK_FALSE(ln.centered);
    CHECK(ln.axis == 1);
    CHECK(ln.has_gamma);
    CHECK_FALSE(ln.has_beta);
    CHECK(ln.square_by_pow == pow);
    CHECK(ln.divide_by_sqrt == !rsqrt);
    CHECK(ln.epsilon == doctest::Approx(1e-6));
    CHECK(p.values[s.args[0]].origin == x.id());
    CHECK(p.values[s.args[1]].origin == gamma.id());
    check_decompositions(b, p);
  }
  // The centered spelling stays centered; a square of another value than the one scaled is
  // neither; the mean of the squares read elsewhere keeps the ops apart.
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto z = b.parameter("z", f32({"batch", h}));
  auto ms = g::mean(x * x, {"h"});
  CHECK(compile_steps(b, {x * g::rsqrt(ms + 1e-6)}).steps[0].as<g::layer_norm_op>().centered ==
        false);
  CHECK(kinds(compile_steps(b, {z * g::rsqrt(ms + 1e-6)})).find("layer_norm") == std::string::npos);
  CHECK(kinds(compile_steps(b, {x * g::rsqrt(ms + 1e-6), ms})).find("layer_norm") ==
        std::string::npos);
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
  CHECK(kinds(compile_steps(b, {y})) == "fused_layer_norm");
  CHECK(kinds(compile_steps(b, {y, var})).find("layer_norm") == std::string::npos);
  CHECK(kinds(compile_steps(b, {y + mu})).find("layer_norm") == std::string::npos);  // mu read
  // The variance over another axis than the mean: not a layer_norm of x, but an RMSNorm of d
  // over that axis.
  auto var2 = g::mean(d * d, {"batch"});
  auto y2 = d * g::rsqrt(var2 + 1e-5);
  const g::program p2 = compile_steps(b, {y2});
  REQUIRE(kinds(p2) == "reduce, elementwise, fused_layer_norm");  // mean(x), d, its norm
  CHECK(p2.steps[2].as<g::layer_norm_op>().axis == 0);
  CHECK_FALSE(p2.steps[2].as<g::layer_norm_op>().centered);
  // A square of something else than the centred x.
  auto var3 = g::mean(x * x, {"h"});
  CHECK(kinds(compile_steps(b, {d * g::rsqrt(var3 + 1e-5)})).find("layer_norm") ==
        std::string::npos);
  // gamma along another axis is not a scale of the normalized axis (the norm alone is taken).
  auto other = b.parameter("other", f32({"batch"}));
  const g::program p = compile_steps(b, {d * g::rsqrt(var + 1e-5) * other});
  CHECK(kinds(p) == "fused_layer_norm, elementwise");
}

TEST_CASE("layer_norm is not recognized when the mean goes back along other axes (by position)") {
  // Unnamed axes broadcast from the right: a mean over axis 1 of [2, 2, 3] is [2, 3], and
  // x - mean pairs its axis 0 with x's axis 1 (the same extent, another meaning). Found by the
  // fuzz target `run` (fused and unfused gave other bits).
  g::builder b;
  auto x = b.parameter("x", f32({2, 2, 3}));
  auto norm = [](g::value v, std::size_t axis) {
    auto d = v - g::mean(v, {axis});
    return d * g::rsqrt(g::mean(d * d, {axis}) + 1e-3);
  };
  CHECK(kinds(compile_steps(b, {norm(x, 1)})).find("layer_norm") == std::string::npos);
  // Over the first axis the mean's axes do land where they came from.
  const g::program p0 = compile_steps(b, {norm(x, 0)});
  REQUIRE(kinds(p0) == "fused_layer_norm");
  CHECK(p0.steps[0].as<g::layer_norm_op>().axis == 0);
  // Named axes broadcast by name: any axis.
  auto n = b.parameter("n", f32({dim::named("a", 2), dim::named("b", 2), dim::named("c", 3)}));
  CHECK(kinds(compile_steps(b, {norm(n, 1)})) == "fused_layer_norm");
}
