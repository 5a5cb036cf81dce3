// Compile-time probe: one nax::jit MLP block traced, compiled and run at two batch sizes.
#include <cstdio>

#include <nax/nax.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 64>;
using inner = nax::axis<"inner", 256>;

int main() {
  auto block = [](auto x, auto w1, auto b1, auto w2, auto b2) {
    auto h = nax::gelu(nax::dot<hidden>(x, w1) + b1);
    return nax::dot<inner>(h, w2) + b2;
  };
  auto mlp = nax::jit(block, nax::input<float, batch, hidden>("x"),
                      nax::input<float, hidden, inner>("w1"), nax::input<float, inner>("b1"),
                      nax::input<float, inner, hidden>("w2"), nax::input<float, hidden>("b2"));

  nax::tensor<float, hidden, inner> w1;
  nax::tensor<float, inner> b1;
  nax::tensor<float, inner, hidden> w2;
  nax::tensor<float, hidden> b2;
  for (std::size_t i = 0; i < w1.size(); ++i) w1.data()[i] = 0.001f * float(i % 31);
  for (std::size_t i = 0; i < w2.size(); ++i) w2.data()[i] = 0.002f * float(i % 17);
  b1.fill(0.1f);
  b2.fill(-0.1f);

  for (std::size_t n : {4u, 32u}) {
    nax::tensor<float, batch, hidden> x{batch(n)};
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 0.01f * float(i % 89);
    nax::tensor<float, batch, hidden> y = mlp(x, w1, b1, w2, b2);
    std::printf("batch %zu: %f\n", n, double(y.data()[0]));
  }
  std::printf("%zu specializations\n", mlp.executable().stats().live);
  return 0;
}
