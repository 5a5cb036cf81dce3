// Shape inference of pad, get_dimension_size, dynamic_slice and dynamic_update_slice
// (graph/infer/dynamic_slice.hpp, builder::pad): names and bounds kept, every error message.
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>

#include <string>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {
std::string str(const g::value& v) { return v.shape().to_string(); }
g::op_kind kind(const g::value& v) { return v.owner().at(v.id()).kind(); }
}  // namespace

TEST_CASE("the ops' names") {
  CHECK(g::name(g::op_kind::dimension_size) == "get_dimension_size");
  CHECK(g::name(g::op_kind::dynamic_slice) == "dynamic_slice");
  CHECK(g::name(g::op_kind::dynamic_update_slice) == "dynamic_update_slice");
}

TEST_CASE("shapes keep the axes' names and bounds") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {dim("batch"), dim::bounded("seq", 512), dim::named("h", 8)}));
  auto start = b.parameter("start", shape::make(dtype::i32, {}));
  CHECK(str(g::get_dimension_size(x, "seq")) == "i32[]");
  CHECK(str(g::get_dimension_size(x, 0, dtype::i64)) == "i64[]");
  const g::value ds = g::dynamic_slice(x, "seq", start, 128);
  CHECK(kind(ds) == g::op_kind::dynamic_slice);
  CHECK(str(ds) == "f32[batch, 128, 8]");
  CHECK(ds.shape()[1].name().view() == "seq");
  CHECK(str(g::dynamic_slice(x, "h", start, 0)) == "f32[batch, seq<=512, 0]");
  auto u = b.parameter(
      "u", shape::make(dtype::f32, {dim("batch"), dim::named("seq", 4), dim::named("h", 8)}));
  const g::value up = g::dynamic_update_slice(x, u, "seq", start);
  CHECK(kind(up) == g::op_kind::dynamic_update_slice);
  CHECK(up.shape() == x.shape());
  // pad: a concat with filler along a static axis.
  const g::value p = g::pad(x, "h", 1, 2, 0.5);
  CHECK(str(p) == "f32[batch, seq<=512, 11]");
  CHECK(p.shape()[2].name().view() == "h");
  CHECK(kind(p) == g::op_kind::concat);
  CHECK(g::pad(x, "h", 0, 0, 1.0).id() == x.id());
}

TEST_CASE("errors name the op, the operand and what is wrong") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {dim("batch"), dim::bounded("seq", 16), dim::named("h", 8)}));
  auto start = b.parameter("start", shape::make(dtype::i64, {}));
  auto bad_start = b.parameter("bad", shape::make(dtype::f32, {}));
  auto vec_start = b.parameter("vec", shape::make(dtype::i32, {dim::named("k", 2)}));
  CHECK_THROWS_WITH_AS(g::get_dimension_size(x, "time"),
                       "nax::graph::get_dimension_size: operand 0 (f32[batch, seq<=16, 8]) has no "
                       "axis 'time'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::get_dimension_size(x, "h", dtype::f32),
                       "nax::graph::get_dimension_size: the result type is f32; it must be i32 or "
                       "i64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_slice(x, "seq", bad_start, 2),
                       "nax::graph::dynamic_slice: the start is f32[]; it must be a rank-0 i32 or "
                       "i64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_slice(x, "seq", vec_start, 2),
                       "nax::graph::dynamic_slice: the start is i32[2]; it must be a rank-0 i32 or "
                       "i64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_slice(x, "seq", start, 17),
                       "nax::graph::dynamic_slice(f32[batch, seq<=16, 8]): size 17 is more than "
                       "the bound 16 of axis 'seq'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_slice(x, "h", start, 9),
                       "nax::graph::dynamic_slice(f32[batch, seq<=16, 8]): size 9 is more than the "
                       "extent 8 of axis 'h'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_slice(x, "h", start, -1),
                       "nax::graph::dynamic_slice(f32[batch, seq<=16, 8]): size -1 is negative",
                       nax::shape_error);
  auto u64 = b.parameter(
      "u64", shape::make(dtype::f64, {dim("batch"), dim::named("seq", 2), dim::named("h", 8)}));
  auto wide = b.parameter(
      "wide", shape::make(dtype::f32, {dim("batch"), dim::named("seq", 2), dim::named("h", 9)}));
  auto long_u = b.parameter(
      "long", shape::make(dtype::f32, {dim("batch"), dim::named("seq", 20), dim::named("h", 8)}));
  CHECK_THROWS_WITH_AS(g::dynamic_update_slice(x, u64, "seq", start),
                       doctest::Contains("the update's type is not the operand's"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_update_slice(x, wide, "seq", start),
                       "nax::graph::dynamic_update_slice(f32[batch, seq<=16, 8], f32[batch, 2, "
                       "9]): dimension 2 of the update (axis 'h') is 9, the operand's is 8",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dynamic_update_slice(x, long_u, "seq", start),
                       doctest::Contains("the update's extent 20 along axis 'seq' is more than "
                                         "the bound 16"),
                       nax::shape_error);
  auto fixed = b.parameter("fixed", shape::make(dtype::f32, {dim("batch"), dim::named("h", 8)}));
  auto grows = b.parameter("grows", shape::make(dtype::f32, {dim("batch"), dim::bounded("h", 16)}));
  CHECK_THROWS_WITH_AS(g::dynamic_update_slice(fixed, grows, "h", start),
                       doctest::Contains("may be more than the extent 8 of axis 'h'"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::pad(x, "seq", 1, 1, 0.0),
                       "nax::graph::pad(f32[batch, seq<=16, 8]): padding along dynamic axis "
                       "'seq' is not supported: the padded extent would have no name to bind",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::pad(x, "h", -1, 1, 0.0),
                       "nax::graph::pad(f32[batch, seq<=16, 8]): the padding -1 is negative",
                       nax::shape_error);
}

TEST_CASE("set_dimension_size: its size and its axis, checked when built") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {dim("batch"), dim::bounded("seq", 16), dim::named("h", 8)}));
  auto k = b.parameter("k", shape::make(dtype::i32, {}));
  auto v = b.parameter("v", shape::make(dtype::f32, {dim::named("h", 8)}));
  CHECK(g::set_dimension_size(x, "seq", k, "n").shape().to_string() == "f32[batch, n<=16, 8]");
  CHECK(g::set_dimension_size(x, "h", k * 2 - 1, "m").shape().to_string() ==
        "f32[batch, seq<=16, m<=8]");
  CHECK(b.value_axes().size() == 2);
  CHECK(b.value_axes()[1].size.size() == 5);  // k 2 mul 1 sub
  CHECK_THROWS_WITH_AS(g::set_dimension_size(x, "batch", k, "b2"),
                       "nax::graph::set_dimension_size(f32[batch, seq<=16, 8]): axis 'batch' has "
                       "no bound: the size needs one (declare it 'batch<=N')",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::set_dimension_size(x, "h", k, "seq"),
                       doctest::Contains("'seq' already names an axis of the graph"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::set_dimension_size(x, "h", g::sum(v, {0}), "p"),
                       doctest::Contains("the size must be made from parameters, constants and "
                                         "get_dimension_size by add, sub, mul, min and max"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::set_dimension_size(x, "h", g::argmax(v, 0), "p"),
                       doctest::Contains("(argmax, i64[]) is not one of them"), nax::shape_error);
  CHECK(b.value_axes().size() == 2);  // nothing registered by a refused call
}
