// The runtime graph builder: shape inference (graph/infer/) by name and by NumPy's rule, and every
// error message.
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>

#include <cmath>
#include <string>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dtype;
using nax::shape;

namespace {
std::string str(const g::value& v) { return v.shape().to_string(); }
}  // namespace

TEST_CASE("elementwise ops broadcast by name and unify dimensions") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", nax::dim::named("hidden", 512)}));
  auto bias = b.parameter("bias", shape::make(dtype::f32, {nax::dim::named("hidden", 512)}));
  auto t = b.parameter("t", shape::make(dtype::f32, {"time"}));
  CHECK(str(x + bias) == "f32[batch, 512]");
  CHECK(str(bias + x) == "f32[512, batch]");  // a's axes, then b's others
  CHECK(str(x * t) == "f32[batch, 512, time]");
  CHECK(str(g::tanh(x) * 2.0) == "f32[batch, 512]");
  CHECK(str(g::greater(x, bias)) == "bool[batch, 512]");
  CHECK(str(g::where(g::greater(x, bias), x, bias)) == "f32[batch, 512]");
  // Unnamed axes broadcast by position and adopt names.
  auto u = b.parameter("u", shape::make(dtype::f32, {nax::dynamic, 512}));
  CHECK(str(x + u) == "f32[batch, 512]");
  // A static extent meets a bounded dynamic one.
  auto s = b.parameter("s", shape::make(dtype::f32, {nax::dim::bounded("seq", 128)}));
  auto s64 = b.parameter("s64", shape::make(dtype::f32, {nax::dim::named("seq", 64)}));
  CHECK(str(s + s64) == "f32[64]");
}

