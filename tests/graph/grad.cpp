// nax::graph::grad: gradients as nodes of the same builder, compiled like any graph. Several
// losses, a seed cotangent, intermediates as wrt values, values the loss does not depend on,
// values that stop gradients, the MLP block; and the errors, each naming what is wrong.
#include "grad_check.hpp"

#include <nax/runtime/specialization.hpp>

#include <string>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {

double scalar(const nax::dyn_tensor& t) { return grad_check::at(t, 0); }

}  // namespace

TEST_CASE("the MLP block: dense + gelu, dense + bias + residual, layer_norm, a squared error") {
  g::builder b;
  const dim d = dim::named("d", 4), f = dim::named("f", 6);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), d}));
  const g::value w1 = b.parameter("w1", shape::make(dtype::f64, {d, f}));
  const g::value b1 = b.parameter("b1", shape::make(dtype::f64, {f}));
  const g::value w2 = b.parameter("w2", shape::make(dtype::f64, {f, d}));
  const g::value b2 = b.parameter("b2", shape::make(dtype::f64, {d}));
  const g::value gamma = b.parameter("gamma", shape::make(dtype::f64, {d}));
  const g::value beta = b.parameter("beta", shape::make(dtype::f64, {d}));
  const g::value target = b.parameter("target", shape::make(dtype::f64, {dim("batch"), d}));
  const g::value h = g::gelu(g::dot_general(x, w1, {{"d", "d"}}) + b1);
  const g::value y = g::layer_norm(g::dot_general(h, w2, {{"f", "f"}}) + b2 + x, gamma, beta, "d");
  const g::value err = y - target;
  const g::value loss = g::mean(g::sum(err * err, {"d"}), {"batch"});
  std::mt19937 rng(11);
  for (std::size_t n : {1u, 5u}) {
    CAPTURE(n);
    grad_check::check(b, loss, {x, w1, b1, w2, b2, gamma, beta},
                      grad_check::inputs(b, {{"batch", n}}, rng));
  }
  // A weight's gradient comes out of its product in the weight's axis order: no transpose.
  const std::vector<g::value> gw = g::grad(loss, {w1, w2});
  auto ex = g::compile(b, {gw[0], gw[1]});
  for (const g::program_step& s : ex.program().steps) CHECK(s.kind() != g::op_kind::transpose);
}

TEST_CASE("several losses, a seed cotangent, an intermediate as a wrt value") {
  g::builder b;
  const dim h = dim::named("h", 3);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), h}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {h}));
  const g::value dy = b.parameter("dy", shape::make(dtype::f64, {dim("batch"), h}));
  const g::value t = g::tanh(x * w);
  const g::value l1 = g::sum(t * t, {0, 1}), l2 = g::sum(g::exp(w), {0});
  const std::vector<g::value> losses{l1, l2}, wrt{w, t};
  const std::vector<g::value> both = g::grad(losses, wrt);
  const std::vector<g::value> first = g::grad(l1, {w, t}), second = g::grad(l2, {w});
  const std::vector<g::value> seeded = g::grad(t, {x}, dy);  // sum of dy * dt/dx
  auto ex = g::compile(
      b, {both[0], first[0], second[0], both[1], first[1], seeded[0], g::sum(dy * t, {0, 1})});
  std::mt19937 rng(12);
  const auto in = grad_check::inputs(b, {{"batch", 2}}, rng);
  const auto r = ex.run(in);
  for (std::size_t i = 0; i < 3; ++i) {  // d(l1 + l2)/dw = dl1/dw + dl2/dw
    const double sum = grad_check::at(r[1], i) + grad_check::at(r[2], i);
    CHECK(std::abs(grad_check::at(r[0], i) - sum) <= 1e-12 * (1 + std::abs(sum)));
  }
  for (std::size_t i = 0; i < 6; ++i) {  // dl/dt = 2t, whatever else depends on t
    CHECK(grad_check::at(r[3], i) == grad_check::at(r[4], i));
  }
  // The seeded product against the gradient of sum(dy * t) by x.
  const std::vector<g::value> direct = g::grad(g::sum(dy * t, {0, 1}), {x});
  auto ex2 = g::compile(b, {direct[0]});
  const auto r2 = ex2.run(in);
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(std::abs(grad_check::at(r[5], i) - grad_check::at(r2[0], i)) <= 1e-12);
}

TEST_CASE("a value the loss does not depend on gets zeros; integers and constants stop gradients") {
  g::builder b;
  const dim h = dim::named("h", 4);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {h}));
  const g::value unused = b.parameter("unused", shape::make(dtype::f64, {dim("batch"), h}));
  // argmax is an integer: nothing flows through it; the one-hot made from it is a constant.
  const g::value pick = g::argmax(x, "h");
  const g::value mask = g::equal(g::iota(x, "h"), pick);
  const g::value loss = g::sum(g::where(mask, x * x, x * 3.0), {0});
  const std::vector<g::value> gr = g::grad(loss, {x, unused});
  auto ex = g::compile(b, {loss, gr[0], gr[1]});
  nax::dyn_tensor xin(shape::make(dtype::f64, {dim::named("h", 4)}));
  const double xs[4] = {0.5, 2.0, -1.0, 1.5};
  std::copy(xs, xs + 4, static_cast<double*>(xin.data()));
  nax::dyn_tensor uin(shape::make(dtype::f64, {dim::named("batch", 2), dim::named("h", 4)}));
  const auto r = ex.run({xin, uin});
  CHECK(scalar(r[0]) == doctest::Approx(1.5 + 4.0 - 3.0 + 4.5));
  const double want[4] = {3.0, 4.0, 3.0, 3.0};  // 2x at the argmax, 3 elsewhere
  for (std::size_t i = 0; i < 4; ++i) CHECK(grad_check::at(r[1], i) == want[i]);
  CHECK(r[2].shape() == uin.shape());
  for (std::size_t i = 0; i < 8; ++i) CHECK(grad_check::at(r[2], i) == 0.0);
}

