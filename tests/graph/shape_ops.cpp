// The shape ops of the graph builder: reshape, broadcast, slice, concat. Shape inference on
// static, named dynamic, bounded and unnamed axes; every error message; equal ones merged by CSE.
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "node_checks.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;
using node_checks::kind;
using node_checks::same;
using node_checks::str;

namespace {
// A shape op's attributes as a list: broadcast its axis map; slice axis, start, stop, step;
// concat its axis; reshape nothing.
std::vector<int> ints(const g::value& v) {
  const g::node& n = v.owner().at(v.id());
  if (const auto* b = n.op.get_if<g::broadcast_op>())
    return std::vector<int>(b->axis_map.begin(), b->axis_map.end());
  if (const auto* sl = n.op.get_if<g::slice_op>())
    return {int(sl->axis), int(sl->start), int(sl->stop), int(sl->step)};
  if (const auto* c = n.op.get_if<g::concat_op>()) return {int(c->axis)};
  return {};
}
}  // namespace

TEST_CASE("op_kind names of the shape ops") {
  CHECK(g::name(g::op_kind::reshape) == "reshape");
  CHECK(g::name(g::op_kind::broadcast) == "broadcast");
  CHECK(g::name(g::op_kind::slice) == "slice");
  CHECK(g::name(g::op_kind::concat) == "concat");
}

// --- reshape ------------------------------------------------------------------------------------

TEST_CASE("reshape: static extents, named dynamic axes anywhere, bounds kept") {
  g::builder b;
  auto s = b.parameter("s", shape::make(dtype::f32, {3, 4}));
  auto r = g::reshape(s, {12});
  CHECK(str(r) == "f32[12]");
  CHECK(kind(r) == g::op_kind::reshape);
  CHECK(ints(r).empty());
  CHECK(str(g::reshape(s, {2, 3, 2})) == "f32[2, 3, 2]");
  auto one = b.parameter("one", shape::make(dtype::f32, {1, 1}));
  CHECK(str(g::reshape(one, {})) == "f32[]");
  // The target may name its static axes; the name is kept.
  auto named = g::reshape(s, {dim::named("k", 12)});
  CHECK(named.shape()[0] == dim::named("k", 12));

  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::bounded("seq", 512), 12}));
  CHECK(str(g::reshape(x, {"batch", "seq", 3, 4})) == "f32[batch, seq<=512, 3, 4]");  // bound kept
  CHECK(str(g::reshape(x, {3, "seq", 4, "batch"})) == "f32[3, seq<=512, 4, batch]");
  CHECK(str(g::reshape(x, {"batch", dim::bounded("seq", 512), 12})) == "f32[batch, seq<=512, 12]");
  // A whole shape as the target.
  CHECK(str(b.reshape(x, shape::make(dtype::f32, {"seq", "batch", 12}))) ==
        "f32[seq<=512, batch, 12]");
  // To its own shape: x itself; the same target twice: one node; other targets: other nodes.
  CHECK(g::reshape(x, {"batch", "seq", 12}).id() == x.id());
  CHECK(same(g::reshape(s, {12}), r));
  CHECK(!same(g::reshape(s, {12}), g::reshape(s, {2, 6})));
  CHECK(!same(g::reshape(s, {2, 6}), g::reshape(s, {6, 2})));
}

