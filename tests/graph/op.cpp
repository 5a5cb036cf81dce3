// graph::attributes: one op struct at a time, copied, moved, assigned and compared by kind and
// contents; the wrong struct asked for is an error naming both kinds.
#include <nax/graph/op.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace g = nax::graph;

namespace {

g::attributes reduce_over(std::vector<std::uint32_t> axes) {
  g::reduce_op r{nax::ops::reduce_kind::max, {}};
  for (std::uint32_t a : axes) r.axes.push_back(a);
  return r;
}

}  // namespace

TEST_CASE("attributes hold one op struct, with its kind") {
  const g::attributes none;
  CHECK(none.kind() == g::op_kind::parameter);
  CHECK(none.get<g::parameter_op>().name.empty());

  const g::attributes p = g::parameter_op{"a parameter name longer than any small string", 3};
  CHECK(p.kind() == g::op_kind::parameter);
  CHECK(p.is<g::parameter_op>());
  CHECK_FALSE(p.is<g::reduce_op>());
  CHECK(p.get_if<g::reduce_op>() == nullptr);
  REQUIRE(p.get_if<g::parameter_op>() != nullptr);
  CHECK(p.get_if<g::parameter_op>()->index == 3);

  const g::attributes r = reduce_over({0, 2});
  CHECK(r.kind() == g::op_kind::reduce);
  CHECK(g::kind_of(r) == g::op_kind::reduce);
  CHECK(r.get<g::reduce_op>().axes.size() == 2);
  CHECK(g::op_label(r) == "reduce_max");
  CHECK(g::op_label(g::elementwise_op{nax::ops::id::tanh}) == "tanh");
  CHECK(g::op_label(g::softmax_op{1}) == "softmax");
}

TEST_CASE("attributes copy, move and assign across kinds") {
  const std::string name = "a parameter name longer than any small string";
  g::attributes a = g::parameter_op{name, 1};
  g::attributes b = a;  // copy
  CHECK(b == a);
  CHECK(b.get<g::parameter_op>().name == name);

  g::attributes c = std::move(b);  // move
  CHECK(c.get<g::parameter_op>().name == name);

  c = reduce_over({1});  // another kind: the string is destroyed, the axes built
  CHECK(c.kind() == g::op_kind::reduce);
  CHECK(c.get<g::reduce_op>().axes[0] == 1);

  g::attributes d = g::slice_op{2, 1, 9, 2};
  d = c;  // copy-assign across kinds
  CHECK(d == c);
  d = a;
  CHECK(d.get<g::parameter_op>().name == name);
  const g::attributes& same = d;
  d = same;  // self-assignment keeps the value
  CHECK(d.get<g::parameter_op>().name == name);

  std::vector<g::attributes> many(40, a);  // vector growth moves them
  many.push_back(c);
  CHECK(many.front() == a);
  CHECK(many.back() == c);

  g::attributes& e = d.get<g::parameter_op>().index == 1 ? d : a;
  e.get<g::parameter_op>().index = 7;  // the mutable accessor writes in place
  CHECK(d.get<g::parameter_op>().index == 7);
}

TEST_CASE("attributes compare by kind, then by the struct's own rule") {
  CHECK(g::attributes(g::softmax_op{1}) == g::attributes(g::softmax_op{1}));
  CHECK_FALSE(g::attributes(g::softmax_op{1}) == g::attributes(g::softmax_op{0}));
  CHECK_FALSE(g::attributes(g::softmax_op{0}) == g::attributes(g::concat_op{0}));
  CHECK_FALSE(reduce_over({0}) == reduce_over({0, 1}));
  // Constants compare by bits: CSE keeps 0.0 and -0.0 apart.
  CHECK_FALSE(g::attributes(g::constant_op{0.0}) == g::attributes(g::constant_op{-0.0}));
  CHECK(g::attributes(g::constant_op{1.5}) == g::attributes(g::constant_op{1.5}));
}

TEST_CASE("asking attributes for another op's struct names both kinds") {
  const g::attributes s = g::softmax_op{1};
  CHECK_THROWS_WITH_AS(s.get<g::reduce_op>(), "nax::graph: a node's op is softmax, not reduce",
                       std::logic_error);
}
