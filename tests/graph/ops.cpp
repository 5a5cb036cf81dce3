// The graph builder's free functions under the typed layer's names (docs/ops.md, "One name per
// op"): max and min over axes, permute, dot by axis names, size, the comparison operators and
// log_softmax, each the node its XLA-style twin makes (one node once CSE runs). (log_softmax
// against nax::jit's graph of nax::log_softmax: tests/jit/traced_ops.cpp.)
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "node_checks.hpp"

namespace g = nax::graph;
using nax::dtype;
using nax::shape;
using node_checks::kind;
using node_checks::same;
using node_checks::str;

namespace {
// v's axes' names, in order.
std::vector<std::string> names(const g::value& v) {
  std::vector<std::string> out;
  for (const nax::dim& d : v.shape().dims()) out.emplace_back(d.name().view());
  return out;
}
using list = std::vector<std::string>;
}  // namespace

TEST_CASE("max and min over axes are reduce_max and reduce_min; a braced list is never a scalar") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {nax::dim::named("batch", 4), nax::dim::named("h", 8)}));
  CHECK(same(g::max(x, {"h"}), g::reduce_max(x, {"h"})));
  CHECK(same(g::min(x, {"batch", "h"}), g::reduce_min(x, {"batch", "h"})));
  CHECK(names(g::max(x, {"h"})) == list{"batch"});
  // {1} names axis 1 (a reduction), 1 is a scalar (elementwise): the scalar forms are templates.
  CHECK(kind(g::max(x, {1})) == g::op_kind::reduce);
  CHECK(names(g::max(x, {1})) == list{"batch"});
  CHECK(kind(g::max(x, 1)) == g::op_kind::elementwise);
  CHECK(names(g::min(0.5, x)) == list{"batch", "h"});
  CHECK(same(g::max(x, 2.0f), g::max(x, 2.0)));
}

TEST_CASE("permute is transpose, by name or position") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {nax::dim::named("batch", 2), nax::dim::named("seq", 3),
                                    nax::dim::named("h", 4)}));
  CHECK(same(g::permute(x, {"h", "batch", "seq"}), g::transpose(x, {2, 0, 1})));
  CHECK(names(g::permute(x, {"h", "batch", "seq"})) == list{"h", "batch", "seq"});
}

TEST_CASE("dot by axis names: the shared axes it does not contract are batch axes") {
  g::builder b;
  auto q = b.parameter(
      "q", shape::make(dtype::f32, {nax::dim::named("heads", 2), nax::dim::named("seq", 3),
                                    nax::dim::named("hd", 4)}));
  auto k = b.parameter(
      "k", shape::make(dtype::f32, {nax::dim::named("heads", 2), nax::dim::named("kseq", 5),
                                    nax::dim::named("hd", 4)}));
  auto w = b.parameter(
      "w", shape::make(dtype::f32, {nax::dim::named("hd", 4), nax::dim::named("out", 6)}));
  const g::value scores = g::dot(q, k, {"hd"});
  CHECK(same(scores, g::dot_general(q, k, {{"hd", "hd"}}, {{"heads", "heads"}})));
  CHECK(names(scores) == list{"heads", "seq", "kseq"});
  CHECK(str(scores) == "f32[2, 3, 5]");
  CHECK(same(g::dot(q, w, {"hd"}), g::dot_general(q, w, {{2, 0}})));
  CHECK(names(g::dot(q, w, {"hd"})) == list{"heads", "seq", "out"});
  CHECK_THROWS_WITH_AS(g::dot(q, w, {2}),
                       "nax::graph::dot: axis 2 given by position; dot names the axes it "
                       "contracts (dot_general takes positions)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::dot(q, w, {"seq"}),
                       "nax::graph::dot: operand 1 (f32[4, 6]) has no axis 'seq'",
                       nax::shape_error);
}

TEST_CASE("size is get_dimension_size") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"seq", nax::dim::named("h", 4)}));
  CHECK(same(g::size(x, "seq"), g::get_dimension_size(x, "seq")));
  CHECK(str(g::size(x, "seq")) == "i32[]");
  CHECK(str(g::size(x, "seq", dtype::i64)) == "i64[]");
}

TEST_CASE("the comparison operators are less, greater, equal, ... elementwise") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {nax::dim::named("h", 8)}));
  auto y = b.parameter("y", shape::make(dtype::f32, {nax::dim::named("h", 8)}));
  CHECK(same(x < y, g::less(x, y)));
  CHECK(same(x <= y, g::less_equal(x, y)));
  CHECK(same(x > y, g::greater(x, y)));
  CHECK(same(x >= y, g::greater_equal(x, y)));
  CHECK(same(x == y, g::equal(x, y)));
  CHECK(same(x != y, g::not_equal(x, y)));
  CHECK(same(x < 0.5, g::less(x, 0.5)));
  CHECK(same(0.5 >= x, g::greater_equal(0.5, x)));
  CHECK(str(x == 1.0) == "bool[8]");
}

TEST_CASE("log_softmax is one node along the axis, a softmax_op with `log`") {
  g::builder b;
  auto x = b.parameter(
      "x", shape::make(dtype::f32, {nax::dim::named("rows", 3), nax::dim::named("vocab", 37)}));
  const g::value y = g::log_softmax(x, "vocab");
  CHECK(names(y) == list{"rows", "vocab"});
  REQUIRE(kind(y) == g::op_kind::softmax);
  const g::node& n = b.at(y.id());
  CHECK(n.as<g::softmax_op>().axis == 1);
  CHECK(n.as<g::softmax_op>().log);
  CHECK(g::op_label(n.op) == "log_softmax");
  CHECK_FALSE(same(y, g::softmax(x, "vocab")));
  auto i = b.parameter("i", shape::make(dtype::i32, {nax::dim::named("vocab", 4)}));
  CHECK_THROWS_WITH_AS(g::log_softmax(i, "vocab"),
                       "nax::graph::log_softmax: needs f32 or f64 elements, not i32[4]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::log_softmax(x, "seq"), doctest::Contains("nax::graph::log_softmax"),
                       nax::shape_error);
}