TEST_CASE("reshape errors name both shapes and the reason") {
  g::builder b;
  auto s = b.parameter("s", shape::make(dtype::f32, {3, 4}));
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 12}));
  auto xs = b.parameter("xs", shape::make(dtype::f32, {"batch", "seq", 12}));
  auto bd = b.parameter("bd", shape::make(dtype::f32, {dim::bounded("seq", 512), 4}));
  auto u = b.parameter("u", shape::make(dtype::f32, {nax::dynamic, 12}));
  CHECK_THROWS_WITH_AS(g::reshape(s, {5, 2}),
                       "nax::graph::reshape(f32[3, 4]): the target f32[5, 2] has 10 elements, the "
                       "operand 12",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(s, {}),
                       "nax::graph::reshape(f32[3, 4]): the target f32[] has 1 element, the "
                       "operand 12",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(x, {"batch", 5}),
                       "nax::graph::reshape(f32[batch, 12]): the target f32[batch, 5] has 5 "
                       "elements per batch, the operand 12",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(xs, {"seq", "batch", 2, 5}),
                       "nax::graph::reshape(f32[batch, seq, 12]): the target f32[seq, batch, 2, "
                       "5] has 10 elements per batch*seq, the operand 12",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(b.reshape(s, shape::make(dtype::f64, {12})),
                       "nax::graph::reshape(f32[3, 4]): element types differ: the target f64[12] "
                       "is f64, the operand is f32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(x, {nax::dynamic, 12}),
                       "nax::graph::reshape(f32[batch, 12]): the target f32[?, 12] has an unnamed "
                       "dynamic axis (0): its extent could not be bound by name",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(u, {"batch", 12}),
                       "nax::graph::reshape(f32[?, 12]): the operand's axis 0 is dynamic and "
                       "unnamed: reshape carries only named dynamic axes",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(x, {"batch", "seq", 12}),
                       "nax::graph::reshape(f32[batch, 12]): the target f32[batch, seq, 12] has "
                       "dynamic axis 'seq', the operand does not",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(x, {"batch", "batch", 12}),
                       "nax::graph::reshape(f32[batch, 12]): dynamic axis 'batch' occurs 2 times "
                       "in the target f32[batch, batch, 12], 1 in the operand",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(xs, {"batch", 12}),
                       "nax::graph::reshape(f32[batch, seq, 12]): the target f32[batch, 12] has no "
                       "dynamic axis 'seq' (every dynamic axis of the operand must be one of the "
                       "target's)",
                       nax::shape_error);
  // A static axis named like the operand's dynamic one does not carry it.
  CHECK_THROWS_WITH_AS(g::reshape(x, {dim::named("batch", 4), 12}),
                       "nax::graph::reshape(f32[batch, 12]): the target f32[4, 12] has no dynamic "
                       "axis 'batch' (every dynamic axis of the operand must be one of the "
                       "target's)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(bd, {dim::bounded("seq", 256), 2, 2}),
                       "nax::graph::reshape(f32[seq<=512, 4]): the target f32[seq<=256, 2, 2] "
                       "bounds axis 'seq' by 256, the operand by 512 (a bound cannot change)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::reshape(x, {dim::bounded("batch", 8), 12}),
                       "nax::graph::reshape(f32[batch, 12]): the target f32[batch<=8, 12] bounds "
                       "axis 'batch' by 8, the operand does not (a bound cannot change)",
                       nax::shape_error);
}

// --- broadcast ----------------------------------------------------------------------------------

TEST_CASE("reshape compares element counts that do not wrap around") {
  // (Found with the split below by fuzzing, tests/fuzz/: 2^32 x 2^32 static extents wrapped to 0
  // elements, which passed for the 0 of an empty target.)
  g::builder b;
  const std::size_t big = std::size_t(1) << 32;
  auto x = b.parameter("x", shape::make(dtype::f32, {big, big}));
  CHECK_THROWS_WITH_AS(g::reshape(x, {0}),
                       "nax::graph::reshape(f32[4294967296, 4294967296]): the operand "
                       "f32[4294967296, 4294967296] has more elements than fit in std::size_t",
                       nax::shape_error);
  auto e = b.parameter("e", shape::make(dtype::f32, {"batch", 0}));
  CHECK_THROWS_WITH_AS(g::reshape(e, {"batch", big, big}),
                       doctest::Contains("the target f32[batch, 4294967296, 4294967296] has more "
                                         "elements than fit in std::size_t"),
                       nax::shape_error);
  CHECK(g::reshape(e, {"batch", big, 0}).shape().to_string() == "f32[batch, 4294967296, 0]");
}

