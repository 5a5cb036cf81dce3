// Generic elementwise fusion end to end: random elementwise graphs (random ops, broadcasts by
// name, comparisons and where, fan-out into reductions and extra results, groups fused into the
// reductions that alone read them) compiled with and
// without fusion give the reference's results, and the same bits as each other; large bindings
// run the fused programs on the thread pool.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

const dim h = dim::named("h", 8);

// A random elementwise graph over x[batch, seq, h], y[batch, h], b[h], s[batch]: mostly
// elementwise ops (so that groups form), a few reductions (fan-out, broadcast operands) and
// explicit broadcasts to x's shape.
struct random_ew_graph {
  g::builder b;
  std::vector<g::value> params, outs;
  dtype type;

  random_ew_graph(std::mt19937& rng, dtype t) : type(t) {
    const dim batch("batch"), seq = dim::bounded("seq", 16);
    params.push_back(b.parameter("x", shape::make(t, {batch, seq, h})));
    params.push_back(b.parameter("y", shape::make(t, {batch, h})));
    params.push_back(b.parameter("b", shape::make(t, {h})));
    params.push_back(b.parameter("s", shape::make(t, {batch})));
    std::vector<g::value> pool = params;
    auto pick = [&] {
      // Recent values more often: chains form.
      const std::size_t n = pool.size();
      const std::size_t lo =
          n > 4 && std::uniform_int_distribution<int>(0, 2)(rng) != 0 ? n - 4 : 0;
      return pool[std::uniform_int_distribution<std::size_t>(lo, n - 1)(rng)];
    };
    auto one_in = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng) == 0; };
    const int steps = std::uniform_int_distribution<int>(4, 18)(rng);
    for (int i = 0; i < steps; ++i) {
      g::value a = pick();
      g::value made;
      try {
        switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
          case 0: made = one_in(2) ? g::tanh(a) : g::sigmoid(a); break;
          case 1: made = one_in(2) ? g::gelu(a) : g::silu(a); break;
          case 2: made = one_in(2) ? g::relu(a) - 0.25 : g::abs(a) * 0.5; break;
          case 3: made = g::exp(g::neg(g::abs(a))); break;
          case 4: made = g::sqrt(g::abs(a) + 1.0); break;
          case 5: {
            g::value c = pick();
            made = one_in(3) ? a - c : (one_in(2) ? a * c : a + c);
            break;
          }
          case 6: {
            g::value c = pick();
            made = one_in(2) ? g::max(a, c) : a / (g::abs(c) + 1.0);
            break;
          }
          case 7: {
            g::value c = pick();
            made = g::where(g::greater(a, c), a, c * 0.5);
            break;
          }
          case 8:  // a reduction: its operand fans out, its result is read broadcast
            if (!a.shape().index_of("h")) continue;
            made = one_in(2) ? g::sum(a, {"h"}) : g::reduce_max(a, {"h"});
            break;
          case 9:  // an explicit broadcast, which a group reads through its axis map
            made = one_in(2) ? 2.0 - a : b.broadcast(a, params[0].shape());
            break;
        }
      } catch (const nax::shape_error&) {
        continue;  // operands these ops do not allow (rank > what by-name broadcasting makes)
      }
      if (made.shape().rank() > 3) continue;
      pool.push_back(made);
    }
    outs.push_back(pool.back());
    if (pool.size() > params.size() + 3 && one_in(2)) outs.push_back(pool[pool.size() - 3]);
  }

  std::vector<dyn_tensor> inputs(std::mt19937& rng, std::size_t batch, std::size_t seq) const {
    return reference::random_inputs(params, {{"batch", batch}, {"seq", seq}}, rng);
  }
};

std::size_t count_kind(const g::program& p, g::op_kind k) {
  std::size_t n = 0;
  for (const g::program_step& s : p.steps) n += s.kind() == k;
  return n;
}

}  // namespace

