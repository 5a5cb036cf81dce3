// The VJPs of softmax, log_softmax and layer_norm, in closed form: along the last axis and a middle
// one, gamma and beta included; against central differences in double.
#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("softmax along the last axis and along a middle one") {
  g::builder b;
  const g::value x = b.parameter(
      "x", shape::make(dtype::f64, {dim("batch"), dim::named("h", 3), dim::named("k", 4)}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {dim::named("k", 4)}));
  const g::value p = g::softmax(x, "k"), q = g::softmax(x * w, "h");
  const g::value loss = g::sum(p * p * w, {0, 1, 2}) + g::sum(g::log(q), {0, 1, 2});
  std::mt19937 rng(9);
  grad_check::check(b, loss, {x, w}, grad_check::inputs(b, {{"batch", 2}}, rng));
}

TEST_CASE("log_softmax along the last axis and along a middle one") {
  g::builder b;
  const g::value x = b.parameter(
      "x", shape::make(dtype::f64, {dim("batch"), dim::named("h", 3), dim::named("k", 4)}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {dim::named("k", 4)}));
  const g::value p = g::log_softmax(x, "k"), q = g::log_softmax(x * w, "h");
  REQUIRE(b.at(p.id()).as<g::softmax_op>().log);
  const g::value loss = g::sum(p * p * w, {0, 1, 2}) + g::sum(g::tanh(q) * x, {0, 1, 2});
  std::mt19937 rng(11);
  grad_check::check(b, loss, {x, w}, grad_check::inputs(b, {{"batch", 2}}, rng));
}

TEST_CASE("layer_norm along the last axis and a middle one, with gamma and beta") {
  g::builder b;
  const dim h = dim::named("h", 5), k = dim::named("k", 3);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), k, h}));
  const g::value gamma = b.parameter("gamma", shape::make(dtype::f64, {h}));
  const g::value beta = b.parameter("beta", shape::make(dtype::f64, {h}));
  const g::value gk = b.parameter("gk", shape::make(dtype::f64, {k}));
  const g::value bk = b.parameter("bk", shape::make(dtype::f64, {k}));
  const g::value y = g::layer_norm(x, gamma, beta, "h", 1e-3);
  const g::value z = g::layer_norm(x * x, gk, bk, "k", 1e-5);
  const g::value loss = g::sum(g::tanh(y) * y, {0, 1, 2}) + g::sum(z * x, {0, 1, 2});
  std::mt19937 rng(10);
  grad_check::check(b, loss, {x, gamma, beta, gk, bk}, grad_check::inputs(b, {{"batch", 3}}, rng));
}
