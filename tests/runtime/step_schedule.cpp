// Level 2's schedule (runtime/step_schedule.hpp) end to end: independent steps run side by side
// where the cost model says so (or always, when asked), with the bits of the one-step-at-a-time
// run on one thread; a specialization is made for the thread count of its runs; concurrent runs.
#include <nax/exec/thread_pool.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

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

// x[batch, d] times three weights, then the three projections summed: q, k and v of attention.
struct projections {
  g::builder b;
  std::vector<g::value> params, outs;
  explicit projections(std::size_t d) {
    const dim feat = dim::named("d", d), out = dim::named("e", d);
    params.push_back(b.parameter("x", shape::make(dtype::f32, {dim("batch"), feat})));
    for (const char* w : {"wq", "wk", "wv"})
      params.push_back(b.parameter(w, shape::make(dtype::f32, {feat, out})));
    std::vector<g::value> p;
    for (std::size_t k = 1; k < 4; ++k)
      p.push_back(g::dot_general(params[0], params[k], {{"d", "d"}}));
    outs.push_back(g::tanh(p[0]) + p[1] * p[2]);
  }
};

}  // namespace

TEST_CASE("independent projections run side by side, with the bits of the sequential run") {
  projections m(256);
  auto automatic = g::compile(m.b, m.outs);
  auto always = g::compile(m.b, m.outs, {.parallel_steps = g::step_parallelism::always});
  auto off = g::compile(m.b, m.outs, {.parallel_steps = g::step_parallelism::off});
  std::mt19937 rng(3);
  for (std::size_t batch : {1u, 8u, 13u}) {
    CAPTURE(batch);
    const nax::bindings bd{{"batch", batch}};
    const std::vector<dyn_tensor> in = reference::random_inputs(m.params, bd, rng);
    std::vector<dyn_tensor> want;
    {
      const thread_count one(1);
      want = off.run(in);
      // One thread: nothing to run side by side, whatever the option.
      (void)automatic.run(in);
      CHECK(automatic.cached(bd)->schedule.concurrent_groups() == 0);
    }
    const std::vector<reference::dense> ref = reference::evaluate(m.b, in);
    CHECK(reference::max_error(want[0], ref[m.outs[0].id()]) <= 1e-4);
    const thread_count two(2);
    for (nax::executable* ex : {&automatic, &always, &off}) {
      const std::vector<dyn_tensor> got = ex->run(in);
      CHECK(same_bits(got[0], want[0]));
      memory_check::check(*ex, bd);
    }
    // Each product is too small for two threads (2 * 8 * 256 * 256 flops at batch 8): two run
    // side by side, the third after them.
    const auto s = automatic.cached(bd);
    REQUIRE(s);
    CHECK(s->threads == 2);
    CHECK(s->schedule.concurrent_groups() == 1);
    CHECK(always.cached(bd)->schedule.concurrent_groups() == 1);
    CHECK(off.cached(bd)->schedule.concurrent_groups() == 0);
    CHECK(off.cached(bd)->schedule.to_string() == "0 | 1 | 2 | 3");
  }
}

TEST_CASE("a specialization is for the thread count of the runs it serves") {
  projections m(64);
  std::mt19937 rng(5);
  SUBCASE("dynamic batch") {
    auto ex = g::compile(m.b, m.outs);
    const nax::bindings bd{{"batch", 40}};
    const std::vector<dyn_tensor> in = reference::random_inputs(m.params, bd, rng);
    std::vector<dyn_tensor> one_thread;
    {
      const thread_count one(1);
      one_thread = ex.run(in);
      CHECK(ex.cached(bd)->threads == 1);
    }
    const thread_count two(2);
    const std::vector<dyn_tensor> two_threads = ex.run(in);
    CHECK(ex.cached(bd)->threads == 2);
    CHECK(same_bits(one_thread[0], two_threads[0]));
    CHECK(ex.stats().total == 2);
    (void)ex.run(in);
    CHECK(ex.stats().total == 2);  // a hit
  }
  SUBCASE("static shapes: the one made at compile time, and one per other thread count") {
    g::builder b;
    auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("r", 96), dim::named("d", 64)}));
    auto w = b.parameter("w", shape::make(dtype::f32, {dim::named("d", 64), dim::named("e", 80)}));
    const g::value y = g::relu(g::dot_general(x, w, {{"d", "d"}}));
    std::vector<dyn_tensor> in = {reference::random_tensor(x.shape().resolve({}), rng),
                                  reference::random_tensor(w.shape().resolve({}), rng)};
    const thread_count one(1);
    auto ex = g::compile(b, {y});
    const std::vector<dyn_tensor> a = ex.run(in);
    CHECK(ex.cached({})->threads == 1);
    nax::set_num_threads(2);
    const std::vector<dyn_tensor> c = ex.run(in);
    CHECK(ex.cached({})->threads == 2);
    CHECK(same_bits(a[0], c[0]));
    nax::set_num_threads(1);
    const std::vector<dyn_tensor> d = ex.run(in);  // back to the first: its arena, its plan
    CHECK(same_bits(a[0], d[0]));
    CHECK(ex.stats().total == 2);
  }
}

TEST_CASE("random graphs: every independent step side by side gives the sequential bits") {
  std::mt19937 rng(17);
  std::size_t grouped = 0;  // specializations with steps side by side
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 4 == 0 ? dtype::f64 : dtype::f32;
    random_graph::graph rg(rng, t);
    auto seq = g::compile(rg.b, rg.outs, {.parallel_steps = g::step_parallelism::off});
    auto par = g::compile(rg.b, rg.outs, {.parallel_steps = g::step_parallelism::always});
    for (const auto& [batch, s] : {std::pair{1u, 3u}, {7u, 16u}}) {
      const std::vector<dyn_tensor> in = rg.inputs(rng, batch, s);
      std::vector<dyn_tensor> want;
      {
        const thread_count one(1);
        want = seq.run(in);
      }
      for (int threads : {2, 3}) {
        const thread_count n(threads);
        const std::vector<dyn_tensor> got = par.run(in);
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < got.size(); ++k) CHECK(same_bits(got[k], want[k]));
        memory_check::check(par, nax::bindings{{"batch", batch}, {"seq", s}});
        grouped += par.cached({{"batch", batch}, {"seq", s}})->schedule.concurrent_groups() > 0;
      }
    }
  }
  CHECK(grouped >= 40);
}

TEST_CASE("runs from several threads at once share the pool and keep their results") {
  projections m(128);
  auto ex = g::compile(m.b, m.outs, {.parallel_steps = g::step_parallelism::always});
  std::mt19937 rng(9);
  std::vector<std::vector<dyn_tensor>> in, want;
  for (std::size_t batch : {1u, 5u, 16u, 33u}) {
    in.push_back(reference::random_inputs(m.params, {{"batch", batch}}, rng));
    const thread_count one(1);
    want.push_back(ex.run(in.back()));
  }
  const thread_count two(2);
  std::vector<int> wrong(in.size(), 0);
  std::vector<std::thread> users;
  for (std::size_t u = 0; u < in.size(); ++u)
    users.emplace_back([&, u] {
      for (int r = 0; r < 50; ++r) {
        const std::vector<dyn_tensor> got = ex.run(in[(u + r) % in.size()]);
        if (!same_bits(got[0], want[(u + r) % in.size()][0])) ++wrong[u];
      }
    });
  for (auto& t : users) t.join();
  for (int w : wrong) CHECK(w == 0);
}