TEST_CASE("broadcast: by name when all axes are named, else from the right") {
  g::builder b;
  auto bias = b.parameter("bias", shape::make(dtype::f32, {dim::named("hidden", 768)}));
  auto r = g::broadcast(bias, {"batch", "seq", dim::named("hidden", 768)});
  CHECK(str(r) == "f32[batch, seq, 768]");
  CHECK(kind(r) == g::op_kind::broadcast);
  CHECK(ints(r) == std::vector<int>{2});
  // By name, in any order; a named dynamic axis goes to itself; a static 1 to anything.
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("one", 1)}));
  auto y = g::broadcast(x, {dim::named("one", 5), dim::bounded("seq", 64), "batch"});
  CHECK(str(y) == "f32[5, seq<=64, batch]");
  CHECK(ints(y) == std::vector<int>{2, 0});
  CHECK(str(g::broadcast(x, {"batch", "one"})) == "f32[batch, one]");  // 1 to a dynamic axis
  // By position from the right as soon as one axis is unnamed.
  auto p = b.parameter("p", shape::make(dtype::f32, {1, 4}));
  auto q = g::broadcast(p, {"batch", 3, 4});
  CHECK(str(q) == "f32[batch, 3, 4]");
  CHECK(ints(q) == std::vector<int>{1, 2});
  auto d = b.parameter("d", shape::make(dtype::i32, {"batch", 1}));
  CHECK(str(g::broadcast(d, {2, "batch", 7})) == "i32[2, batch, 7]");
  auto bounded = b.parameter("bounded", shape::make(dtype::f32, {dim::bounded("seq", 8)}));
  CHECK(str(g::broadcast(bounded, {3, dim::bounded("seq", 8)})) == "f32[3, seq<=8]");
  // A scalar goes anywhere.
  auto c = b.constant(2.0);
  CHECK(str(g::broadcast(c, {"batch", 3})) == "f32[batch, 3]");
  CHECK(ints(g::broadcast(c, {"batch", 3})).empty());
  // To its own shape: x itself; CSE.
  CHECK(g::broadcast(p, {1, 4}).id() == p.id());
  CHECK(same(g::broadcast(p, {"batch", 3, 4}), q));
  CHECK(!same(g::broadcast(p, {"batch", 3, 4}), g::broadcast(p, {"batch", 5, 4})));
}

