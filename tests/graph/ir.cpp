// The graph IR: the topological order, users, replacing uses, and sort_and_prune.
#include <nax/graph/ir.hpp>
#include <nax/graph/ops.hpp>

#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dtype;
using nax::shape;

TEST_CASE("users, outputs and replace_uses") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  auto e = g::exp(x);
  auto y = e * e;
  g::ir ir = b.graph();
  ir.set_outputs({y.id(), e.id()});
  const g::user_lists u = ir.users();
  auto list = [&](g::node_id i) { return std::vector<g::node_id>(u[i].begin(), u[i].end()); };
  CHECK(list(x.id()) == std::vector<g::node_id>{e.id()});
  CHECK(list(e.id()) == std::vector<g::node_id>{y.id()});  // read twice, listed once
  CHECK(list(y.id()).empty());
  CHECK(u.size() == ir.size());
  CHECK(ir.is_output(e.id()));
  CHECK(!ir.is_output(x.id()));
  ir.replace_uses(e.id(), x.id());
  CHECK(ir[y.id()].inputs[0] == x.id());
  CHECK(ir[y.id()].inputs[1] == x.id());
  CHECK(ir.outputs()[1] == x.id());
}

TEST_CASE("sort_and_prune drops what no output needs, keeps parameters, restores the order") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  auto unused = b.parameter("unused", shape::make(dtype::f32, {3}));
  auto a = g::exp(x);
  auto dead = g::tanh(x);
  auto c = a + 1.0;
  g::ir ir = b.graph();
  ir.set_outputs({c.id()});
  // Rewrite: a reads c's result (a backward edge) is not allowed, but moving a node later is:
  // make `a` read the constant, which was created after it.
  const g::node_id one = ir[c.id()].inputs[1];
  ir.at(a.id()).inputs[0] = one;
  ir.at(a.id()).shape = ir[one].shape;
  const std::vector<g::node_id> id = ir.sort_and_prune();
  CHECK(id[dead.id()] == g::ir::no_node);
  CHECK(id[unused.id()] != g::ir::no_node);  // parameters stay
  CHECK(id[one] < id[a.id()]);
  CHECK(ir.size() == 5);  // x, unused, 1, exp, add
  for (g::node_id i = 0; i < ir.size(); ++i)
    for (g::node_id in : ir[i].inputs) CHECK(in < i);
  CHECK(ir[ir.outputs()[0]].origin == c.id());  // origins survive renumbering
}

TEST_CASE("sort_and_prune keeps an order that stands and renumbers what it keeps") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  auto dead = g::tanh(x);
  auto a = g::exp(x);
  auto dead2 = g::log(a);
  auto c = a * a;
  g::ir ir = b.graph();
  ir.set_outputs({c.id(), a.id()});
  const std::vector<g::node_id> id = ir.sort_and_prune();
  CHECK(id[dead.id()] == g::ir::no_node);
  CHECK(id[dead2.id()] == g::ir::no_node);
  CHECK(id[x.id()] == 0);
  CHECK(id[a.id()] == 1);
  CHECK(id[c.id()] == 2);
  REQUIRE(ir.size() == 3);
  CHECK(ir[2].inputs[0] == 1);
  CHECK(ir[2].inputs[1] == 1);
  CHECK(ir[1].origin == a.id());
  CHECK(ir.outputs()[0] == 2);
  CHECK(ir.outputs()[1] == 1);
  CHECK(ir.sort_and_prune() == std::vector<g::node_id>{0, 1, 2});  // nothing left to drop
}

TEST_CASE("sort_and_prune refuses a cycle, naming what went wrong") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  auto a = g::exp(x);
  auto c = g::tanh(a);
  g::ir ir = b.graph();
  ir.set_outputs({c.id()});
  ir.at(a.id()).inputs[0] = c.id();
  CHECK_THROWS_WITH_AS(ir.sort_and_prune(), doctest::Contains("a pass made a cycle"),
                       nax::shape_error);
}
