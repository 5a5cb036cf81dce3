// Pipelined chains (graph/pipeline_chains.hpp, runtime/pipeline.hpp) end to end: level 1 finds
// the MLP block's chain and stops where a step mixes positions along the tile axis; a pipelined
// run gives the bits of the unpipelined one at every tile boundary (1, tile - 1, tile + 1, ...)
// and thread count, for the MLP block and random graphs; rings shrink the arena; the trace has
// one event per stage per tile; runs from several threads at once.
#include <nax/exec/cache_info.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/pipeline_chains.hpp>
#include <nax/graph/to_dot.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/trace.hpp>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "json_check.hpp"
#include "memory_check.hpp"
#include "random_graph.hpp"
#include "reference.hpp"
#include "support/bits.hpp"
#include "support/threads.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

using thread_count = nax_test::threads_guard;  // (n): n threads, then the count before

using nax_test::same_bits;

// The MLP block of bench/pipeline.cpp, small: x[batch, d] -> dense + gelu -> dense + bias + x
// -> layer_norm over d; `reduced` adds a sum over batch at the end (a step that ends the chain).
struct mlp {
  g::builder b;
  std::vector<g::value> params, outs;
  mlp(std::size_t d, std::size_t f, bool reduced = false) {
    const dim dd = dim::named("d", d), ff = dim::named("f", f);
    params.push_back(b.parameter("x", shape::make(dtype::f32, {dim("batch"), dd})));
    params.push_back(b.parameter("w1", shape::make(dtype::f32, {dd, ff})));
    params.push_back(b.parameter("b1", shape::make(dtype::f32, {ff})));
    params.push_back(b.parameter("w2", shape::make(dtype::f32, {ff, dd})));
    params.push_back(b.parameter("b2", shape::make(dtype::f32, {dd})));
    params.push_back(b.parameter("gamma", shape::make(dtype::f32, {dd})));
    const g::value hid = g::gelu(g::dot_general(params[0], params[1], {{"d", "d"}}) + params[2]);
    const g::value y = g::dot_general(hid, params[3], {{"f", "f"}}) + params[4] + params[0];
    g::value out = g::layer_norm(y, params[5], params[5], "d");
    if (reduced) out = g::sum(g::tanh(out), {0}) * 2.0;
    outs.push_back(out);
  }
};

g::compile_options tiled(std::size_t tile) {
  return {.pipeline = g::pipelining::always, .pipeline_tile = tile};
}
const g::compile_options whole{.parallel_steps = g::step_parallelism::off,
                               .pipeline = g::pipelining::off};

}  // namespace

TEST_CASE("level 1: the MLP block is one chain along batch; a sum over batch is not in it") {
  mlp m(8, 12, true);
  auto ex = g::compile(m.b, m.outs, tiled(4));
  const g::program& p = ex.program();
  REQUIRE(p.pipelines.size() == 1);
  const g::pipeline_chain& c = p.pipelines[0];
  CHECK(c.axis == "batch");
  CHECK(c.steps.size() >= 3);  // dense, dense (+ bias + x), layer_norm
  for (std::uint32_t k : c.steps) CHECK(p.steps[k].kind() != g::op_kind::reduce);
  bool reduction_after = false;  // the sum over batch follows the chain, outside it
  for (std::size_t k = c.steps.back() + 1; k < p.steps.size(); ++k)
    reduction_after = reduction_after || !g::tileable(p, p.steps[k], c.axis);
  CHECK(reduction_after);

  const std::string dot = ex.to_dot({{"batch", 10}});
  CHECK(dot.find("pipeline 0: tiles along batch, tile 4 of 10") != std::string::npos);
  CHECK(ex.to_dot().find("pipeline 0: tiles along batch\"") != std::string::npos);
  CHECK(ex.to_dot({{"batch", 3}}).find("whole at {batch: 3}") != std::string::npos);

  auto off = g::compile(m.b, m.outs, whole);
  CHECK(off.program().pipelines.empty());
}

