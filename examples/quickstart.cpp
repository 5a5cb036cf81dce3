#include <iostream>
#include <nax/nax.hpp>

using batch = nax::axis<"batch">;       // dynamic
using hidden = nax::axis<"hidden", 4>;  // static

int main() {
  nax::tensor<float, batch, hidden> x(batch(2));  // dynamic extents by name
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 0.25f * float(i);
  nax::tensor<float, hidden> b;
  b.fill(-1.0f);
  auto y = nax::eval(nax::tanh(x * 2.0f + b));   // one fused SIMD loop; b broadcast by name
  std::cout << nax::softmax<hidden>(y) << "\n";  // numerically stable, along a named axis
  nax::tensor<float, batch> other(batch(3));
  try {
    y = y * other;
  } catch (const nax::shape_error& e) {
    std::cout << e.what() << "\n";
  }
}