TEST_CASE("elementwise errors name the op, the operands and what is wrong") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 512}));
  auto y = b.parameter("y", shape::make(dtype::f32, {"time", 512}));
  auto z = b.parameter("z", shape::make(dtype::f32, {nax::dim::named("k", 3)}));
  auto k4 = b.parameter("k4", shape::make(dtype::f32, {nax::dim::named("k", 4)}));
  auto d = b.parameter("d", shape::make(dtype::f64, {"batch", 512}));
  auto i = b.parameter("i", shape::make(dtype::i32, {"batch", 512}));
  auto r3 = b.parameter("r3", shape::make(dtype::f32, {2, 3, 4}));
  CHECK_THROWS_WITH_AS(x + y,
                       "nax::graph::add(f32[batch, 512], f32[time, 512]): incompatible axis "
                       "names: 'batch' vs 'time' (dimension 0 of the result; operands align from "
                       "the right)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(z * k4, "nax::graph::mul(f32[3], f32[4]): axis 'k' mismatch: 3 vs 4",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(x + d,
                       "nax::graph::add(f32[batch, 512], f64[batch, 512]): element types differ: "
                       "operand 0 is f32, operand 1 is f64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::tanh(i),
                       "nax::graph::tanh(i32[batch, 512]): needs floating-point operands (f32 or "
                       "f64), not i32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(x + r3,
                       "nax::graph::add(f32[batch, 512], f32[2, 3, 4]): dimension mismatch: 512 "
                       "vs 4 (dimension 2 of the result; operands align from the right)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::where(x, x, x),
                       doctest::Contains("the mask (operand 0) is f32, not bool"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::logical_and(x, x), doctest::Contains("needs bool operands, not f32"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::neg(g::greater(x, x)),
                       doctest::Contains("needs f32, f64, i32 or i64 operands, not bool"),
                       nax::shape_error);
  const g::value one[] = {x};
  CHECK_THROWS_WITH_AS(b.elementwise(nax::ops::id::add, one),
                       "nax::graph::add: takes 2 operands, given 1", nax::shape_error);
  g::builder other;
  auto o = other.parameter("o", shape::make(dtype::f32, {"batch", 512}));
  CHECK_THROWS_WITH_AS(x + o, "nax::graph::add: an operand belongs to another builder",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(b.parameter("x", shape::make(dtype::f32, {1})),
                       "nax::graph::parameter: 'x' is already a parameter (f32[batch, 512])",
                       nax::shape_error);
}

TEST_CASE("reductions, transpose, softmax and layer_norm by name or position") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq", 768}));
  CHECK(str(g::sum(x, {"seq"})) == "f32[batch, 768]");
  CHECK(str(g::mean(x, {2, "batch"})) == "f32[seq]");
  CHECK(str(g::reduce_max(x, {0, 1, 2})) == "f32[]");
  CHECK(str(g::transpose(x, {"seq", 2, "batch"})) == "f32[seq, 768, batch]");
  CHECK(str(g::softmax(x, 2)) == "f32[batch, seq, 768]");
  auto gamma = b.parameter("gamma", shape::make(dtype::f32, {768}));
  auto beta = b.parameter("beta", shape::make(dtype::f32, {768}));
  CHECK(str(g::layer_norm(x, gamma, beta, 2)) == "f32[batch, seq, 768]");

  CHECK_THROWS_WITH_AS(g::sum(x, {"hidden"}),
                       "nax::graph::reduce_sum: operand 0 (f32[batch, seq, 768]) has no axis "
                       "'hidden'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::sum(x, {1, "seq"}),
                       "nax::graph::reduce_sum: axis 1 (seq) of f32[batch, seq, 768] is listed "
                       "twice",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::softmax(x, 3),
                       "nax::graph::softmax: axis 3 is out of range for operand 0 (f32[batch, "
                       "seq, 768], rank 3)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::transpose(x, {0, 1}),
                       "nax::graph::transpose: 2 axes given for the rank-3 operand f32[batch, "
                       "seq, 768]",
                       nax::shape_error);
  auto gamma5 = b.parameter("gamma5", shape::make(dtype::f32, {5}));
  CHECK_THROWS_WITH_AS(g::layer_norm(x, gamma5, beta, 2),
                       "nax::graph::layer_norm: gamma f32[5] does not match axis 2 of f32[batch, "
                       "seq, 768]: dimension mismatch: 768 vs 5",
                       nax::shape_error);
  auto flags = b.parameter("flags", shape::make(dtype::boolean, {3}));
  CHECK_THROWS_WITH_AS(g::sum(flags, {0}),
                       "nax::graph::reduce_sum: cannot reduce bool elements (bool[3])",
                       nax::shape_error);
}

TEST_CASE("dot_general: batch axes, then a's free axes, then b's; errors name the axes") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq", 512}));
  auto w = b.parameter("w", shape::make(dtype::f32, {512, 256}));
  auto y = b.parameter("y", shape::make(dtype::f32, {"batch", 256, "seq"}));
  CHECK(str(g::dot_general(x, w, {{2, 0}})) == "f32[batch, seq, 256]");
  CHECK(str(g::dot_general(w, x, {{0, 2}})) == "f32[256, batch, seq]");
  CHECK(str(g::dot_general(x, y, {{"seq", "seq"}}, {{"batch", "batch"}})) ==
        "f32[batch, 512, 256]");
  CHECK_THROWS_WITH_AS(g::dot_general(x, w, {{2, 1}}),
                       "nax::graph::dot_general(f32[batch, seq, 512], f32[512, 256]): contracting "
                       "axes 2 and 1: dimension mismatch: 512 vs 256",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dot_general(x, y, {{"seq", "seq"}}, {{"seq", "batch"}}),
                       "nax::graph::dot_general(f32[batch, seq, 512], f32[batch, 256, seq]): axis "
                       "1 of operand 0 is paired twice",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dot_general(x, y, {{"seq", "seq"}}, {{"batch", "batch"}, {2, 1}}),
                       "nax::graph::dot_general(f32[batch, seq, 512], f32[batch, 256, seq]): batch "
                       "axes 2 and 1: dimension mismatch: 512 vs 256",
                       nax::shape_error);
  // A dynamic axis contracted with a static one takes its extent.
  CHECK(str(g::dot_general(x, w, {{1, 0}})) == "f32[batch, 512, 256]");
}

