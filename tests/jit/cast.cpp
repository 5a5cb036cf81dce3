// nax::cast<U>(e) as a whole value under nax::jit (jit/fused_expression.hpp's lower): a convert
// node, whose values are the eager cast's and through which value_and_grad differentiates.
#include <nax/jit/value_and_grad.hpp>

#include <cstdint>
#include <tuple>

#include <doctest/doctest.h>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/reduce.hpp>

namespace g = nax::graph;

namespace {

using batch = nax::axis<"batch">;
using h = nax::axis<"h", 3>;

}  // namespace

TEST_CASE("cast<U> under nax::jit: a convert node, the eager cast's values, a gradient") {
  auto f = nax::jit([](auto x, auto ids) { return nax::cast<float>(ids) + nax::cast<float>(x); },
                    nax::input<double, batch, h>("x"), nax::input<std::int64_t, batch, h>("ids"));
  nax::tensor<double, batch, h> x{batch(2)};
  nax::tensor<std::int64_t, batch, h> ids{batch(2)};
  for (std::size_t i = 0; i < x.size(); ++i) {
    x.data()[i] = 0.1 + 1.37 * static_cast<double>(i) - 3;
    ids.data()[i] = static_cast<std::int64_t>(i) * 5 - 7;
  }
  const nax::tensor<float, batch, h> got = f(x, ids);
  const nax::tensor<float, batch, h> want = nax::cast<float>(ids) + nax::cast<float>(x);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == want.data()[i]);

  // d/dx sum(cast<double>(cast<float>(x) * w)) = w (as double). Each cast is a whole value (eval
  // makes the inner one so); a cast inside a larger expression would be an external node.
  auto step = nax::value_and_grad(
      [](auto x2, auto w) {
        return nax::sum<batch, h>(nax::cast<double>(nax::eval(nax::cast<float>(x2)) * w));
      },
      nax::input<double, batch, h>("x"), nax::data<float, batch, h>("w"));
  nax::tensor<float, batch, h> w{batch(2)};
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = 0.25f * static_cast<float>(i) - 1;
  auto [loss, grads] = step(x, w);
  const auto& gx = std::get<0>(grads);
  double want_loss = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    want_loss += static_cast<double>(static_cast<float>(x.data()[i]) * w.data()[i]);
    CHECK(gx.data()[i] == static_cast<double>(w.data()[i]));
  }
  CHECK(loss.data()[0] == doctest::Approx(want_loss).epsilon(1e-12));
}
