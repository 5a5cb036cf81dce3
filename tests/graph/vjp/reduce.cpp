// The VJP of reductions: sum and mean (over static and dynamic axes: the count then comes from
// the binding), max and min; against central differences in double.
#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("sum, mean, max and min over leading, middle and trailing axes") {
  g::builder b;
  const g::value x = b.parameter(
      "x", shape::make(dtype::f64, {dim("batch"), dim::named("h", 3), dim::named("k", 4)}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {dim::named("k", 4)}));
  const g::value t = g::tanh(x * w);
  const g::value s = g::sum(t, {"h"});                   // [batch, k]
  const g::value m = g::mean(t, {"batch", "k"});         // [h]: the count is batch's binding x 4
  const g::value hi = g::reduce_max(t * 3.0, {"k"});     // [batch, h]
  const g::value lo = g::reduce_min(t, {"batch", "h"});  // [k]
  const g::value loss = g::sum(s * s, {0, 1}) + g::sum(m * m, {0}) + g::sum(hi, {0, 1}) +
                        g::sum(lo * w, {0}) + g::mean(t, {0, 1, 2});
  std::mt19937 rng(4);
  for (std::size_t n : {1u, 3u}) {
    CAPTURE(n);
    grad_check::check(b, loss, {x, w}, grad_check::inputs(b, {{"batch", n}}, rng));
  }
}

TEST_CASE("max and min share the cotangent evenly among tied elements") {
  // Each x[k] repeated 3 times along r: max and min over r are ties of 3, and d max / d x = 1
  // (each copy gets a third of the cotangent), not 3.
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim::named("k", 2)}));
  const g::value w = b.parameter("w", shape::make(dtype::f64, {dim::named("k", 2)}));
  const g::value column = g::reshape(x, {dim::named("k", 2), dim(1)});
  const g::value repeated =
      b.broadcast(column, shape::make(dtype::f64, {dim::named("k", 2), dim::named("r", 3)}));
  const g::value loss = g::sum(g::reduce_max(repeated, {"r"}) * w, {0}) +
                        g::sum(g::reduce_min(repeated * 2.0, {"r"}), {0});
  std::mt19937 rng(5);
  grad_check::check(b, loss, {x, w}, grad_check::inputs(b, {}, rng));
}