TEST_CASE("operands not named on every axis broadcast as NumPy's do, from the right") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 256}));
  auto bias = b.parameter("bias", shape::make(dtype::f32, {256}));
  auto col = b.parameter("col", shape::make(dtype::f32, {"batch", 1}));
  auto row = b.parameter("row", shape::make(dtype::f32, {1, 256}));
  auto t = b.parameter("t", shape::make(dtype::f32, {3, 1, 5}));
  auto u = b.parameter("u", shape::make(dtype::f32, {4, 1}));
  auto s = b.parameter("s", shape::make(dtype::f32, {}));
  CHECK(str(x + bias) == "f32[batch, 256]");   // a missing leading axis broadcasts
  CHECK(str(bias + x) == "f32[batch, 256]");   // either side
  CHECK(str(col * row) == "f32[batch, 256]");  // static 1s broadcast
  CHECK(str(t - u) == "f32[3, 4, 5]");
  CHECK(str(s + t) == "f32[3, 1, 5]");  // rank 0 everywhere
  CHECK(str(g::where(g::greater(x, 0.0), x, bias)) == "f32[batch, 256]");
  // A name both operands have must be aligned from the right.
  auto batch_only = b.parameter("b1", shape::make(dtype::f32, {"batch"}));
  CHECK_THROWS_WITH_AS(x + batch_only,
                       doctest::Contains("axis 'batch' is dimension 0 of the first (2 from the "
                                         "right) but 0 of the second (1 from the right)"),
                       nax::shape_error);
  // A named 1 broadcasts to an unnamed axis and names it.
  auto h1 = b.parameter("h1", shape::make(dtype::f32, {nax::dim::named("hidden", 1)}));
  CHECK(str(x * h1) == "f32[batch, 256]");
  CHECK(b.at((x * h1).id()).shape[1].name() == "hidden");
  // Named on every axis: by name, never by position.
  auto hs = b.parameter("hs", shape::make(dtype::f32, {"heads", "seq"}));
  auto sq = b.parameter("sq", shape::make(dtype::f32, {"seq"}));
  CHECK(str(sq + hs) == "f32[seq, heads]");
}

TEST_CASE("a constant its integer type cannot hold is an error, not an undefined conversion") {
  // (Found by fuzzing, tests/fuzz/builder.cpp, UBSan: an i64 constant of 9.2e18 converted to
  // int64 as the size of set_dimension_size; the runtime converts every constant to its type.)
  g::builder b;
  CHECK_THROWS_WITH_AS(b.constant(9.3e18, dtype::i64),
                       "nax::graph::constant: 9.3e+18 is not a value of type i64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(b.constant(-2147483649.0, dtype::i32),
                       doctest::Contains("is not a value of type i32"), nax::shape_error);
  CHECK_THROWS_AS(b.constant(256, dtype::u8), nax::shape_error);
  CHECK_THROWS_AS(b.constant(-1, dtype::u8), nax::shape_error);
  CHECK_THROWS_AS(b.constant(std::nan(""), dtype::i32), nax::shape_error);
  CHECK_THROWS_AS(b.constant(INFINITY, dtype::i64), nax::shape_error);
  auto x = b.parameter("x", shape::make(dtype::i32, {"batch"}));
  CHECK_THROWS_AS(x + 1e10, nax::shape_error);
  // Truncated toward zero into the type's range: values; floating types take any double.
  CHECK(b.size() == 1);
  b.constant(-2147483648.9, dtype::i32);
  b.constant(2147483647.9, dtype::i32);
  b.constant(-0x1p63, dtype::i64);
  b.constant(255.5, dtype::u8);
  b.constant(-0.5, dtype::u8);
  b.constant(std::nan(""), dtype::f32);
  b.constant(1e300, dtype::f64);
  b.constant(-7, dtype::boolean);
  CHECK(b.size() == 9);
}

TEST_CASE("an axis name appears at most once in a shape") {
  g::builder b;
  CHECK_THROWS_WITH_AS(b.parameter("p", shape::make(dtype::f32, {"batch", "batch"})),
                       "nax::graph::parameter: 'p' (f32[batch, batch]) has axis 'batch' twice",
                       nax::shape_error);
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", nax::dim::named("h", 4)}));
  auto y = b.parameter("y", shape::make(dtype::f32, {nax::dim::named("h", 4), "batch"}));
  CHECK_THROWS_WITH_AS(g::dot_general(x, y, {{"h", "h"}}),
                       "nax::graph::dot_general: the result would have axis 'batch' twice "
                       "(dimensions 0 and 1)",
                       nax::shape_error);
  CHECK(str(g::dot_general(x, y, {{"h", "h"}}, {{"batch", "batch"}})) == "f32[batch]");
  CHECK_THROWS_WITH_AS(
      g::broadcast(x, shape::make(dtype::f32, {nax::dim::named("h", 4), "batch", "batch"})),
      "nax::graph::broadcast: the result would have axis 'batch' twice (dimensions 1 and 2)",
      nax::shape_error);
}
