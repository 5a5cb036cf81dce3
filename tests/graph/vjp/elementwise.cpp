// The VJP of elementwise nodes: every differentiable op, operands broadcast by name (in another
// axis order too), by position, and static 1s repeated; against central differences in double.
#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("every differentiable elementwise op, operands broadcast by name") {
  g::builder b;
  const dim h = dim::named("h", 3);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), h}));
  const g::value v = b.parameter("v", shape::make(dtype::f64, {h}));
  const g::value one = x * x + 1.0;  // positive: for log, sqrt, rsqrt and pow
  std::vector<g::value> terms = {x + v,
                                 x - v,
                                 x * v,
                                 x / (v * v + 2.0),
                                 -x,
                                 g::abs(x),
                                 g::min(x, v),
                                 g::max(x, v),
                                 g::relu(x),
                                 g::exp(x),
                                 g::log(one),
                                 g::sqrt(one),
                                 g::rsqrt(one),
                                 g::tanh(x * v),
                                 g::sigmoid(x),
                                 g::gelu(x),
                                 g::gelu_tanh(x),
                                 g::silu(x),
                                 g::erf(x),
                                 g::sin(x * v),
                                 g::cos(x),
                                 g::leaky_relu(x, 0.1),
                                 g::leaky_relu(x, v),
                                 g::pow(one, v),
                                 g::where(g::greater(x, v), x * 2.0, v)};
  g::value total = terms[0];
  for (std::size_t i = 1; i < terms.size(); ++i) total = total + terms[i] * (0.1 * double(i));
  const g::value loss = g::sum(total, {0, 1});
  std::mt19937 rng(1);
  grad_check::check(b, loss, {x, v}, grad_check::inputs(b, {{"batch", 4}}, rng));
}

TEST_CASE("an operand whose axes come first, or in another order") {
  g::builder b;
  const dim h = dim::named("h", 3), k = dim::named("k", 2);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), h, k}));
  const g::value kh = b.parameter("kh", shape::make(dtype::f64, {k, h}));
  const g::value first = g::tanh(kh) * x;  // kh's axes first: [k, h, batch]
  const g::value loss = g::sum(first * first + x, {0, 1, 2});
  std::mt19937 rng(2);
  grad_check::check(b, loss, {x, kh}, grad_check::inputs(b, {{"batch", 2}}, rng));
}

TEST_CASE("operands broadcast by position, a static 1 repeated") {
  g::builder b;
  const g::value y = b.parameter("y", shape::make(dtype::f64, {dim("batch"), 3, 2}));
  const g::value p = b.parameter("p", shape::make(dtype::f64, {3, 1}));
  const g::value u = b.parameter("u", shape::make(dtype::f64, {2}));
  const g::value s = b.parameter("s", shape::make(dtype::f64, {}));
  const g::value loss = g::sum(g::tanh(y * p + u) * s, {0, 1, 2});
  std::mt19937 rng(3);
  grad_check::check(b, loss, {y, p, u, s}, grad_check::inputs(b, {{"batch", 3}}, rng));
}
