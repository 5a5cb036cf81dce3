// An elementwise expression over traced values is one graph node running the typed evaluator's
// fused loop: bitwise equal to the eager evaluation, one operand per distinct input.
#include "jit_helpers.hpp"

#include <string>
#include <tuple>
#include <vector>

using namespace jit_test;

namespace {

const auto elementwise = [](auto x, auto y) {
  return nax::where(x > 0.0f, nax::exp(-x) * y, nax::tanh(x) + y * y) + 1.0f;
};

}  // namespace

TEST_CASE("jit: a pure elementwise function is one fused node over its distinct inputs") {
  auto f =
      nax::jit(elementwise, nax::input<float, batch, hidden>("x"), nax::input<float, hidden>("y"));
  REQUIRE(f.executable().program().steps.size() == 1);
  const g::program_step& s = f.executable().program().steps[0];
  CHECK(s.kind() == g::op_kind::external);
  CHECK(s.args.size() == 2);  // x and y, each read twice by the expression
  CHECK(s.as<g::external_op>().kernel->label() ==
        "fused: greater, neg, exp, mul, tanh, mul, add, where, add");

  nax::tensor<float, hidden> y;
  fill(y, 1);
  for (std::size_t n : {1, 3, 64}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 2 + static_cast<std::uint32_t>(n));
    const nax::tensor<float, batch, hidden> got = f(x, y);
    check_close(got, nax::eval(eager(elementwise, x, y)), 0);  // the very same loop
  }

  // A strided view is copied before the run.
  nax::tensor<float, batch, hidden> wide(batch(6));
  fill(wide, 5);
  const nax::tensor_view<const float, batch, hidden> every_other(
      wide.data(), nax::extents<batch, hidden>(batch(3)), {2 * 24, 1});
  check_close(f(every_other, y), nax::eval(elementwise(every_other, y)), 0);
}

TEST_CASE("jit: two different fused expressions over the same inputs stay two nodes") {
  auto f = nax::jit([](auto x) { return std::tuple(x * 2.0f, x + 1.0f); },
                    nax::input<float, batch, hidden>("x"));
  CHECK(f.executable().program().steps.size() == 2);
  nax::tensor<float, batch, hidden> x{batch(2)};
  fill(x, 1);
  const auto [twice, plus_one] = f(x);
  check_close(twice, nax::eval(x.view() * 2.0f), 0);
  check_close(plus_one, nax::eval(x.view() + 1.0f), 0);
}
