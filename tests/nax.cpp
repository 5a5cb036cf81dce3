// The umbrella header alone gives the whole public surface. This TU uses all of the typed
// surface at once; its compile time is the figure the project tracks (docs/building.md).
#include <nax/nax.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <sstream>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(16)>;
using hidden = nax::axis<"hidden", 8>;
using out = nax::axis<"out", 8>;

TEST_CASE("nax.hpp gives the foundation's surface") {
  auto pattern = nax::shape_of<float, batch, hidden>();
  auto concrete = nax::shape::make(nax::dtype::f32, {32, 8});
  nax::bindings b = nax::extract_bindings(pattern, concrete);
  CHECK(b.to_string() == "{batch: 32}");
  CHECK(nax::unify_axis_name("batch", "") == "batch");
  CHECK(nax::unify_shapes(pattern, nax::shape::make(nax::dtype::f32, {nax::dynamic, 8})) ==
        pattern);
  CHECK(nax::extents<batch, hidden>(batch(2)).size() == 16);
}

TEST_CASE("nax.hpp gives the whole typed surface") {
  nax::set_num_threads(2);
  nax::tensor<float, batch, seq, hidden> x(batch(2), seq(3));
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 0.01f * float(i) - 0.2f;
  nax::tensor<float, hidden> g, bias;
  g.fill(1);
  bias.fill(0.5f);
  nax::tensor<float, batch, seq, hidden> y = nax::tanh(x * 2.0f + bias);
  y += nax::sigmoid(x) * nax::gelu(x) - nax::silu(x) / (nax::abs(x) + 1) + nax::relu(x) -
       nax::gelu_tanh(x);
  y = nax::where(x > 0, nax::exp(x), nax::leaky_relu(x, 0.1)) + nax::min(x, 0.5f) +
      nax::max(x, -0.5f);
  y -= nax::sqrt(nax::abs(x)) + nax::rsqrt(x * x + 1) + nax::log(x * x + 1) +
       nax::pow(nax::abs(x), 1.5f);
  auto s = nax::sum<hidden>(y) + nax::mean<hidden>(y) - nax::max<hidden>(y) + nax::min<hidden>(y);
  auto sm = nax::softmax<hidden>(y - nax::max<hidden>(y));
  auto ls = nax::log_softmax<hidden>(y);
  auto ln = nax::layer_norm<hidden>(y, g, bias, 1e-5f);
  auto p = nax::permute<hidden, batch, seq>(ln);
  auto r = nax::rename<hidden, out>(sm);
  auto sl = nax::slice<seq>(ls, 1, 3);
  auto c = nax::concat<seq>(sl, ls);
  nax::tensor<bool, batch, seq, hidden> m = (x < 0) == (y > 0);
  nax::tensor<std::int32_t, batch, seq, hidden> k = nax::cast<std::int32_t>(x * 100.0f);
  auto e = nax::eval(s * 2.0f);
  std::ostringstream os;
  os << e << p << r << c << m << k;
  CHECK(os.str().find("tensor<f32>[batch=2, seq=3]") == 0);
  CHECK(c.extent<seq>() == 5);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      float total = 0;
      for (std::size_t h = 0; h < 8; ++h) total += sm(i, j, h);
      CHECK(total == doctest::Approx(1.0f));
    }
}

// Linking nax::runtime, as every test does (tests/header_only/ compiles the runtime itself).
TEST_CASE("nax.hpp gives the runtime graph and nax::jit") {
  nax::graph::builder b;
  auto x = b.parameter("x", nax::shape_of<float, batch, hidden>());
  auto ex = nax::graph::compile(b, {b.softmax(x * 2.0, "hidden")});
  nax::tensor<float, batch, hidden> t(batch(3));
  t.fill(0.25f);
  const nax::dyn_tensor in[] = {nax::to_dyn(t)};
  const nax::dyn_tensor got = ex.run(in)[0];
  CHECK(got.extent("batch") == 3);
  CHECK(got.data<float>()[5] == doctest::Approx(0.125f));
  CHECK(ex.stats().misses == 1);

  auto f = nax::jit([](auto v, auto w) { return nax::tanh(nax::dot<hidden>(v, w) + 1.0f); },
                    nax::input<float, batch, hidden>("v"), nax::input<float, hidden, out>("w"));
  nax::tensor<float, hidden, out> w;
  w.fill(0.5f);
  const nax::tensor<float, batch, out> y = f(t, w);
  CHECK(y(2, 7) == doctest::Approx(std::tanh(8 * 0.25f * 0.5f + 1.0f)));
}
