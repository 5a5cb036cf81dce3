// graph::in_place_inputs: which results may be written in an input's buffer (a
// dynamic_update_slice of an input nothing else reads), and every way that is refused.
#include <nax/graph/compile_program.hpp>
#include <nax/graph/in_place.hpp>
#include <nax/graph/ops.hpp>

#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {

struct cache_graph {
  g::builder b;
  g::value cache, row, start;
  cache_graph() {
    cache = b.parameter("cache",
                        shape::make(dtype::f32, {dim::bounded("pos", 16), dim::named("h", 4)}));
    row = b.parameter("row", shape::make(dtype::f32, {dim::named("pos", 1), dim::named("h", 4)}));
    start = b.parameter("start", shape::make(dtype::i32, {}));
  }
  std::vector<g::value_index> in_place(std::initializer_list<g::value> outs) const {
    const g::program p = g::compile_program(b, std::span(outs.begin(), outs.size()));
    return g::in_place_inputs(p);
  }
};

constexpr g::value_index none = g::no_value;

}  // namespace

TEST_CASE("a dynamic_update_slice of an input nothing else reads may update it in place") {
  cache_graph c;
  const g::value updated = g::dynamic_update_slice(c.cache, c.row, "pos", c.start);
  CHECK(c.in_place({updated}) == std::vector<g::value_index>{0});
  // Read afterwards (the result, not the input): still in place; the other result is not.
  CHECK(c.in_place({g::sum(updated, {"pos"}), updated}) == std::vector<g::value_index>{none, 0});
  // A second update, of the first's result: its operand is no input.
  const g::value twice = g::dynamic_update_slice(updated, c.row, "pos", c.start);
  CHECK(c.in_place({twice}) == std::vector<g::value_index>{none});
}

TEST_CASE("not in place: the input read elsewhere, or a result itself") {
  cache_graph c;
  const g::value updated = g::dynamic_update_slice(c.cache, c.row, "pos", c.start);
  CHECK(c.in_place({updated, g::sum(c.cache, {"pos"})}) == std::vector<g::value_index>{none, none});
  CHECK(c.in_place({updated, c.cache}) == std::vector<g::value_index>{none, none});
  // An operand that is not an input (an intermediate) has no caller's buffer to update.
  const g::value scaled = g::dynamic_update_slice(c.cache * 2.0, c.row, "pos", c.start);
  CHECK(c.in_place({scaled}) == std::vector<g::value_index>{none});
}