TEST_CASE("the pipelined MLP block gives the unpipelined bits at every tile boundary") {
  mlp m(24, 40);
  auto ref = g::compile(m.b, m.outs, whole);
  std::mt19937 rng(5);
  for (std::size_t tile : {2u, 5u}) {
    auto ex = g::compile(m.b, m.outs, tiled(tile));
    for (std::size_t batch :
         {std::size_t{1}, tile - 1, tile, tile + 1, 2 * tile + 1, std::size_t{23}}) {
      if (batch == 0) continue;
      CAPTURE(tile);
      CAPTURE(batch);
      const std::vector<dyn_tensor> in =
          reference::random_inputs(m.params, {{"batch", batch}}, rng);
      std::vector<dyn_tensor> want;
      {
        const thread_count one(1);
        want = ref.run(in);
      }
      for (int threads : {1, 2, 3}) {
        CAPTURE(threads);
        const thread_count n(threads);
        const std::vector<dyn_tensor> got = ex.run(in);
        CHECK(same_bits(got[0], want[0]));
        const auto s = ex.cached({{"batch", batch}});
        REQUIRE(s);
        memory_check::check(*s, ex.program());
        // Tiles of one row never reach a product: the last tile takes the odd row.
        std::size_t tiles = (batch + tile - 1) / tile;
        if (tiles >= 2 && batch - (tiles - 1) * tile == 1) --tiles;
        if (tiles < 2) {
          CHECK(s->pipelines.empty());
          continue;
        }
        REQUIRE(s->pipelines.size() == 1);
        const nax::runtime::pipeline& pl = s->pipelines[0];
        CHECK(pl.tile == tile);
        CHECK(pl.tiles == tiles);
        CHECK(pl.last >= 2);
        CHECK(pl.lanes == std::min<std::size_t>(threads, tiles));
        CHECK(pl.ring_bytes <= pl.whole_bytes);
      }
    }
  }
}

TEST_CASE("rings: the arena of a pipelined block is a fraction of the whole one's") {
  mlp m(16, 256);
  auto ex = g::compile(m.b, m.outs, tiled(8));
  auto ref = g::compile(m.b, m.outs, whole);
  const thread_count two(2);
  const nax::bindings b{{"batch", 256}};
  ex.pre_specialize({b});
  ref.pre_specialize({b});
  const auto s = ex.cached(b), r = ref.cached(b);
  REQUIRE(s->pipelines.size() == 1);
  CHECK(s->pipelines[0].tiles == 32);
  CHECK(s->pipelines[0].slots == 2);
  // The hidden layer (256 x 256 floats) becomes 2 slots of 8 rows; the state is a few bytes.
  CHECK(s->arena_bytes * 8 <= r->arena_bytes);
}

TEST_CASE("automatic: chains tiled only where their intermediates exceed L2") {
  mlp m(64, 512);
  auto ex = g::compile(m.b, m.outs);
  const thread_count two(2);
  const std::size_t l2 = nax::machine_caches().l2;
  const std::size_t rows = 16 * l2 / (512 * 4);  // the hidden layer is 16 x L2
  ex.pre_specialize({{{"batch", 8}}, {{"batch", rows}}});
  CHECK(ex.cached({{"batch", 8}})->pipelines.empty());
  const auto s = ex.cached({{"batch", rows}});
  REQUIRE(s->pipelines.size() == 1);
  CHECK(s->pipelines[0].tile >= 512);  // a product's tiles pay for packing its weights again
  CHECK(s->pipelines[0].tiles >= 2 * s->pipelines[0].lanes);
}

TEST_CASE("random graphs: pipelined runs give the unpipelined bits") {
  std::mt19937 rng(23);
  std::size_t pipelined = 0;  // specializations with a pipeline
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 4 == 0 ? dtype::f64 : dtype::f32;
    random_graph::graph rg(rng, t);
    auto ref = g::compile(rg.b, rg.outs, whole);
    auto ex = g::compile(rg.b, rg.outs, tiled(trial % 2 ? 2 : 3));
    for (const auto& [batch, s] : {std::pair{5u, 3u}, {7u, 16u}}) {
      const std::vector<dyn_tensor> in = rg.inputs(rng, batch, s);
      std::vector<dyn_tensor> want;
      {
        const thread_count one(1);
        want = ref.run(in);
      }
      for (int threads : {1, 2}) {
        const thread_count n(threads);
        const std::vector<dyn_tensor> got = ex.run(in);
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < got.size(); ++k) CHECK(same_bits(got[k], want[k]));
        memory_check::check(ex, nax::bindings{{"batch", batch}, {"seq", s}});
        pipelined += !ex.cached({{"batch", batch}, {"seq", s}})->pipelines.empty();
      }
    }
  }
  CHECK(pipelined >= 20);
}