TEST_CASE("random elementwise graphs: fused, unfused and the reference agree") {
  std::mt19937 rng(11);
  std::size_t fused_steps = 0, extra_results = 0, graphs_with_fusion = 0, fused_reductions = 0;
  constexpr int trials = 150;
  for (int trial = 0; trial < trials; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 4 == 0 ? dtype::f64 : dtype::f32;
    random_ew_graph rg(rng, t);
    auto fused = g::compile(rg.b, rg.outs);
    auto plain = g::compile(rg.b, rg.outs, {.fusion = false});
    const std::size_t f = count_kind(fused.program(), g::op_kind::fused_elementwise);
    fused_steps += f;
    fused_reductions += count_kind(fused.program(), g::op_kind::fused_reduce);
    graphs_with_fusion += f > 0;
    for (const g::program_step& s : fused.program().steps) extra_results += s.extra_results.size();
    CHECK(count_kind(plain.program(), g::op_kind::fused_elementwise) == 0);
    for (const auto& bs : {std::pair{1u, 3u}, {5u, 16u}, {3u, 1u}}) {
      const std::size_t batch = bs.first, seq = bs.second;
      CAPTURE(batch);
      CAPTURE(seq);
      CAPTURE(fused.to_dot());
      const std::vector<dyn_tensor> in = rg.inputs(rng, batch, seq);
      const std::vector<dyn_tensor> got = fused.run(in), base = plain.run(in);
      const std::vector<reference::dense> want = reference::evaluate(rg.b, in);
      REQUIRE(got.size() == rg.outs.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        REQUIRE(got[i].shape() == want[rg.outs[i].id()].shape);
        CHECK(reference::max_error(got[i], want[rg.outs[i].id()]) <=
              (t == dtype::f64 ? 1e-12 : 3e-6));
        // The same op bodies on the same values: the same bits.
        CHECK(std::memcmp(got[i].data(), base[i].data(), got[i].bytes()) == 0);
      }
    }
  }
  // The generator makes groups, fan-out and extra results often enough to test them.
  CHECK(graphs_with_fusion > trials / 2);
  CHECK(fused_steps > trials);
  CHECK(extra_results > 10);
  CHECK(fused_reductions > 10);
  MESSAGE(graphs_with_fusion, " graphs fused, ", fused_steps, " fused elementwise steps, ",
          extra_results, " extra results, ", fused_reductions, " fused reductions");
}

TEST_CASE("large bindings: fused programs on the thread pool give the unfused bits") {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 12; ++trial) {
    CAPTURE(trial);
    random_ew_graph rg(rng, dtype::f32);
    auto fused = g::compile(rg.b, rg.outs);
    auto plain = g::compile(rg.b, rg.outs, {.fusion = false});
    const std::vector<dyn_tensor> in = rg.inputs(rng, 3001, 13);  // ~312k elements of x
    const std::vector<dyn_tensor> got = fused.run(in), base = plain.run(in);
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(std::memcmp(got[i].data(), base[i].data(), got[i].bytes()) == 0);
    }
  }
}

TEST_CASE("a fused chain writes its extra results and reads broadcast operands") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", h}));
  auto bias = b.parameter("bias", shape::make(dtype::f32, {h}));
  auto scale = b.parameter("scale", shape::make(dtype::f32, {"batch"}));
  auto a = g::tanh(x + bias);    // read by the sum: an extra result
  auto m = g::greater(a, bias);  // bool, inside the group
  auto y = g::where(m, a * scale, -a) + 1.0;
  auto s = g::sum(a, {"h"});
  auto ex = g::compile(b, {y, s, m});
  const g::program& p = ex.program();
  REQUIRE(count_kind(p, g::op_kind::fused_elementwise) == 1);
  const g::program_step& f = p.steps[0];
  CHECK(f.extra_results.size() == 2);  // a (for the sum) and m (requested)
  std::mt19937 rng(3);
  for (std::size_t batch : {1u, 7u, 2000u}) {
    CAPTURE(batch);
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(shape(dtype::f32, {dim::named("batch", batch), h}), rng),
        reference::random_tensor(shape(dtype::f32, {h}), rng, -0.5, 0.5),
        reference::random_tensor(shape(dtype::f32, {dim::named("batch", batch)}), rng)};
    const std::vector<dyn_tensor> got = ex.run(in);
    const std::vector<reference::dense> want = reference::evaluate(b, in);
    CHECK(reference::max_error(got[0], want[y.id()]) <= 3e-6);
    CHECK(reference::max_error(got[1], want[s.id()]) <= 3e-6);
    CHECK(reference::max_error(got[2], want[m.id()]) == 0);
  }
}
