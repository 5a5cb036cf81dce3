// Compile-time probe: a program that uses only typed tensors (expressions, a reduction, a row
// op, a contraction), as a user's eager model code would.
#include <cstdio>

#include <nax/nax.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 64>;
using out = nax::axis<"out", 32>;

int main() {
  nax::tensor<float, batch, hidden> x(batch(8));
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 0.01f * float(i % 97);
  nax::tensor<float, hidden, out> w;
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = 0.02f * float(i % 13) - 0.1f;
  nax::tensor<float, out> b;
  b.fill(0.5f);
  nax::tensor<float, hidden> gamma, beta;
  gamma.fill(1.0f);
  beta.fill(0.0f);

  auto n = nax::layer_norm<hidden>(x, gamma, beta, 1e-5f);
  nax::tensor<float, batch, out> h = nax::gelu(nax::dot<hidden>(n, w) + b);
  auto p = nax::softmax<out>(h * 2.0f - 1.0f);
  auto s = nax::sum<out>(p);
  auto m = nax::max<batch>(nax::tanh(h));
  std::printf("%f %f %f\n", double(s.data()[0]), double(m.data()[0]), double(p.data()[0]));
  return 0;
}
