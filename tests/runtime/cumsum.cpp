// cumsum by the graph (graph/infer/cumsum.hpp, runtime/steps/cumsum.hpp): its shape, its errors,
// runs along every axis in ONNX CumSum's four forms against the reference (f32, f64, i32, i64),
// the typed nax::cumsum's bits, and a chain that the pipeline scheduler may tile.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/typed/cumsum.hpp>
#include <nax/typed/random.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"
#include "support/bits.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

dyn_tensor integers(const shape& s, std::mt19937& rng) {
  dyn_tensor t(s);
  std::uniform_int_distribution<int> u(-50, 50);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (s.dtype() == dtype::i32)
      static_cast<std::int32_t*>(t.data())[i] = u(rng);
    else
      static_cast<std::int64_t*>(t.data())[i] = u(rng);
  }
  return t;
}

}  // namespace

TEST_CASE("cumsum's shape is its operand's; bools, u8 and a missing axis are errors") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("seq", 5)}));
  const g::value y = g::cumsum(x, "seq"), z = g::cumsum(x, 0, {.reverse = true});
  CHECK(y.shape() == x.shape());
  CHECK(z.shape() == x.shape());
  auto m = b.parameter("m", shape::make(dtype::boolean, {"batch"}));
  CHECK_THROWS_WITH_AS(g::cumsum(m, "batch"),
                       "nax::graph::cumsum: needs f32, f64, i32 or i64 elements, not bool[batch]",
                       nax::shape_error);
  auto u = b.parameter("u", shape::make(dtype::u8, {"batch"}));
  CHECK_THROWS_WITH_AS(g::cumsum(u, "batch"), doctest::Contains("not u8[batch]"), nax::shape_error);
  CHECK_THROWS_WITH_AS(g::cumsum(x, "hidden"), doctest::Contains("no axis 'hidden'"),
                       nax::shape_error);
}

TEST_CASE("cumsum runs as the reference does, along every axis, in each form and type") {
  std::mt19937 rng(11);
  for (dtype t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64})
    for (std::size_t axis = 0; axis < 3; ++axis)
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          CAPTURE(t);
          CAPTURE(axis);
          CAPTURE(exclusive);
          CAPTURE(reverse);
          g::builder b;
          auto x = b.parameter("x", shape::make(t, {"batch", "seq", dim::named("model", 3)}));
          auto y = g::cumsum(x, axis, {exclusive, reverse});
          auto ex = g::compile(b, {y});
          const shape s = x.shape().resolve({{"batch", 2}, {"seq", 7}});
          const dyn_tensor in = t == dtype::f32 || t == dtype::f64
                                    ? reference::random_tensor(s, rng)
                                    : integers(s, rng);
          const std::vector<dyn_tensor> got = ex.run({in});
          const reference::dense want = reference::evaluate(b, std::vector<dyn_tensor>{in})[y.id()];
          CHECK(got[0].shape() == want.shape);
          // In order along the axis, a float sum rounds at each add; the reference's, in double,
          // at its end.
          CHECK(reference::max_error(got[0], want) <= (t == dtype::f32 ? 1e-5 : 1e-12));
        }
}

TEST_CASE("the graph's cumsum gives the typed nax::cumsum's bits") {
  using batch = nax::axis<"batch">;
  using seq = nax::axis<"seq">;
  const auto x = nax::normal<float, batch, seq>(3, 0.0, 1.0, batch(4), seq(33));
  const auto want = nax::cumsum<seq>(x, {.reverse = true});
  g::builder b;
  auto p = b.parameter("x", shape::make(dtype::f32, {"batch", "seq"}));
  auto ex = g::compile(b, {g::cumsum(p, "seq", {.reverse = true})});
  dyn_tensor in(p.shape().resolve({{"batch", 4}, {"seq", 33}}));
  std::memcpy(in.data(), x.data(), x.size() * sizeof(float));
  const dyn_tensor got = ex.run({in})[0];
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE("a chain with a cumsum along a later axis runs tile by tile as it runs whole") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("model", 64)}));
  auto y = g::tanh(g::cumsum(g::exp(x) * 0.5, "model", {.exclusive = true}) - x);
  std::mt19937 rng(5);
  const dyn_tensor in = reference::random_tensor(x.shape().resolve({{"batch", 512}}), rng);
  auto tiled = g::compile(b, {y}, {.pipeline = g::pipelining::always});
  auto whole = g::compile(b, {y}, {.pipeline = g::pipelining::off});
  bool cumsum_tiled = false;  // (a cumsum along the tile axis would not be: its record says so)
  for (const g::pipeline_chain& chain : tiled.program().pipelines)
    for (std::uint32_t k : chain.steps)
      cumsum_tiled = cumsum_tiled || tiled.program().steps[k].kind() == g::op_kind::cumsum;
  CHECK(cumsum_tiled);
  CHECK(nax_test::same_bits(tiled.run({in})[0], whole.run({in})[0]));
  const reference::dense want = reference::evaluate(b, std::vector<dyn_tensor>{in})[y.id()];
  CHECK(reference::max_error(whole.run({in})[0], want) <= 1e-5);
}
