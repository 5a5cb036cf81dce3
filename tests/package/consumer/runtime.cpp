// Consumer of an installed nax with its compiled component (nax::runtime): a graph built,
// compiled and run, its kernels from the library. See ../run_consumer.cmake.
#include <nax/nax.hpp>

#include <iostream>

int main() {
  namespace g = nax::graph;
  g::builder b;
  auto x = b.parameter("x", nax::shape::make(nax::dtype::f32, {"batch", 4}));
  auto y = g::sum(g::tanh(x) * 0.0 + 2.0, {1});
  auto ex = g::compile(b, {y});
  nax::dyn_tensor in(nax::shape::make(nax::dtype::f32, {nax::dim::named("batch", 3), 4}));
  const nax::dyn_tensor out = ex.run({in})[0];
  std::cout << out.to_string() << " " << out.data<float>()[2] << '\n';
  return 0;
}
