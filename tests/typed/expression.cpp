// Expression nodes: axes by name, extents, operands kept alive, checks at build time.
#include <nax/typed/expression.hpp>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(16)>;
using hidden = nax::axis<"hidden", 4>;
using hidden_dyn = nax::axis<"hidden">;

TEST_CASE("a node's axes: left axes, then right-only axes in right order") {
  nax::tensor<float, batch, hidden> x(batch{2});
  nax::tensor<float, seq, batch> y(batch{2}, seq{3});
  auto e = x * y;
  static_assert(std::is_same_v<decltype(e)::axes_type, nax::axes<batch, hidden, seq>>);
  static_assert(std::is_same_v<decltype(e)::value_type, float>);
  CHECK(e.extent<batch>() == 2);
  CHECK(e.extent<hidden>() == 4);
  CHECK(e.extent<seq>() == 3);
  auto cmp = x < 1.0f;
  static_assert(std::is_same_v<decltype(cmp)::value_type, bool>);
  static_assert(std::is_same_v<decltype(cmp)::lane_type, float>);
  static_assert(nax::expression<decltype(cmp)> && nax::expression<decltype(x)>);
  static_assert(!nax::expression<float>);
}

TEST_CASE("a dynamic axis meets the static one of the same name and takes it") {
  nax::tensor<float, batch, hidden> x(batch{2});
  nax::tensor<float, hidden_dyn> v(hidden_dyn{4});
  auto e = x + v;
  static_assert(std::is_same_v<decltype(e)::axes_type, nax::axes<batch, hidden>>);
  nax::tensor<float, hidden_dyn> wrong(hidden_dyn{5});
  CHECK_THROWS_WITH_AS(x + wrong, "axis 'hidden' mismatch: 4 vs 5", nax::shape_error);
}

TEST_CASE("an rvalue tensor is kept alive by the expression that reads it") {
  nax::tensor<float, batch> x(batch{3});
  x.fill(2);
  auto e = nax::eval(x * 3) + 1.0f;  // the temporary is moved into the node
  nax::tensor<float, batch> y = e;
  for (float v : y) CHECK(v == 7);
}

TEST_CASE("scalar nodes have no axes") {
  nax::detail::scalar_node<double> s(2.5);
  static_assert(std::is_same_v<decltype(s)::axes_type, nax::axes<>>);
  CHECK(s.value() == 2.5);
  nax::tensor<double> t = s + 0.0;
  CHECK(t() == 2.5);
}
