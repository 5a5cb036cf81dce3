// Whole models under nax::jit, pipelined (runtime/pipeline.hpp) against unpipelined and one step
// at a time: the MLP block and the transformer encoder block of examples/, bit for bit, at many
// bindings (tile boundaries at odd extents) and thread counts.
#include "../../examples/transformer_block.hpp"

#include <nax/runtime/specialization.hpp>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/bits.hpp"
#include "support/threads.hpp"

namespace {

namespace g = nax::graph;

using thread_count = nax_test::threads_guard;  // (n): n threads, then the count before

using nax_test::same_bits;

const g::compile_options tiled{.pipeline = g::pipelining::always, .pipeline_tile = 3};
const g::compile_options one_at_a_time{.parallel_steps = g::step_parallelism::off,
                                       .pipeline = g::pipelining::off};

// The MLP block of bench/mlp_block.hpp, small: dense + gelu, dense + bias + residual, layer_norm.
using batch = nax::axis<"batch">;
using d = nax::axis<"d", 24>;
using f = nax::axis<"f", 40>;
const auto mlp = [](auto x, auto w1, auto b1, auto w2, auto b2, auto gamma, auto beta) {
  auto h = nax::gelu(nax::dot<d>(x, w1) + b1);
  return nax::layer_norm<d>(nax::dot<f>(h, w2) + b2 + x, gamma, beta, 1e-5f);
};
auto jitted_mlp(const g::compile_options& o) {
  return nax::jit(o, mlp, nax::input<float, batch, d>("x"), nax::input<float, d, f>("w1"),
                  nax::input<float, f>("b1"), nax::input<float, f, d>("w2"),
                  nax::input<float, d>("b2"), nax::input<float, d>("gamma"),
                  nax::input<float, d>("beta"));
}

// Whether fn's specialization for b and the current thread count runs a pipeline.
template <class Fn>
bool pipelined(const Fn& fn, const nax::bindings& b) {
  const auto s = fn.executable().cached(b);
  REQUIRE(s);
  return !s->pipelines.empty();
}

}  // namespace

TEST_CASE("the MLP block: pipelined == unpipelined == one step at a time, bit for bit") {
  auto piped = jitted_mlp(tiled), flat = jitted_mlp(one_at_a_time);
  REQUIRE(piped.executable().program().pipelines.size() == 1);
  const nax::tensor<float, d, f> w1 = nax::normal<float, d, f>(nax::rng{1, 0}, 0.0f, 0.2f);
  const nax::tensor<float, f> b1 = nax::uniform<float, f>(nax::rng{1, 1}, -0.1f, 0.1f);
  const nax::tensor<float, f, d> w2 = nax::normal<float, f, d>(nax::rng{1, 2}, 0.0f, 0.2f);
  const nax::tensor<float, d> b2 = nax::uniform<float, d>(nax::rng{1, 3}, -0.1f, 0.1f);
  const nax::tensor<float, d> gamma = nax::uniform<float, d>(nax::rng{1, 4}, 0.8f, 1.2f);
  const nax::tensor<float, d> beta = nax::uniform<float, d>(nax::rng{1, 5}, -0.1f, 0.1f);
  std::size_t tiled_runs = 0;
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 13u, 64u}) {
    CAPTURE(n);
    const auto x = nax::normal<float, batch, d>(nax::rng{2, n}, 0.0f, 1.0f, batch(n));
    nax::tensor<float, batch, d> want{batch(n)};
    {
      const thread_count one(1);
      want = flat(x, w1, b1, w2, b2, gamma, beta);
    }
    for (int threads : {1, 2, 3}) {
      CAPTURE(threads);
      const thread_count t(threads);
      CHECK(same_bits(piped(x, w1, b1, w2, b2, gamma, beta), want));
      CHECK(same_bits(flat(x, w1, b1, w2, b2, gamma, beta), want));
      tiled_runs += pipelined(piped, {{"batch", n}});
    }
  }
  // Two tiles or more (a product's last tile takes an odd row): batch 5, 7, 13 and 64.
  CHECK(tiled_runs == 4 * 3);
}

TEST_CASE("the transformer block: pipelined == unpipelined == one step at a time, bit for bit") {
  using namespace encoder;
  const weights w(7);
  auto piped = jitted(tiled), flat = jitted(one_at_a_time), automatic = jitted();
  CHECK(!piped.executable().program().pipelines.empty());
  std::size_t tiled_runs = 0;
  for (const auto& binding : {std::pair<std::size_t, std::size_t>{1, 1}, {5, 5}, {7, 3}, {2, 16}}) {
    // (Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
    const std::size_t nb = binding.first, n = binding.second;
    CAPTURE(nb);
    CAPTURE(n);
    const auto x =
        nax::normal<float, batch, seq, model>(nax::rng{3, n}, 0.0f, 1.0f, batch(nb), seq(n));
    nax::tensor<float, batch, seq, model> want{batch(nb), seq(n)};
    {
      const thread_count one(1);
      want = w.apply(flat, x);
    }
    for (int threads : {1, 2, 3}) {
      CAPTURE(threads);
      const thread_count t(threads);
      CHECK(same_bits(w.apply(piped, x), want));
      CHECK(same_bits(w.apply(automatic, x), want));
      tiled_runs += pipelined(piped, {{"batch", nb}, {"seq", n}});
    }
  }
  CHECK(tiled_runs == 2 * 3);  // the chains along batch: batch 5 and 7 make two tiles
}
