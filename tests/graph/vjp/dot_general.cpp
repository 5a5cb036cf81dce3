// The VJP of dot_general: two dot_generals, batch axes kept, each operand's cotangent in its own
// axis order; contractions by name and by position, in another order than the operands', over
// several axes, a matrix-vector product; against central differences in double.
#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("a dense layer, a batched product and a contraction over two axes") {
  g::builder b;
  const dim d = dim::named("d", 3), e = dim::named("e", 4), h = dim::named("h", 2),
            s = dim::named("s", 3);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), d}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {d, e}));
  const g::value q = b.parameter("q", shape::make(dtype::f64, {h, s, d}));
  const g::value k = b.parameter("k", shape::make(dtype::f64, {d, h, dim::named("t", 2)}));
  const g::value m = b.parameter("m", shape::make(dtype::f64, {s, e, d}));
  const g::value dense = g::tanh(g::dot_general(x, w, {{"d", "d"}}));         // [batch, e]
  const g::value batched = g::dot_general(q, k, {{"d", "d"}}, {{"h", "h"}});  // [h, s, t]
  // Over two axes, paired in the other order than the operands have them: [batch, s].
  const g::value xd = g::dot_general(dense, m, {{"e", "e"}});            // [batch, s, d]
  const g::value two = g::dot_general(xd, m, {{"d", "d"}, {"s", "s"}});  // [batch, e]
  const g::value loss =
      g::sum(dense * dense, {0, 1}) + g::sum(batched * batched, {0, 1, 2}) + g::sum(two, {0, 1});
  std::mt19937 rng(5);
  grad_check::check(b, loss, {x, w, q, k, m}, grad_check::inputs(b, {{"batch", 3}}, rng));
}

TEST_CASE("positional pairs, rhs's free axes first, a matrix-vector product") {
  g::builder b;
  const g::value a = b.parameter("a", shape::make(dtype::f64, {4, dim("batch")}));
  const g::value v = b.parameter("v", shape::make(dtype::f64, {4}));
  const g::value c = b.parameter("c", shape::make(dtype::f64, {2, 4}));
  const g::value av = g::dot_general(v, a, {{0, 0}});  // [batch]: v's no free axis, a's batch
  const g::value ca = g::dot_general(c, a, {{1, 0}});  // [2, batch]
  const g::value loss = g::sum(g::sigmoid(av), {0}) + g::sum(ca * ca, {0, 1});
  std::mt19937 rng(6);
  grad_check::check(b, loss, {a, v, c}, grad_check::inputs(b, {{"batch", 3}}, rng));
}
