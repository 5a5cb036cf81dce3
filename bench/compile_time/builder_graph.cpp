// Compile-time probe: a small graph built with nax::graph::builder, compiled and run.
#include <cstdio>
#include <vector>

#include <nax/nax.hpp>

int main() {
  namespace g = nax::graph;
  g::builder b;
  auto x = b.parameter("x", nax::shape::make(nax::dtype::f32, {"batch", 64}));
  auto w = b.parameter("w", nax::shape::make(nax::dtype::f32, {64, 32}));
  auto bias = b.parameter("bias", nax::shape::make(nax::dtype::f32, {"batch", 32}));
  auto h = g::gelu(g::dot_general(x, w, {{1, 0}}) + bias);
  auto p = g::softmax(h, 1);
  auto s = g::sum(p * 2.0, {1});
  auto ex = g::compile(b, {p, s});

  for (std::size_t n : {4u, 16u}) {
    nax::dyn_tensor xv(nax::shape::make(nax::dtype::f32, {n, 64}));
    nax::dyn_tensor wv(nax::shape::make(nax::dtype::f32, {64, 32}));
    nax::dyn_tensor bv(nax::shape::make(nax::dtype::f32, {n, 32}));
    for (nax::dyn_tensor* t : {&xv, &wv, &bv}) {
      float* d = static_cast<float*>(t->data());
      for (std::size_t i = 0; i < t->shape().num_elements(); ++i) d[i] = 0.01f * float(i % 53);
    }
    std::vector<nax::dyn_tensor> r = ex.run({xv, wv, bv});
    std::printf("batch %zu: %f\n", n, double(static_cast<const float*>(r[1].data())[0]));
  }
  std::printf("%zu specializations\n", ex.stats().live);
  return 0;
}
