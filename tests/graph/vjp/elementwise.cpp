// The VJP of elementwise nodes: every differentiable op, operands broadcast by name (in another
// axis order too), by position, and static 1s repeated; against central differences in double.
// And in f32, each op's backward against its vjp on numbers (ops/vjp_on_numbers.hpp, what a
// vertex program's backward runs): the same bits.
#include "../grad_check.hpp"

#include <nax/ops/elementwise.hpp>
#include <nax/ops/vjp_on_numbers.hpp>

#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstring>
#include <span>
#include <string>

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
                                 g::elu(x, 0.7),
                                 g::floor(x * 3.0) * x,
                                 g::ceil(x) + g::round(x * 5.0),
                                 g::sign(x) * x,
                                 g::elu(x * v, v),
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

TEST_CASE("in f32, every op's backward gives the bits of its vjp on numbers") {
  std::size_t checked = 0;
  boost::mp11::mp_for_each<nax::ops::all>([&](auto op) {
    using Op = decltype(op);
    if constexpr (Op::differentiable) {
      constexpr std::size_t n = 37;  // vectors and a tail
      g::builder b;
      const shape s = shape::make(dtype::f32, {n});
      const g::value p = b.parameter("p", s), q = b.parameter("q", s), dy = b.parameter("dy", s);
      std::vector<g::value> operands = {p, q};
      if constexpr (Op::selects) operands = {g::greater(p, 0.0), p, q};
      const g::value y = b.elementwise(Op::id, std::span(operands.data(), Op::arity));
      const std::vector<g::value> wrt =
          Op::arity == 1 ? std::vector<g::value>{p} : std::vector<g::value>{p, q};
      const std::vector<g::value> grads =
          Op::arity == 1 ? g::grad(y, {p}, dy) : g::grad(y, {p, q}, dy);
      std::mt19937 rng(7);
      std::vector<nax::dyn_tensor> in = grad_check::inputs(b, {}, rng, -2, 2);
      const bool positive = Op::id == nax::ops::id::pow || Op::id == nax::ops::id::log ||
                            Op::id == nax::ops::id::sqrt || Op::id == nax::ops::id::rsqrt;
      float* pv = static_cast<float*>(in[0].data());
      const float* qv = static_cast<const float*>(in[1].data());
      const float* dyv = static_cast<const float*>(in[2].data());
      if (positive)
        for (std::size_t i = 0; i < n; ++i) pv[i] = std::abs(pv[i]) + 0.1f;
      pv[3] = 0;  // a kink
      std::vector<g::value> outs;
      for (std::size_t k = 0; k < wrt.size(); ++k) outs.push_back(grads[k]);
      const std::vector<nax::dyn_tensor> got = g::compile(b, outs).run(in);
      for (std::size_t i = 0; i < n; ++i) {
        const auto want = [&] {
          if constexpr (Op::selects) {
            // p is both the mask's source (no gradient) and the first value.
            auto w = nax::ops::vjp_on_numbers<Op>(dyv[i], pv[i] > 0, pv[i], qv[i]);
            return std::array<float, 2>{w[1], w[2]};
          } else if constexpr (Op::arity == 1) {
            return nax::ops::vjp_on_numbers<Op>(dyv[i], pv[i]);
          } else {
            return nax::ops::vjp_on_numbers<Op>(dyv[i], pv[i], qv[i]);
          }
        }();
        for (std::size_t k = 0; k < wrt.size(); ++k) {
          const float have = static_cast<const float*>(got[k].data())[i];
          INFO(std::string(Op::name), " operand ", k, " at ", pv[i], ", ", qv[i]);
          CHECK(std::memcmp(&have, &want[k], sizeof(float)) == 0);
        }
      }
      ++checked;
    }
  });
  CHECK(checked == 29);
}