TEST_CASE("f32 gradients: the same graph, compiled for float") {
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), dim::named("h", 3)}));
  const g::value loss = g::sum(g::sigmoid(x) * x, {0, 1});
  const std::vector<g::value> gr = g::grad(loss, {x});
  CHECK(gr[0].shape() == x.shape());
  auto ex = g::compile(b, {gr[0]});
  std::mt19937 rng(13);
  const auto in = grad_check::inputs(b, {{"batch", 2}}, rng);
  const auto r = ex.run(in);
  for (std::size_t i = 0; i < 6; ++i) {
    const double v = grad_check::at(in[0], i), s = 1 / (1 + std::exp(-v));
    CHECK(grad_check::at(r[0], i) == doctest::Approx(s + v * s * (1 - s)).epsilon(1e-5));
  }
}

TEST_CASE("errors name what is wrong") {
  g::builder b, other;
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), dim::named("h", 3)}));
  const g::value i = b.parameter("i", shape::make(dtype::i64, {dim::named("h", 3)}));
  const g::value o = other.parameter("o", shape::make(dtype::f64, {dim::named("h", 3)}));
  const g::value loss = g::sum(x, {0, 1});
  CHECK_THROWS_WITH_AS(g::grad(g::sum(x, {0}), {x}),
                       doctest::Contains("loss 0 is f64[3], not rank 0"), nax::shape_error);
  CHECK_THROWS_WITH_AS(g::grad(loss, {i}),
                       doctest::Contains("wrt value 0 is i64[3]; gradients are of f32 or f64"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::grad(loss, {x, o}),
                       doctest::Contains("wrt value 1 belongs to another builder"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::grad(x, {x}, g::sum(x, {0})),
                       doctest::Contains("seed cotangent 0 is f64[3], output 0 is f64[batch, 3]"),
                       nax::shape_error);
  // An update with a dynamic extent: its cotangent would be a dynamic_slice of no static size.
  const g::value at = b.constant(0, nax::dtype::i64);
  const g::value updated = g::dynamic_update_slice(x, x, "batch", at);
  const g::value sliced_loss = g::sum(g::slice(updated, "h", 0, 2), {0, 1});
  // Nothing of a refused grad stays in the builder: no seed, no VJP of the slice of h (visited
  // before the update), no mark where a gradient would begin.
  const std::size_t nodes = b.size();
  CHECK_THROWS_WITH_AS(g::grad(sliced_loss, {x}),
                       doctest::Contains("no VJP for a dynamic_update_slice whose update "
                                         "f64[batch, 3] has the dynamic axis 'batch'"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::grad(loss, {x, o}), doctest::Contains("belongs to another builder"),
                       nax::shape_error);
  CHECK(b.size() == nodes);
  CHECK(b.gradient_begin() == nax::graph::ir::no_node);
}

TEST_CASE("a VJP that refuses a shape midway leaves the builder as it was") {
  // (Found by fuzzing, tests/fuzz/builder.cpp: the loss's seed and the VJPs before the refusing
  // one stayed in the builder.) x has an unnamed dynamic axis: the sum's VJP cannot broadcast
  // the cotangent back to it (no binding could give its extent).
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f64, {nax::dynamic, dim::named("h", 3)}));
  const g::value loss = g::sum(g::tanh(x), {0, 1});
  const std::size_t nodes = b.size();
  CHECK_THROWS_WITH_AS(g::grad(loss, {x}), doctest::Contains("has an unnamed dynamic axis"),
                       nax::shape_error);
  CHECK(b.size() == nodes);
  CHECK(b.gradient_begin() == nax::graph::ir::no_node);
  // The builder goes on as before: a gradient where the axis has a name.
  const g::value y = b.parameter("y", shape::make(dtype::f64, {dim("batch"), dim::named("h", 3)}));
  const std::vector<g::value> dy = g::grad(g::sum(g::tanh(y), {0, 1}), {y});
  CHECK(dy[0].shape() == y.shape());
  CHECK(b.gradient_begin() == nodes + 3);  // after y, tanh(y) and their sum
}

TEST_CASE("the memory plan's figure of the activations the backward keeps") {
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), dim::named("h", 5)}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {dim::named("h", 5)}));
  const g::value y = g::tanh(x * w);
  const g::value loss = g::sum(y, {0, 1});
  const std::vector<g::value> gr = g::grad(loss, {w});
  // Step by step: the backward of tanh reads y, the backward of x * w reads the input x (not an
  // activation) and y's cotangent.
  auto ex = g::compile(b, {loss, gr[0]}, {.fusion = false});
  auto forward = g::compile(b, {loss}, {.fusion = false});
  std::mt19937 rng(14);
  const auto in = grad_check::inputs(b, {{"batch", 3}}, rng);
  (void)ex.run(in);
  (void)forward.run(in);
  CHECK(ex.cached({{"batch", 3}})->saved_bytes == 3 * 5 * sizeof(double));
  CHECK(forward.cached({{"batch", 3}})->saved_bytes == 0);
  CHECK(b.gradient_begin() > y.id());
}