TEST_CASE("broadcast errors name the axis and both extents") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("hidden", 4)}));
  auto p = b.parameter("p", shape::make(dtype::f32, {3, 4}));
  auto u = b.parameter("u", shape::make(dtype::f32, {nax::dynamic, 4}));
  auto k = b.parameter("k", shape::make(dtype::f32, {dim::named("k", 4), 1}));
  CHECK_THROWS_WITH_AS(g::broadcast(x, {"batch", dim::named("hidden", 5)}),
                       "nax::graph::broadcast(f32[batch, 4]): axis 'hidden' (to axis 1 of the "
                       "target f32[batch, 5]): extent 4 does not broadcast to 5 (only the same "
                       "extent or a static 1 does)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(x, {"seq", dim::named("hidden", 4)}),
                       "nax::graph::broadcast(f32[batch, 4]): axis 'batch' is not in the target "
                       "f32[seq, 4]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(x, {dim::named("batch", 8), dim::named("hidden", 4)}),
                       "nax::graph::broadcast(f32[batch, 4]): axis 'batch' (to axis 0 of the "
                       "target f32[8, 4]): extent batch does not broadcast to 8 (only the same "
                       "extent or a static 1 does)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(p, {3, 5}),
                       "nax::graph::broadcast(f32[3, 4]): axis 1 (to axis 1 of the target f32[3, "
                       "5]): extent 4 does not broadcast to 5 (only the same extent or a static 1 "
                       "does)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(p, {"batch", 4}),
                       "nax::graph::broadcast(f32[3, 4]): axis 0 (to axis 0 of the target "
                       "f32[batch, 4]): extent 3 does not broadcast to batch (only the same extent "
                       "or a static 1 does)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(u, {"batch", 4}),
                       "nax::graph::broadcast(f32[?, 4]): axis 0 (to axis 0 of the target "
                       "f32[batch, 4]): extent ? does not broadcast to batch (only the same extent "
                       "or a static 1 does)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(p, {4}),
                       "nax::graph::broadcast(f32[3, 4]): the target f32[4] has rank 1, less than "
                       "the operand's 2 (axes are matched by position from the right, as not all "
                       "are named)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(k, {dim::named("j", 4), 3}),
                       "nax::graph::broadcast(f32[4, 1]): axis 0 of the operand and axis 0 of the "
                       "target f32[4, 3]: incompatible axis names: 'k' vs 'j'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::broadcast(p, {nax::dynamic, 3, 4}),
                       "nax::graph::broadcast(f32[3, 4]): the target f32[?, 3, 4] has an unnamed "
                       "dynamic axis (0): its extent could not be bound by name",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(b.broadcast(p, shape::make(dtype::f64, {2, 3, 4})),
                       "nax::graph::broadcast(f32[3, 4]): element types differ: the target f64[2, "
                       "3, 4] is f64, the operand is f32",
                       nax::shape_error);
}

// --- slice --------------------------------------------------------------------------------------

TEST_CASE("slice: static results keep the axis's name; a whole dynamic axis stays dynamic") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("hidden", 10)}));
  auto s = g::slice(x, "hidden", 2, 7);
  CHECK(str(s) == "f32[batch, 5]");
  CHECK(s.shape()[1] == dim::named("hidden", 5));
  CHECK(kind(s) == g::op_kind::slice);
  CHECK(ints(s) == std::vector<int>{1, 2, 7, 1});
  CHECK(str(g::slice(x, 1, 1, 10, 3)) == "f32[batch, 3]");  // 1, 4, 7
  CHECK(str(g::slice(x, 1, 1, 9, 3)) == "f32[batch, 3]");   // 1, 4, 7
  CHECK(str(g::slice(x, 1, 1, 7, 3)) == "f32[batch, 2]");   // 1, 4
  CHECK(str(g::slice(x, 1, 4, 4)) == "f32[batch, 0]");
  CHECK(str(g::slice(x, 1, 10, g::slice_end)) == "f32[batch, 0]");
  auto tail = g::slice(x, 1, 3, g::slice_end, 2);
  CHECK(str(tail) == "f32[batch, 4]");                 // 3, 5, 7, 9
  CHECK(ints(tail) == std::vector<int>{1, 3, 10, 2});  // the end resolved
  // A dynamic axis: the result is static, named like the axis.
  auto d = g::slice(x, "batch", 0, 8);
  CHECK(d.shape()[0] == dim::named("batch", 8));
  CHECK(ints(d) == std::vector<int>{0, 0, 8, 1});
  auto bounded = b.parameter("bounded", shape::make(dtype::f32, {dim::bounded("seq", 512)}));
  CHECK(str(g::slice(bounded, 0, 500, 512, 4)) == "f32[3]");
  CHECK(g::slice(bounded, 0, 500, 512, 4).shape()[0] == dim::named("seq", 3));
  auto u = b.parameter("u", shape::make(dtype::f32, {nax::dynamic, 3}));
  CHECK(g::slice(u, 0, 1, 3).shape()[0] == dim(2));  // unnamed stays unnamed
  // All of an axis is x itself.
  CHECK(g::slice(x, "batch", 0, g::slice_end).id() == x.id());
  CHECK(g::slice(x, 1, 0, g::slice_end).id() == x.id());
  CHECK(g::slice(x, 1, 0, 10).id() == x.id());
  CHECK(g::slice(u, 0, 0, g::slice_end).id() == u.id());
  // CSE: identical slices are one node, by name or position; others are not.
  CHECK(same(g::slice(x, "hidden", 2, 7), s));
  CHECK(same(g::slice(x, 1, 2, 7, 1), s));
  CHECK(!same(g::slice(x, 1, 2, 8), s));
  CHECK(!same(g::slice(x, 1, 2, 7, 2), s));
  CHECK(!same(g::slice(x, 1, 2, 10, 3), g::slice(x, 1, 2, 9, 3)));  // same shape, other stop
  CHECK(same(g::slice(x, 1, 3, g::slice_end, 2), g::slice(x, 1, 3, 10, 2)));
}

