// A fused runtime chain against the same chain written as one typed expression (compile-time
// fusion): the same op bodies, so within 2 ulp (the typed evaluator rounds some elements 1 ulp
// apart from the runtime kernels, fused or not; fused and unfused graphs agree bit for bit).
#include <nax/graph/ops.hpp>
#include <nax/nax.hpp>
#include <nax/runtime/compile.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <doctest/doctest.h>

namespace g = nax::graph;
using N = nax::axis<"n">;
using H = nax::axis<"h", 24>;

namespace {

// One spelling for both front ends (unqualified calls: nax:: or nax::graph:: by argument).
template <class X, class Z, class B>
auto chain(const X& x, const Z& z, const B& bias) {
  auto t = tanh((x * 1.5f + z) * 0.5f - 0.25f) * x;
  return t + sigmoid(z + bias) * 0.3f - abs(x) * 0.2f + 0.1f;
}

}  // namespace

TEST_CASE("a fused runtime chain gives the typed expression's bits") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> uni(-3.f, 3.f);
  g::builder b;
  auto gx = b.parameter("x", nax::shape::make(nax::dtype::f32, {"n", nax::dim::named("h", 24)}));
  auto gz = b.parameter("z", nax::shape::make(nax::dtype::f32, {"n", nax::dim::named("h", 24)}));
  auto gb = b.parameter("bias", nax::shape::make(nax::dtype::f32, {nax::dim::named("h", 24)}));
  const g::value y = chain(gx, gz, gb);
  auto fused = g::compile(b, {y});
  auto plain = g::compile(b, {y}, {.fusion = false});
  REQUIRE(fused.program().steps.size() == 1);
  CHECK(plain.program().steps.size() == 14);
  for (std::size_t n : {1u, 7u, 1000u, 20000u}) {
    CAPTURE(n);
    nax::tensor<float, N, H> x{N(n)}, z{N(n)};
    nax::tensor<float, H> bias;
    for (float* p : {x.data(), z.data()})
      for (std::size_t i = 0; i < n * 24; ++i) p[i] = uni(rng);
    for (std::size_t i = 0; i < 24; ++i) bias.data()[i] = uni(rng);
    nax::tensor<float, N, H> typed{N(n)};
    typed = chain(x, z, bias);
    const std::vector<nax::dyn_tensor> in = {nax::to_dyn(x), nax::to_dyn(z), nax::to_dyn(bias)};
    const std::vector<nax::dyn_tensor> got = fused.run(in), base = plain.run(in);
    CHECK(std::memcmp(got[0].data(), base[0].data(), typed.size() * sizeof(float)) == 0);
    // The typed evaluator rounds each op's result as the runtime does (simd::op_result): no
    // multiply and add of two ops contracted into one.
    CHECK(std::memcmp(got[0].data(), typed.data(), typed.size() * sizeof(float)) == 0);
    double worst = 0;
    for (std::size_t i = 0; i < typed.size(); ++i) {
      const double t = typed.data()[i], f = got[0].data<float>()[i];
      worst = std::max(worst, std::abs(f - t) / (1 + std::abs(t)));
    }
    CHECK(worst <= 4e-7);  // 2 ulp of a float near 1
  }
}
