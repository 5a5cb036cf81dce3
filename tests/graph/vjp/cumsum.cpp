// cumsum's VJP (graph/vjp/cumsum.hpp), in ONNX CumSum's four forms and along an inner and an
// outer axis, against central differences; the fused and unfused backward give the same bits.
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("cumsum's gradient: the cotangent summed the other way, equally exclusive") {
  std::mt19937 rng(3);
  for (std::size_t axis : {0, 1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        CAPTURE(axis);
        CAPTURE(exclusive);
        CAPTURE(reverse);
        g::builder b;
        auto x = b.parameter("x", shape::make(dtype::f64, {"batch", dim::named("seq", 6)}));
        auto w = b.parameter("w", shape::make(dtype::f64, {"batch", dim::named("seq", 6)}));
        auto loss = g::sum(g::tanh(g::cumsum(x, axis, {exclusive, reverse})) * w, {0, 1});
        auto in = grad_check::inputs(b, {{"batch", 3}}, rng);
        grad_check::check(b, loss, {x, w}, in);
      }
}