TEST_CASE("slice errors name the axis and its extent") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("hidden", 10)}));
  auto p = b.parameter("p", shape::make(dtype::f32, {4, 6}));
  auto bounded = b.parameter("bounded", shape::make(dtype::f32, {dim::bounded("seq", 512)}));
  auto u = b.parameter("u", shape::make(dtype::f32, {nax::dynamic}));
  CHECK_THROWS_WITH_AS(g::slice(x, "hidden", 2, 12),
                       "nax::graph::slice(f32[batch, 10]): stop 12 is out of range for axis "
                       "'hidden' (extent 10)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, "hidden", 11, g::slice_end),
                       "nax::graph::slice(f32[batch, 10]): start 11 is out of range for axis "
                       "'hidden' (extent 10)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(p, 1, 0, 7),
                       "nax::graph::slice(f32[4, 6]): stop 7 is out of range for axis 1 (extent 6)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, 1, 5, 3),
                       "nax::graph::slice(f32[batch, 10]): start 5 is after stop 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, "batch", 9, 8),
                       "nax::graph::slice(f32[batch, 10]): start 9 is after stop 8",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, 1, 0, 4, 0),
                       "nax::graph::slice(f32[batch, 10]): step 0 is not positive",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, 1, -1, 4),
                       "nax::graph::slice(f32[batch, 10]): start -1 is negative", nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, 1, 0, -1),
                       "nax::graph::slice(f32[batch, 10]): stop -1 is negative "
                       "(nax::graph::slice_end slices to the end)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, "batch", 1, g::slice_end),
                       "nax::graph::slice(f32[batch, 10]): a slice to the end of dynamic axis "
                       "'batch' must be all of it (start 0, step 1): its extent would have no "
                       "name to bind; give stop",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(u, 0, 0, g::slice_end, 2),
                       "nax::graph::slice(f32[?]): a slice to the end of dynamic axis 0 must be "
                       "all of it (start 0, step 1): its extent would have no name to bind; give "
                       "stop",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(bounded, "seq", 0, 513),
                       "nax::graph::slice(f32[seq<=512]): stop 513 exceeds the bound 512 of axis "
                       "'seq'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(u, 0, 0, 3000000000),
                       "nax::graph::slice(f32[?]): stop 3000000000 does not fit in int32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(u, 0, 0, 8, 3000000000),
                       "nax::graph::slice(f32[?]): step 3000000000 does not fit in int32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, "seq", 0, 1),
                       "nax::graph::slice: operand 0 (f32[batch, 10]) has no axis 'seq'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::slice(x, 2, 0, 1),
                       "nax::graph::slice: axis 2 is out of range for operand 0 (f32[batch, 10], "
                       "rank 2)",
                       nax::shape_error);
}

// --- concat -------------------------------------------------------------------------------------

