// nax::value_and_grad: a typed loss and its gradients by the inputs not declared nax::data, each
// with its input's axes; against central differences of the same loss under nax::jit, in double.
#include <nax/jit/value_and_grad.hpp>

#include <cmath>
#include <tuple>
#include <type_traits>

#include <doctest/doctest.h>

namespace {

using batch = nax::axis<"batch">;
using in = nax::axis<"in", 3>;
using out = nax::axis<"out", 2>;

const auto loss_fn = [](auto x, auto y, auto w, auto b) {
  auto e = nax::tanh(nax::dot<in>(x, w) + b) - y;
  return nax::mean<batch>(nax::sum<out>(e * e));
};

template <class Tensor>
void fill(Tensor& t, double seed) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = std::sin(seed + 1.7 * double(i));
}

}  // namespace

TEST_CASE("value_and_grad: the loss and the gradients of the weights, not of the data") {
  auto step = nax::value_and_grad(loss_fn, nax::data<double, batch, in>("x"),
                                  nax::data<double, batch, out>("y"),
                                  nax::input<double, in, out>("w"), nax::input<double, out>("b"));
  auto loss_only =
      nax::jit(loss_fn, nax::input<double, batch, in>("x"), nax::input<double, batch, out>("y"),
               nax::input<double, in, out>("w"), nax::input<double, out>("b"));
  nax::tensor<double, batch, in> x{batch(4)};
  nax::tensor<double, batch, out> y{batch(4)};
  nax::tensor<double, in, out> w;
  nax::tensor<double, out> b;
  fill(x, 0.1);
  fill(y, 0.7);
  fill(w, 1.3);
  fill(b, 2.9);
  auto [loss, grads] = step(x, y, w, b);
  static_assert(std::tuple_size_v<decltype(grads)> == 2);
  static_assert(
      std::is_same_v<std::tuple_element_t<0, decltype(grads)>, nax::tensor<double, in, out>>);
  static_assert(std::is_same_v<std::tuple_element_t<1, decltype(grads)>, nax::tensor<double, out>>);
  CHECK(loss.data()[0] == doctest::Approx(loss_only(x, y, w, b).data()[0]).epsilon(1e-14));
  auto numeric = [&](auto& param, std::size_t i) {
    const double keep = param.data()[i], h = 1e-6;
    param.data()[i] = keep + h;
    const double up = loss_only(x, y, w, b).data()[0];
    param.data()[i] = keep - h;
    const double down = loss_only(x, y, w, b).data()[0];
    param.data()[i] = keep;
    return (up - down) / (2 * h);
  };
  for (std::size_t i = 0; i < w.size(); ++i)
    CHECK(std::get<0>(grads).data()[i] == doctest::Approx(numeric(w, i)).epsilon(1e-7));
  for (std::size_t i = 0; i < b.size(); ++i)
    CHECK(std::get<1>(grads).data()[i] == doctest::Approx(numeric(b, i)).epsilon(1e-7));
  // Another batch: another specialization of the same graph.
  nax::tensor<double, batch, in> x2{batch(7)};
  nax::tensor<double, batch, out> y2{batch(7)};
  fill(x2, 3.3);
  fill(y2, 4.4);
  auto [loss2, grads2] = step(x2, y2, w, b);
  CHECK(loss2.data()[0] == doctest::Approx(loss_only(x2, y2, w, b).data()[0]).epsilon(1e-14));
  CHECK(step.executable().stats().misses == 2);
}
