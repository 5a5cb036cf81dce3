// Training a classifier with nax: two interleaved spirals of points in the plane, told apart by an
// MLP (2 -> 32 -> 32 -> 2, tanh) trained on the full set with AdamW. The loss and its gradients
// are one compiled graph (nax::value_and_grad); the weights are updated in place by nax::optim.
// Exits 0 once the training accuracy reaches 97%, 1 if it does not within the step budget.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <tuple>

#include <nax/jit/value_and_grad.hpp>
#include <nax/typed/optim.hpp>

using batch = nax::axis<"batch">;
using in = nax::axis<"in", 2>;
using hid = nax::axis<"hid", 32>;
using hid2 = nax::axis<"hid2", 32>;
using cls = nax::axis<"cls", 2>;

// Cross-entropy of the MLP's logits against one-hot labels, averaged over the batch.
const auto loss_of = [](auto x, auto onehot, auto w1, auto b1, auto w2, auto b2, auto w3, auto b3) {
  auto h1 = nax::tanh(nax::dot<in>(x, w1) + b1);
  auto h2 = nax::tanh(nax::dot<hid>(h1, w2) + b2);
  auto logits = nax::dot<hid2>(h2, w3) + b3;
  return -nax::mean<batch>(nax::sum<cls>(onehot * nax::log_softmax<cls>(logits)));
};

// The logits alone, for the accuracy.
const auto logits_of = [](auto x, auto w1, auto b1, auto w2, auto b2, auto w3, auto b3) {
  auto h1 = nax::tanh(nax::dot<in>(x, w1) + b1);
  auto h2 = nax::tanh(nax::dot<hid>(h1, w2) + b2);
  return nax::dot<hid2>(h2, w3) + b3;
};

int main() {
  // The data: n points per spiral, one and a half turns each, a little noise.
  constexpr std::size_t n = 200, points = 2 * n;
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  nax::tensor<float, batch, in> x{batch(points)};
  nax::tensor<float, batch, cls> onehot{batch(points)};
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < n; ++i) {
      const float t = float(i) / float(n),
                  angle = 3 * std::numbers::pi_v<float> * t + float(c) * std::numbers::pi_v<float>;
      const std::size_t p = c * n + i;
      x(p, 0) = t * std::cos(angle) + noise(rng);
      x(p, 1) = t * std::sin(angle) + noise(rng);
      onehot(p, 0) = c == 0 ? 1.0f : 0.0f;
      onehot(p, 1) = c == 1 ? 1.0f : 0.0f;
    }

  // The weights: normal, scaled by 1/sqrt(fan-in); biases zero.
  auto w1 = nax::normal<float, in, hid>(nax::rng{1, 0}, 0.0, 1.0 / std::sqrt(2.0));
  auto w2 = nax::normal<float, hid, hid2>(nax::rng{1, 1}, 0.0, 1.0 / std::sqrt(32.0));
  auto w3 = nax::normal<float, hid2, cls>(nax::rng{1, 2}, 0.0, 1.0 / std::sqrt(32.0));
  nax::tensor<float, hid> b1 = nax::zeros_like(nax::tensor<float, hid>());
  nax::tensor<float, hid2> b2 = nax::zeros_like(nax::tensor<float, hid2>());
  nax::tensor<float, cls> b3 = nax::zeros_like(nax::tensor<float, cls>());

  auto step = nax::value_and_grad(loss_of, nax::data<float, batch, in>("x"),
                                  nax::data<float, batch, cls>("onehot"),
                                  nax::input<float, in, hid>("w1"), nax::input<float, hid>("b1"),
                                  nax::input<float, hid, hid2>("w2"), nax::input<float, hid2>("b2"),
                                  nax::input<float, hid2, cls>("w3"), nax::input<float, cls>("b3"));
  auto predict = nax::jit(logits_of, nax::input<float, batch, in>("x"),
                          nax::input<float, in, hid>("w1"), nax::input<float, hid>("b1"),
                          nax::input<float, hid, hid2>("w2"), nax::input<float, hid2>("b2"),
                          nax::input<float, hid2, cls>("w3"), nax::input<float, cls>("b3"));
  const nax::optim::adamw opt{.lr = 0.02, .weight_decay = 0.0};
  auto s1 = opt.init(w1);  // each parameter's moments
  auto s2 = opt.init(w2);
  auto s3 = opt.init(w3);
  auto t1 = opt.init(b1);
  auto t2 = opt.init(b2);
  auto t3 = opt.init(b3);

  auto accuracy = [&] {
    const auto logits = predict(x, w1, b1, w2, b2, w3, b3);
    std::size_t right = 0;
    for (std::size_t p = 0; p < points; ++p)
      right += (logits(p, 1) > logits(p, 0)) == (onehot(p, 1) > 0.5f);
    return double(right) / double(points);
  };

  const auto start = std::chrono::steady_clock::now();
  double acc = 0;
  for (int k = 1; k <= 3000; ++k) {
    auto [loss, grads] = step(x, onehot, w1, b1, w2, b2, w3, b3);
    opt.step(w1, std::get<0>(grads), s1);
    opt.step(b1, std::get<1>(grads), t1);
    opt.step(w2, std::get<2>(grads), s2);
    opt.step(b2, std::get<3>(grads), t2);
    opt.step(w3, std::get<4>(grads), s3);
    opt.step(b3, std::get<5>(grads), t3);
    if (k % 250 == 0) {
      acc = accuracy();
      std::printf("step %4d: loss %.4f, accuracy %.3f\n", k, double(loss.data()[0]), acc);
      if (acc >= 0.97) break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("training accuracy %.3f in %.2f s\n", acc, seconds);
  return acc >= 0.97 ? 0 : 1;
}