TEST_CASE("concat: static sums, names unify, other axes unify") {
  g::builder b;
  auto a = b.parameter("a", shape::make(dtype::f32, {"batch", dim::named("hidden", 3)}));
  auto c = b.parameter("c", shape::make(dtype::f32, {nax::dynamic, dim::named("hidden", 5)}));
  auto e = b.parameter("e", shape::make(dtype::f32, {dim::bounded("batch", 64), 2}));
  auto r = g::concat({a, c, e}, "hidden");
  CHECK(str(r) == "f32[batch<=64, 10]");  // batch, ? and batch<=64 unify
  CHECK(r.shape()[1] == dim::named("hidden", 10));
  CHECK(kind(r) == g::op_kind::concat);
  CHECK(ints(r) == std::vector<int>{1});
  CHECK(b.at(r.id()).inputs.size() == 3);
  auto r2 = g::concat({e, a}, 1);  // unnamed first: adopts the name
  CHECK(r2.shape()[1] == dim::named("hidden", 5));
  CHECK(str(r2) == "f32[batch<=64, 5]");
  auto p = b.parameter("p", shape::make(dtype::i32, {2, 3}));
  auto q = b.parameter("q", shape::make(dtype::i32, {4, 3}));
  CHECK(str(g::concat({p, q}, 0)) == "i32[6, 3]");
  CHECK(g::concat({p, q}, 0).shape()[0] == dim(6));
  CHECK(str(g::concat({p, p, p}, 1)) == "i32[2, 9]");
  // Static along the joined axis, dynamic elsewhere.
  auto s1 = b.parameter("s1", shape::make(dtype::f32, {"seq", 4}));
  auto s2 = b.parameter("s2", shape::make(dtype::f32, {"seq", 1}));
  CHECK(str(g::concat({s1, s2}, 1)) == "f32[seq, 5]");
  // From a span; one operand is itself (even along a dynamic axis); CSE; order matters.
  const std::vector<g::value> v = {p, q};
  CHECK(same(g::concat(v, 0), g::concat({p, q}, 0)));
  CHECK(g::concat({a}, "batch").id() == a.id());
  CHECK(!same(g::concat({p, q}, 0), g::concat({q, p}, 0)));
}

TEST_CASE("concat pairs the axes by name when an operand has them in another order") {
  g::builder b;
  const dim rows = dim::named("rows", 2), cols = dim::named("cols", 3);
  auto x = b.parameter("x", shape::make(dtype::f32, {rows, cols}));
  auto y = b.parameter("y", shape::make(dtype::f32, {cols, dim::named("rows", 1)}));
  auto r = g::concat({x, y}, "rows");
  CHECK(r.shape() == shape::make(dtype::f32, {dim::named("rows", 3), cols}));
  // y goes in transposed to x's order.
  const g::node& n = b.at(r.id());
  REQUIRE(n.inputs.size() == 2);
  CHECK(n.inputs[0] == x.id());
  const g::node& t = b.at(n.inputs[1]);
  CHECK(t.kind() == g::op_kind::transpose);
  REQUIRE(t.inputs.size() == 1);
  CHECK(t.inputs[0] == y.id());
  CHECK(t.shape == shape::make(dtype::f32, {dim::named("rows", 1), cols}));
  // With a new name for the joined axis: the same pairing.
  CHECK(g::concat({x, y}, "rows", "both").shape() ==
        shape::make(dtype::f32, {dim::named("both", 3), cols}));
  // The same order, or names that are not a permutation of the first's: by position.
  auto z = b.parameter("z", shape::make(dtype::f32, {dim::named("rows", 4), cols}));
  CHECK(b.at(g::concat({x, z}, 0).id()).inputs[1] == z.id());
  auto u = b.parameter("u", shape::make(dtype::f32, {5, 3}));
  CHECK(b.at(g::concat({x, u}, 0).id()).inputs[1] == u.id());
  CHECK(g::concat({x, u}, 0).shape() == shape::make(dtype::f32, {dim::named("rows", 7), cols}));
}