TEST_CASE("tiles of long row reductions, plain and fused, give the whole's bits") {
  // Rows of 70000 elements: a reduction cuts rows of that much work into parts, and a tile of 3
  // rows must cut them as the whole's 20 rows do (kernels/reduce.hpp).
  g::builder b;
  const dim w = dim::named("w", 70000);
  const g::value x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), w}));
  const g::value v = b.parameter("v", shape::make(dtype::f32, {w}));
  // One node per statement: the graph's order (and so its chains) must not depend on the order
  // in which the compiler evaluates the operands of an expression.
  const g::value h = g::gelu(x);  // read twice: a value of its own
  const g::value h_sum = g::sum(h, {1});
  const g::value h_mean = g::mean(h, {1});
  const g::value plain = h_sum + h_mean;
  // A fused reduction whose rows only a broadcast brings: its tile kernel must take them from
  // the tile's result.
  const g::value wide = g::broadcast(v, shape::make(dtype::f32, {dim("batch"), w}));
  const g::value scaled = wide * 2.0;
  const g::value wide_sum = g::sum(g::tanh(scaled), {1});
  const g::value x_mean = g::mean(x, {1});
  const g::value fused = wide_sum + x_mean;
  const std::vector<g::value> outs{plain * 2.0 + fused, g::exp(fused)};
  auto ex = g::compile(b, outs, tiled(3));
  auto ref = g::compile(b, outs, whole);
  // One chain of every step: each is tiled along batch (the fused reduction and the mean of x
  // read no value of the chain, and join it all the same).
  const g::program& p = ex.program();
  REQUIRE(p.pipelines.size() == 1);
  CHECK(p.pipelines[0].steps.size() == p.steps.size());
  std::size_t plain_reductions = 0, fused_reductions = 0;
  for (std::uint32_t k : p.pipelines[0].steps) {
    plain_reductions += p.steps[k].kind() == g::op_kind::reduce;
    fused_reductions += p.steps[k].kind() == g::op_kind::fused_reduce;
  }
  CHECK(plain_reductions == 3);
  CHECK(fused_reductions == 1);
  std::mt19937 rng(4);
  const std::vector<g::value> params{x, v};
  const std::vector<dyn_tensor> in = reference::random_inputs(params, {{"batch", 20}}, rng);
  std::vector<dyn_tensor> want;
  {
    const thread_count one(1);
    want = ref.run(in);
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const thread_count n(threads);
    const std::vector<dyn_tensor> got = ex.run(in);
    REQUIRE(ex.cached({{"batch", 20}})->pipelines.size() == 1);
    CHECK(same_bits(got[0], want[0]));
    CHECK(same_bits(got[1], want[1]));
  }
}

TEST_CASE("an unnamed axis that lands on the tile axis keeps its step out of a chain") {
  // pos's first axis is unnamed: by position it lands on x's batch and the sum adopts the name,
  // but a tile of the sum would read all of pos. Likewise a batch pair with an unnamed side.
  g::builder b;
  const dim batch = dim::named("batch", 12), d = dim::named("d", 16);
  const g::value x = b.parameter("x", shape::make(dtype::f32, {batch, 16}));
  const g::value pos = b.parameter("pos", shape::make(dtype::f32, {12, 16}));
  const g::value q = b.parameter("q", shape::make(dtype::f32, {batch, dim::named("s", 3), d}));
  const g::value w = b.parameter("w", shape::make(dtype::f32, {12, d, dim::named("e", 5)}));
  const g::value sum = x + pos;
  const g::value y = g::gelu(sum);
  const g::value qw = g::dot_general(q, w, {{"d", "d"}}, {{0, 0}});
  const g::value z = g::tanh(qw);
  const std::vector<g::value> outs{y, z}, params{x, pos, q, w};
  auto ex = g::compile(b, outs, tiled(3));  // (specialized here: the graph is static)
  auto ref = g::compile(b, outs, whole);
  const g::program& p = ex.program();
  for (const g::pipeline_chain& c : p.pipelines)
    for (std::uint32_t k : c.steps) {
      CHECK(p.steps[k].kind() != g::op_kind::elementwise);  // (gelu is fused into the sum)
      CHECK(p.steps[k].kind() != g::op_kind::fused_elementwise);
      CHECK(p.steps[k].kind() != g::op_kind::dot_general);
      CHECK(p.steps[k].kind() != g::op_kind::fused_dense);
    }
  std::mt19937 rng(8);
  const std::vector<dyn_tensor> in = reference::random_inputs(params, {}, rng);
  const std::vector<dyn_tensor> got = ex.run(in), want = ref.run(in);
  CHECK(same_bits(got[0], want[0]));
  CHECK(same_bits(got[1], want[1]));
}

