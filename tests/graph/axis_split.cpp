// graph split and merge: one static axis as two and two as one (reshapes, a transpose first when
// the merged axes are apart), their shapes, their errors, and the values they move.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {
std::string str(const g::value& v) { return v.shape().to_string(); }
g::op_kind kind(const g::value& v) { return v.owner().at(v.id()).kind(); }
}  // namespace

TEST_CASE("split: a static axis as two named ones, in place; one part may follow") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("model", 12)}));
  auto s = g::split(x, "model", dim::named("heads", 3), dim::named("hd", 4));
  CHECK(s.shape()[1] == dim::named("heads", 3));
  CHECK(s.shape()[2] == dim::named("hd", 4));
  CHECK(str(s) == "f32[batch, 3, 4]");
  CHECK(kind(s) == g::op_kind::reshape);
  auto d = g::split(x, 1, dim("heads"), dim::named("hd", 2));  // heads follows: 6
  CHECK(d.shape()[1] == dim::named("heads", 6));
}

TEST_CASE("merge: two static axes as one where the first was, a transpose first if apart") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {dim::named("heads", 3), "batch", dim::named("hd", 4)}));
  auto m = g::merge(x, "heads", "hd", "model");
  CHECK(m.shape()[0] == dim::named("model", 12));
  CHECK(m.shape()[1] == dim("batch"));
  CHECK(kind(m) == g::op_kind::reshape);
  const g::node& n = b.at(m.id());
  CHECK(b.at(n.inputs[0]).kind() == g::op_kind::transpose);
  // hd before heads: the merged axis goes where `a` (heads) was.
  auto y = b.parameter(
      "y", shape::make(dtype::f32, {dim::named("hd", 4), "batch", dim::named("heads", 3)}));
  auto my = g::merge(y, "heads", "hd", "model");
  CHECK(my.shape()[0] == dim("batch"));
  CHECK(my.shape()[1] == dim::named("model", 12));
  // Adjacent and in order: the reshape alone.
  auto z = b.parameter(
      "z", shape::make(dtype::f32, {"batch", dim::named("heads", 3), dim::named("hd", 4)}));
  CHECK(b.at(b.at(g::merge(z, "heads", "hd", "model").id()).inputs[0]).kind() ==
        g::op_kind::parameter);
}

TEST_CASE("split and merge errors name the operand, the axes and the extents") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("model", 12)}));
  CHECK_THROWS_WITH_AS(g::split(x, "model", dim::named("heads", 5), dim::named("hd", 4)),
                       "nax::graph::split(f32[batch, 12], axis 'model' -> 'heads' × 'hd'): the "
                       "extent 12 is not 5 × 4",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "model", dim::named("heads", 5), dim("hd")),
                       "nax::graph::split(f32[batch, 12], axis 'model' -> 'heads' × 'hd'): the "
                       "extent 12 is not a multiple of outer extent 5",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "batch", dim::named("heads", 3), dim("hd")),
                       "nax::graph::split(f32[batch, 12], axis 'batch' -> 'heads' × 'hd'): the "
                       "axis is dynamic: its parts' extents would follow from its own, and no "
                       "binding could name them",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "model", dim("heads"), dim("hd")),
                       "nax::graph::split(f32[batch, 12], axis 'model' -> 'heads' × 'hd'): both "
                       "parts are dynamic: one must be static for the other's extent to follow",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "model", dim::named("batch", 3), dim::named("hd", 4)),
                       "nax::graph::split: the result would have axis 'batch' twice (dimensions 0 "
                       "and 1)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "hidden", dim::named("a", 3), dim::named("b", 4)),
                       "nax::graph::split: operand 0 (f32[batch, 12]) has no axis 'hidden'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::merge(x, "batch", "model", "tokens"),
                       "nax::graph::merge(f32[batch, 12], axis 'batch' × axis 'model' -> "
                       "'tokens'): a dynamic axis cannot be merged: the merged extent would have "
                       "no name to bind",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::merge(x, "model", "model", "m2"),
                       "nax::graph::merge(f32[batch, 12], axis 'model' × axis 'model' -> 'm2'): "
                       "both name one axis",
                       nax::shape_error);
}

TEST_CASE("split and merge neither divide by zero nor wrap an extent around") {
  // (Found by fuzzing, tests/fuzz/run.cpp: a split of a static part 0 and a dynamic part divided
  // by 0; the products below wrapped around.)
  g::builder b;
  const std::size_t big = std::size_t(1) << 32;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("model", 12), dim::named("e", 0),
                                                     dim::named("p", big), dim::named("q", big)}));
  CHECK_THROWS_WITH_AS(g::split(x, "model", dim::named("heads", 0), dim("hd")),
                       doctest::Contains("axis 'model' -> 'heads' × 'hd'): the outer extent is "
                                         "0: the other part's extent does not follow from it"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::split(x, "e", dim("heads"), dim::named("hd", 0)),
                       doctest::Contains("the inner extent is 0"), nax::shape_error);
  // An empty axis splits into parts whose product is 0; 2^32 × 2^32 is not 0.
  CHECK(str(g::split(x, "e", dim::named("a", 0), dim::named("b", 5))) ==
        "f32[12, 0, 5, 4294967296, 4294967296]");
  CHECK_THROWS_WITH_AS(g::split(x, "e", dim::named("a", big), dim::named("b", big)),
                       doctest::Contains("the extent 0 is not 4294967296 × 4294967296"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::merge(x, "p", "q", "pq"),
                       doctest::Contains("the merged extent 4294967296 × 4294967296 does not fit "
                                         "in std::size_t"),
                       nax::shape_error);
  CHECK(str(g::merge(x, "e", "p", "ep")) == "f32[12, 0, 4294967296]");
}

TEST_CASE("split, transpose and merge move the values a plain loop says") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"seq", dim::named("model", 6)}));
  // [seq, model] -> [seq, heads, hd] -> [heads, seq, hd] -> hd and heads merged, hd outer.
  auto s = g::split(x, "model", dim::named("heads", 2), dim::named("hd", 3));
  auto t = g::transpose(s, {"heads", "seq", "hd"});
  auto m = g::merge(t, "hd", "heads", "mixed");  // [seq, mixed]: element (i, d * 2 + h)
  REQUIRE(m.shape().to_string() == "f32[seq, 6]");
  auto ex = g::compile(b, {m});
  const std::size_t n = 3;
  nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("seq", n), dim::named("model", 6)}));
  for (std::size_t i = 0; i < in.size(); ++i) in.data<float>()[i] = static_cast<float>(i);
  const std::vector<nax::dyn_tensor> out = ex.run(std::span<const nax::dyn_tensor>(&in, 1));
  const float* o = out[0].data<float>();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t d = 0; d < 3; ++d)
        CHECK(o[i * 6 + d * 2 + h] == in.data<float>()[i * 6 + h * 3 + d]);
}
