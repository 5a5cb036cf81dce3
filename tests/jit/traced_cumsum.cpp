// cumsum<A> under nax::jit and nax::value_and_grad (jit/traced_cumsum.hpp): one cumsum node, the
// eager op's bits in each form and element type, and its gradient (the cotangent summed the
// other way) against the sum it must be.
#include <nax/jit/traced_cumsum.hpp>
#include <nax/jit/value_and_grad.hpp>

#include <cmath>
#include <cstdint>
#include <tuple>

#include <doctest/doctest.h>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/reduce.hpp>

#include "support/bits.hpp"

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", 5>;

template <class Tensor>
void fill(Tensor& t, double seed) {
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data()[i] = static_cast<typename Tensor::value_type>(std::sin(seed + 1.7 * double(i)) * 9);
}

}  // namespace

TEST_CASE_TEMPLATE("cumsum under nax::jit: one node, the eager op's bits", T, float, double,
                   std::int32_t, std::int64_t) {
  nax::tensor<T, batch, seq> x{batch(3)};
  fill(x, 0.4);
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      CAPTURE(exclusive);
      CAPTURE(reverse);
      const nax::cumsum_options o{exclusive, reverse};
      auto f = nax::jit([o](auto t) { return nax::cumsum<seq>(t * T(3), o); },
                        nax::input<T, batch, seq>("x"));
      auto g = nax::jit([o](auto t) { return nax::cumsum<batch>(t, o); },
                        nax::input<T, batch, seq>("x"));
      CHECK(nax_test::same_bits(f(x), nax::cumsum<seq>(x * T(3), o)));
      CHECK(nax_test::same_bits(g(x), nax::cumsum<batch>(x, o)));
    }
  auto f = nax::jit([](auto t) { return nax::cumsum<seq>(t); }, nax::input<T, batch, seq>("x"));
  CHECK(f.executable().to_dot().find("label=\"cumsum\"") != std::string::npos);
}

TEST_CASE("cumsum's gradient under nax::value_and_grad: the cotangent summed the other way") {
  // loss = sum over (b, j) of w[b, j] * y[b, j], y = cumsum along seq (inclusive): dloss/dx[b, i]
  // is the sum of w[b, j] over j >= i.
  const auto loss_fn = [](auto x, auto w) { return nax::sum<batch, seq>(nax::cumsum<seq>(x) * w); };
  auto step = nax::value_and_grad(loss_fn, nax::input<double, batch, seq>("x"),
                                  nax::data<double, batch, seq>("w"));
  nax::tensor<double, batch, seq> x{batch(2)}, w{batch(2)};
  fill(x, 0.1);
  fill(w, 2.3);
  auto [loss, grads] = step(x, w);
  static_assert(std::tuple_size_v<decltype(grads)> == 1);
  const auto& gx = std::get<0>(grads);
  double want_loss = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 5; ++i) {
      double sum = 0, back = 0;
      for (std::size_t j = 0; j <= i; ++j) sum += x(b, j);
      for (std::size_t j = i; j < 5; ++j) back += w(b, j);
      want_loss += sum * w(b, i);
      CAPTURE(i);
      CHECK(gx(b, i) == doctest::Approx(back).epsilon(1e-12));
    }
  CHECK(loss.data()[0] == doctest::Approx(want_loss).epsilon(1e-12));
}
