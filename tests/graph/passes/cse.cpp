// The CSE pass: equal nodes built twice are one node after it, and only equal ones.
#include <nax/graph/ops.hpp>
#include <nax/graph/passes/cse.hpp>

#include <algorithm>
#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dtype;
using nax::shape;

namespace {

// The graph of b with these outputs after the CSE pass alone, and each output's new id.
struct merged {
  g::ir graph;
  std::vector<g::node_id> out;
};
merged cse(const g::builder& b, std::initializer_list<g::value> outputs) {
  merged m{b.graph(), {}};
  std::vector<g::node_id> ids;
  for (const g::value& v : outputs) ids.push_back(v.id());
  m.graph.set_outputs(ids);
  g::passes::cse(m.graph);
  m.out.assign(m.graph.outputs().begin(), m.graph.outputs().end());
  return m;
}

}  // namespace

TEST_CASE("CSE: the same op on the same inputs with the same attributes is one node") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 512}));
  auto w = b.parameter("w", shape::make(dtype::f32, {512, 64}));
  auto h1 = g::tanh(g::dot_general(x, w, {{1, 0}}));
  auto h2 = g::tanh(g::dot_general(x, w, {{1, 0}}));
  CHECK(h1.id() != h2.id());  // the builder only appends
  merged m = cse(b, {h1, h2});
  CHECK(m.out[0] == m.out[1]);
  CHECK(m.graph.size() == 4);  // x, w, the product, tanh

  // Constants merge by value (bit for bit), reductions by their resolved axes.
  CHECK(cse(b, {x * 2.0, x * 2.0}).out[0] == cse(b, {x * 2.0, x * 2.0}).out[1]);
  auto twice = cse(b, {x * 2.0, x * 3.0});
  CHECK(twice.out[0] != twice.out[1]);
  auto zeros = cse(b, {x * 0.0, x * -0.0});
  CHECK(zeros.out[0] != zeros.out[1]);
  auto sums = cse(b, {g::sum(x, {0}), g::sum(x, {"batch"})});
  CHECK(sums.out[0] == sums.out[1]);
  auto kinds = cse(b, {g::sum(x, {0}), g::mean(x, {0})});
  CHECK(kinds.out[0] != kinds.out[1]);
  auto axes = cse(b, {g::softmax(x, 0), g::softmax(x, 1)});
  CHECK(axes.out[0] != axes.out[1]);
}

TEST_CASE("CSE: parameters never merge, and operand order matters") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 512}));
  auto x2 = b.parameter("x2", shape::make(dtype::f32, {"batch", 512}));
  merged m = cse(b, {x, x2, x + x2, x2 + x});
  CHECK(m.out[0] != m.out[1]);
  CHECK(m.out[2] != m.out[3]);
  CHECK(m.graph.size() == 4);
}

TEST_CASE("CSE: merging cascades to the readers of merged nodes") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 8}));
  auto y1 = g::exp(x) * 2.0 + 1.0;
  auto y2 = g::exp(x) * 2.0 + 1.0;
  merged m = cse(b, {y1, y2});
  CHECK(m.out[0] == m.out[1]);
  // x, exp, 2, mul, 1, add
  CHECK(m.graph.size() == 6);
  // Still in topological order.
  for (g::node_id i = 0; i < m.graph.size(); ++i)
    for (g::node_id in : m.graph[i].inputs) CHECK(in < i);
}