TEST_CASE("concat errors name the operands, the axis and the extents") {
  g::builder b;
  auto a = b.parameter("a", shape::make(dtype::f32, {"batch", dim::named("hidden", 3)}));
  auto t = b.parameter("t", shape::make(dtype::f32, {"time", 3}));
  auto w = b.parameter("w", shape::make(dtype::f32, {"batch", dim::named("width", 2)}));
  auto d = b.parameter("d", shape::make(dtype::f64, {"batch", 3}));
  auto r3 = b.parameter("r3", shape::make(dtype::f32, {"batch", 3, 1}));
  auto s = b.parameter("s", shape::make(dtype::f32, {2, dim::named("seq", 4)}));
  auto s5 = b.parameter("s5", shape::make(dtype::f32, {2, dim::named("seq", 5)}));
  auto bs = b.parameter("bs", shape::make(dtype::f32, {2, dim::bounded("seq", 8)}));
  auto u = b.parameter("u", shape::make(dtype::f32, {2, nax::dynamic}));
  CHECK_THROWS_WITH_AS(g::concat({a, t}, 1),
                       "nax::graph::concat(f32[batch, 3], f32[time, 3]): operand 1, axis 0: "
                       "incompatible axis names: 'batch' vs 'time'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({s, s5}, 0),
                       "nax::graph::concat(f32[2, 4], f32[2, 5]): operand 1, axis 1: axis 'seq' "
                       "mismatch: 4 vs 5",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({a, w}, 1),
                       "nax::graph::concat(f32[batch, 3], f32[batch, 2]): axis 1: incompatible "
                       "axis names: 'hidden' vs 'width'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({a, d}, 1),
                       "nax::graph::concat(f32[batch, 3], f64[batch, 3]): element types differ: "
                       "operand 0 is f32, operand 1 is f64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({a, a, r3}, 1),
                       "nax::graph::concat(f32[batch, 3], f32[batch, 3], f32[batch, 3, 1]): ranks "
                       "differ: operand 0 has rank 2, operand 2 has rank 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({a, a}, "batch"),
                       "nax::graph::concat(f32[batch, 3], f32[batch, 3]): concat along dynamic "
                       "axis 'batch' (operand 0) needs a name for the joined axis, whose extent "
                       "(the sum) the run binds by it, and a bound",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({s, bs}, 1),
                       "nax::graph::concat(f32[2, 4], f32[2, seq<=8]): concat along dynamic axis "
                       "'seq' (operand 1) needs a name for the joined axis, whose extent (the "
                       "sum) the run binds by it",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({s, u}, 1),
                       "nax::graph::concat(f32[2, 4], f32[2, ?]): concat along dynamic axis 1 "
                       "(operand 1) needs a name for the joined axis, whose extent (the sum) the "
                       "run binds by it, and a bound",
                       nax::shape_error);
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  auto h = b.parameter("h", shape::make(dtype::f32, {2, dim::named("seq", huge)}));
  CHECK_THROWS_WITH_AS(g::concat({s, h}, 1),
                       "nax::graph::concat(f32[2, 4], f32[2, 9223372036854775807]): the joined "
                       "axis 'seq' would have more than 9223372036854775807 elements (operands 0 "
                       "to 1 alone)",
                       nax::shape_error);
  CHECK(g::concat({h}, 1).id() == h.id());  // one operand: nothing summed
  CHECK_THROWS_WITH_AS(g::concat({a, a}, "hidden2"),
                       "nax::graph::concat: operand 0 (f32[batch, 3]) has no axis 'hidden2'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::concat({}, 0), "nax::graph::concat: needs at least one operand",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(b.concat({}, 0), "nax::graph::concat: needs at least one operand",
                       nax::shape_error);
  g::builder other;
  auto o = other.parameter("o", shape::make(dtype::f32, {"batch", 3}));
  CHECK_THROWS_WITH_AS(g::concat({a, o}, 1),
                       "nax::graph::concat: an operand belongs to another builder",
                       nax::shape_error);
}
