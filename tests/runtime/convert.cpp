// convert (graph/infer/convert.hpp, runtime/steps/convert.hpp): static_cast's conversions
// between the element types against the reference and plain casts; a conversion to the operand's
// own type adds no node; the gradient goes back converted, and none to an integer operand.
#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

TEST_CASE("convert: static_cast between element types, the reference's values") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {"batch", 3}));
  auto i = g::convert(x, dtype::i32);
  CHECK(i.shape() == shape::make(dtype::i32, {"batch", 3}));
  CHECK(g::convert(x, dtype::f64).id() == x.id());  // nothing to convert
  const g::value outs[] = {i, g::convert(x, dtype::f32), g::convert(x, dtype::boolean),
                           g::convert(g::convert(i, dtype::i64), dtype::f64)};
  auto ex = g::compile(b, outs);
  dyn_tensor in(shape::make(dtype::f64, {dim::named("batch", 2), 3}));
  const double v[] = {-2.75, -0.5, 0.0, 0.1, 3.99, 1e6 + 0.25};
  for (std::size_t k = 0; k < 6; ++k) in.data<double>()[k] = v[k];
  const std::vector<dyn_tensor> got = ex.run({in});
  const std::vector<dyn_tensor> ins{in};
  const std::vector<reference::dense> all = reference::evaluate(b, ins);
  for (std::size_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    CHECK(got[k].shape() == all[outs[k].id()].shape);
    CHECK(reference::max_error(got[k], all[outs[k].id()]) == 0);
  }
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(got[0].data<std::int32_t>()[k] == static_cast<std::int32_t>(v[k]));
    CHECK(got[1].data<float>()[k] == static_cast<float>(v[k]));
    CHECK(static_cast<const bool*>(got[2].data())[k] == (v[k] != 0));
    CHECK(got[3].data<double>()[k] == static_cast<double>(static_cast<std::int32_t>(v[k])));
  }
}

TEST_CASE("convert's gradient: converted back; none through an integer") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {"batch"}));
  auto w = b.parameter("w", shape::make(dtype::f32, {"batch"}));
  auto loss = g::sum(g::convert(g::convert(x, dtype::f32) * w, dtype::f64) +
                         g::convert(g::convert(x, dtype::i64), dtype::f64),
                     {0});
  const std::vector<g::value> gr = g::grad(loss, {x, w});
  CHECK(gr[0].shape().dtype() == dtype::f64);
  CHECK(gr[1].shape().dtype() == dtype::f32);
  auto ex = g::compile(b, {gr[0], gr[1]});
  dyn_tensor xv(shape::make(dtype::f64, {dim::named("batch", 3)}));
  dyn_tensor wv(shape::make(dtype::f32, {dim::named("batch", 3)}));
  for (std::size_t k = 0; k < 3; ++k) {
    xv.data<double>()[k] = 0.5 + static_cast<double>(k);
    wv.data<float>()[k] = -1.5f + static_cast<float>(k);
  }
  const std::vector<dyn_tensor> r = ex.run({xv, wv});
  for (std::size_t k = 0; k < 3; ++k) {
    // d/dx: w (the integer path gives nothing); d/dw: x as f32.
    CHECK(r[0].data<double>()[k] == static_cast<double>(wv.data<float>()[k]));
    CHECK(r[1].data<float>()[k] == static_cast<float>(xv.data<double>()[k]));
  }
}