TEST_CASE(
    "tiles of products on every GEMM path, and of a stage with scratch, give the whole's "
    "bits") {
  // Small products in tiles against packed ones whole; K blocks (k > kc); an operand permuted
  // into scratch first (its stage runs one tile at a time).
  struct product {
    std::size_t rows, k, n, tile;
  };
  for (const product& pr : {product{2000, 64, 64, 64}, product{600, 1000, 200, 128}}) {
    CAPTURE(pr.k);
    g::builder b;
    const dim kd = dim::named("k", pr.k), nd = dim::named("n", pr.n);
    const g::value x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), kd}));
    const g::value w = b.parameter("w", shape::make(dtype::f32, {kd, nd}));
    const g::value h = g::dot_general(x, w, {{"k", "k"}});
    const std::vector<g::value> outs{g::tanh(h) * 0.5}, params{x, w};
    auto ex = g::compile(b, outs, tiled(pr.tile));
    auto ref = g::compile(b, outs, whole);
    std::mt19937 rng(3);
    const std::vector<dyn_tensor> in = reference::random_inputs(params, {{"batch", pr.rows}}, rng);
    std::vector<dyn_tensor> want;
    {
      const thread_count one(1);
      want = ref.run(in);
    }
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      const thread_count t(threads);
      CHECK(same_bits(ex.run(in)[0], want[0]));
      REQUIRE(ex.cached({{"batch", pr.rows}})->pipelines.size() == 1);
    }
  }
  // x[batch, h2, s] contracted over (s, h2) in that order: its two axes do not flatten to one
  // stride, so each tile of x is permuted into scratch before the product.
  g::builder b;
  const dim h2 = dim::named("h2", 2), sd = dim::named("s", 3), e = dim::named("e", 7);
  const g::value x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), h2, sd}));
  const g::value w = b.parameter("w", shape::make(dtype::f32, {sd, h2, e}));
  const g::value h = g::dot_general(x, w, {{"s", "s"}, {"h2", "h2"}});
  const g::value act = g::gelu(h);
  const std::vector<g::value> outs{g::tanh(act)}, params{x, w};
  auto ex = g::compile(b, outs, tiled(4));
  auto ref = g::compile(b, outs, whole);
  std::mt19937 rng(6);
  const std::vector<dyn_tensor> in = reference::random_inputs(params, {{"batch", 21}}, rng);
  const std::vector<dyn_tensor> want = ref.run(in);
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    const thread_count t(threads);
    CHECK(same_bits(ex.run(in)[0], want[0]));
    const auto s = ex.cached({{"batch", 21}});
    REQUIRE(s->pipelines.size() == 1);
    CHECK(s->pipelines[0].stages[0].exclusive);
    memory_check::check(*s, ex.program());
  }
}

TEST_CASE("the trace has one event per stage per tile, and its JSON names the tiles") {
  mlp m(8, 16);
  auto ex = g::compile(m.b, m.outs, tiled(3));
  std::mt19937 rng(2);
  const std::vector<dyn_tensor> in = reference::random_inputs(m.params, {{"batch", 10}}, rng);
  const thread_count two(2);
  (void)ex.run(in);  // specialized before the trace
  nax::trace tr;
  (void)ex.run(in);
  tr.stop();
  const auto s = ex.cached({{"batch", 10}});
  REQUIRE(s->pipelines.size() == 1);
  const nax::runtime::pipeline& pl = s->pipelines[0];
  CHECK(pl.tiles == 3);  // 3 + 3 + 4
  std::vector<int> seen(pl.stages.size() * pl.tiles, 0);
  for (const nax::trace_event& e : tr.events()) {
    if (e.tile < 0) continue;
    for (std::size_t j = 0; j < pl.stages.size(); ++j)
      if (pl.stages[j].step == e.step) ++seen[j * pl.tiles + static_cast<std::size_t>(e.tile)];
    CHECK(e.name.find(" tile " + std::to_string(e.tile)) != std::string::npos);
  }
  for (int k : seen) CHECK(k == 1);
  const std::string json = tr.to_chrome_json();
  json_check::json_checker check{json};
  CHECK(check.document());
  CHECK(json_check::count(json, "\"tile\":") == pl.stages.size() * pl.tiles);
  CHECK(json_check::count(json, "\"tile\":2}") == pl.stages.size());
}

TEST_CASE("runs of a pipelined executable from several threads at once keep their results") {
  mlp m(16, 24);
  auto ex = g::compile(m.b, m.outs, tiled(4));
  std::mt19937 rng(9);
  std::vector<std::vector<dyn_tensor>> in, want;
  for (std::size_t batch : {1u, 9u, 16u, 33u}) {
    in.push_back(reference::random_inputs(m.params, {{"batch", batch}}, rng));
    const thread_count one(1);
    want.push_back(ex.run(in.back()));
  }
  const thread_count two(2);
  std::vector<int> wrong(in.size(), 0);
  std::vector<std::thread> users;
  for (std::size_t u = 0; u < in.size(); ++u)
    users.emplace_back([&, u] {
      for (int r = 0; r < 30; ++r) {
        const std::vector<dyn_tensor> got = ex.run(in[(u + r) % in.size()]);
        if (!same_bits(got[0], want[(u + r) % in.size()][0])) ++wrong[u];
      }
    });
  for (auto& t : users) t.join();
  for (int w : wrong) CHECK(w == 0);
}
