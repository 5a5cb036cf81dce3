// The hit path of nax::executable (split from executable.cpp, which covers the rest): each
// thread's last hit must never serve another binding, must see evictions, must keep the cache's
// LRU order and exact counts, and must hold under threads running different bindings; the
// arenas that threads' run slots keep stay within compile_options::max_kept_arenas.
#include <nax/exec/thread_pool.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"
#include "support/allocation_counter.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

shape concrete(std::size_t batch, std::size_t seq) {
  return shape::make(dtype::f32, {dim::named("batch", batch), dim::named("seq", seq)});
}

// out = x[batch, seq] * 2 + y[seq]: the result's shape and values tell the binding it ran with.
struct graph {
  g::builder b;
  g::value out;
  graph() {
    auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq"}));
    auto y = b.parameter("y", shape::make(dtype::f32, {"seq"}));
    out = x * 2.0 + y;
  }
  nax::executable compile(std::size_t max) const { return g::compile(b, {out}, {max}); }
};

// One run of `ex` at {batch, seq} checked against the reference; false on any difference.
bool run_and_check(nax::executable& ex, const graph& gr, std::size_t batch, std::size_t seq,
                   std::mt19937& rng) {
  const dyn_tensor in[] = {
      reference::random_tensor(concrete(batch, seq), rng),
      reference::random_tensor(shape::make(dtype::f32, {dim::named("seq", seq)}), rng)};
  const dyn_tensor got = ex.run(in)[0];
  const reference::dense want = reference::evaluate(gr.b, in)[gr.out.id()];
  return got.shape() == want.shape && reference::max_error(got, want) <= 1e-6;
}

// y = x + 1, and at batch 1 also a nested run of the same executable at batch 2 from inside
// the step (checked here), while the outer run's arena holds y.
struct nested_kernel final : nax::graph::external_kernel {
  nax::executable* ex = nullptr;
  std::atomic<int>* failures = nullptr;

  std::string label() const override { return "nested"; }
  struct step final : nax::kernels::step_kernel {
    std::uint32_t in, out;
    std::size_t batch;
    const nested_kernel* owner;
    step(std::uint32_t i, std::uint32_t o, std::size_t b, const nested_kernel* k)
        : in(i), out(o), batch(b), owner(k) {}
    void run(void* const* values, std::byte*) const override {
      const auto* x = static_cast<const float*>(values[in]);
      auto* y = static_cast<float*>(values[out]);
      for (std::size_t i = 0; i < batch; ++i) y[i] = x[i] + 1;
      if (batch != 1) return;
      dyn_tensor inner(shape::make(dtype::f32, {dim::named("batch", 2)}));
      inner.data<float>()[0] = 10;
      inner.data<float>()[1] = 20;
      const dyn_tensor got = owner->ex->run({inner})[0];
      if (got.data<float>()[0] != 22 || got.data<float>()[1] != 42) ++*owner->failures;
    }
  };
  std::unique_ptr<nax::kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                                  std::uint32_t result,
                                                  std::span<const shape> shapes) const override {
    return std::make_unique<step>(args[0], result, shapes[args[0]][0].extent(), this);
  }
};

// y = x + 1; the first `gated` runs of the step wait for each other at `all_in` (each on its own
// thread), so that that many runs hold an arena at once.
struct gate_kernel final : nax::graph::external_kernel {
  mutable std::atomic<int> gated{0};
  std::barrier<>* all_in = nullptr;

  std::string label() const override { return "gate"; }
  struct step final : nax::kernels::step_kernel {
    std::uint32_t in, out;
    std::size_t n;
    const gate_kernel* owner;
    step(std::uint32_t i, std::uint32_t o, std::size_t e, const gate_kernel* k)
        : in(i), out(o), n(e), owner(k) {}
    void run(void* const* values, std::byte*) const override {
      const auto* x = static_cast<const float*>(values[in]);
      auto* y = static_cast<float*>(values[out]);
      for (std::size_t i = 0; i < n; ++i) y[i] = x[i] + 1;
      if (owner->gated.fetch_sub(1, std::memory_order_relaxed) > 0)
        owner->all_in->arrive_and_wait();
    }
  };
  std::unique_ptr<nax::kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                                  std::uint32_t result,
                                                  std::span<const shape> shapes) const override {
    return std::make_unique<step>(args[0], result, shapes[args[0]][0].extent(), this);
  }
};

}  // namespace

TEST_CASE("arenas beyond max_kept_arenas are freed when runs end, those in run slots too") {
  constexpr std::size_t cap = 3, users = 12, batch = 256;
  auto kernel = std::make_shared<gate_kernel>();
  std::barrier all_in(static_cast<std::ptrdiff_t>(users));
  kernel->all_in = &all_in;
  kernel->gated = static_cast<int>(users);
  // out = gate(x * 2) * 3: x * 2 and the step's result are intermediates, in the arena.
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  const g::value args[] = {x * 2.0};
  auto y = b.external(kernel, args, shape::make(dtype::f32, {"batch"}));
  g::compile_options options;
  options.max_kept_arenas = cap;
  auto ex = g::compile(b, {y * 3.0}, options);
  ex.pre_specialize({nax::bindings{{"batch", batch}}});  // (one specialization, one pool)
  auto input = [](std::size_t who, std::size_t r) {
    dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", batch)}));
    for (std::size_t i = 0; i < batch; ++i)
      in.data<float>()[i] = static_cast<float>((who * 31 + r * 7 + i) % 101);
    return in;
  };
  // Exact in f32: small integers.
  auto right = [](const dyn_tensor& in, const dyn_tensor& out) {
    for (std::size_t i = 0; i < batch; ++i)
      if (out.data<float>()[i] != (in.data<float>()[i] * 2 + 1) * 3) return false;
    return true;
  };

  // The first run of each thread waits in its step for all the others': `users` arenas at once.
  // Then every thread runs free, all starting together, many times.
  std::atomic<int> failures{0};
  std::barrier start(static_cast<std::ptrdiff_t>(users));
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < users; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t r = 0; r < 60; ++r) {
        if (r == 1) start.arrive_and_wait();
        const dyn_tensor ins[] = {input(t, r)};
        dyn_tensor outs[] = {dyn_tensor(ins[0].shape())};
        ex.run(ins, outs);
        if (!right(ins[0], outs[0])) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);

  const auto spec = ex.cached(nax::bindings{{"batch", batch}});
  REQUIRE(spec);
  const nax::runtime::arena_pool& pool = *spec->pool;
  REQUIRE(spec->arena_bytes > 0);
  CHECK(pool.max_kept() == cap);
  CHECK(pool.peak() >= users);  // more than the cap existed at once...
  CHECK(pool.made() >= users);
  CHECK(pool.arenas() <= cap);  // ... and the threads' run slots, gone with them, kept no more
  CHECK(ex.stats().arena_bytes == pool.arenas() * spec->arena_bytes);
  CHECK(ex.stats().arena_bytes <= cap * spec->arena_bytes);

  // One thread after warm-up: its slot keeps one arena, and a run allocates nothing.
  const dyn_tensor ins[] = {input(1, 2)};
  dyn_tensor outs[] = {dyn_tensor(ins[0].shape())};
  ex.run(ins, outs);
  ex.run(ins, outs);
  const std::size_t made = pool.made();
  const long before = nax_test::allocations.load();
  for (int r = 0; r < 50; ++r) ex.run(ins, outs);
  if (NAX_TEST_COUNT_ALLOCATIONS) CHECK(nax_test::allocations.load() == before);
  CHECK(pool.made() == made);
  CHECK(right(ins[0], outs[0]));
  CHECK(pool.arenas() <= cap);
}

TEST_CASE("a run nested in a step of the same executable leaves the outer run's slot alone") {
  auto kernel = std::make_shared<nested_kernel>();
  std::atomic<int> failures{0};
  kernel->failures = &failures;
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  const g::value args[] = {x};
  auto y = b.external(kernel, args, shape::make(dtype::f32, {"batch"}));
  auto ex = g::compile(b, {y * 2.0}, {.max_specializations = 1});
  kernel->ex = &ex;
  for (const std::size_t batch : {1u, 1u, 2u, 1u, 2u, 2u, 1u}) {
    CAPTURE(batch);
    dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", batch)}));
    for (std::size_t i = 0; i < batch; ++i) in.data<float>()[i] = static_cast<float>(i + 1);
    const dyn_tensor got = ex.run({in})[0];
    for (std::size_t i = 0; i < batch; ++i)
      CHECK(got.data<float>()[i] == static_cast<float>(2 * (i + 2)));
  }
  CHECK(failures.load() == 0);
}

TEST_CASE(
    "runs from pool tasks and user threads at once, nested runs among them, steps on the pool") {
  const int saved = nax::num_threads();
  nax::set_num_threads(2);
  // big: tanh(x * 2 + 1) over x[batch, 4096], whose loop splits over the pool when it gets it.
  g::builder bb;
  auto bx = bb.parameter("x", shape::make(dtype::f32, {"batch", dim::named("c", 4096)}));
  auto big = g::compile(bb, {g::tanh(bx * 2.0 + 1.0)}, {.max_specializations = 2});
  // nested: at batch 1 its step runs the same executable at batch 2 (the first test case).
  auto kernel = std::make_shared<nested_kernel>();
  std::atomic<int> failures{0};
  kernel->failures = &failures;
  g::builder nb;
  auto nx = nb.parameter("x", shape::make(dtype::f32, {"batch"}));
  const g::value args[] = {nx};
  auto ny = nb.external(kernel, args, shape::make(dtype::f32, {"batch"}));
  auto nested = g::compile(nb, {ny * 2.0}, {.max_specializations = 1});
  kernel->ex = &nested;

  auto work = [&](std::size_t who) {
    for (std::size_t r = 0; r < 4; ++r) {
      const std::size_t batch = 2 + (who + r) % 4;
      dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", batch), dim::named("c", 4096)}));
      float* p = in.data<float>();
      for (std::size_t i = 0; i < in.size(); ++i)
        p[i] = static_cast<float>((i + who) % 97) / 50 - 1;
      const dyn_tensor got = big.run({in})[0];
      for (std::size_t i = 0; i < in.size(); ++i)
        if (std::abs(got.data<float>()[i] - std::tanh(p[i] * 2 + 1)) > 1e-5f) {
          ++failures;
          break;
        }
      dyn_tensor one(shape::make(dtype::f32, {dim::named("batch", 1)}));
      one.data<float>()[0] = static_cast<float>(who);
      if (nested.run({one})[0].data<float>()[0] != 2 * (static_cast<float>(who) + 1)) ++failures;
    }
  };
  std::vector<std::thread> users;
  for (std::size_t u = 0; u < 2; ++u) users.emplace_back([&, u] { work(10 + u); });
  // Two chunks: the caller's and worker 1's (or both inline, when a user thread has the pool).
  nax::parallel_for(0, 4, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) work(i);
  });
  for (auto& t : users) t.join();
  nax::set_num_threads(saved);
  CHECK(failures.load() == 0);
  CHECK(big.stats().live <= 2);
}

TEST_CASE("a thread's last hit never serves another binding") {
  const graph gr;
  auto ex = gr.compile(8);
  std::mt19937 rng(1);
  // {2, 3} and {3, 2}: the same extents in another order; then back and forth.
  const std::size_t seq[][2] = {{2, 3}, {3, 2}, {2, 3}, {2, 3}, {3, 2}, {3, 2}, {1, 6}, {2, 3}};
  for (const auto& bs : seq) {
    CAPTURE(bs[0]);
    CAPTURE(bs[1]);
    CHECK(run_and_check(ex, gr, bs[0], bs[1], rng));
  }
  const nax::specialization_stats s = ex.stats();
  CHECK(s.misses == 3);
  CHECK(s.hits == 5);
  // The same binding again and again: every run after the first is a hit, counted.
  for (int i = 0; i < 10; ++i) CHECK(run_and_check(ex, gr, 4, 4, rng));
  CHECK(ex.stats().misses == 4);
  CHECK(ex.stats().hits == 14);
}

TEST_CASE("an evicted binding is rebuilt, never served from a thread's last hit") {
  const graph gr;
  auto ex = gr.compile(1);
  std::mt19937 rng(2);
  CHECK(run_and_check(ex, gr, 2, 3, rng));  // this thread's last hit: {2, 3}
  std::thread other([&] {
    std::mt19937 r(3);
    CHECK(run_and_check(ex, gr, 5, 3, r));  // evicts {2, 3}
  });
  other.join();
  CHECK(ex.cached(nax::bindings{{"batch", 2}, {"seq", 3}}) == nullptr);
  CHECK(run_and_check(ex, gr, 2, 3, rng));  // a miss: rebuilt
  const nax::specialization_stats s = ex.stats();
  CHECK(s.misses == 3);
  CHECK(s.hits == 0);
  CHECK(s.evictions == 2);
  CHECK(s.live == 1);
}

TEST_CASE("hits on a thread's last hit count as uses for the LRU order") {
  const graph gr;
  auto ex = gr.compile(2);
  std::mt19937 rng(4);
  CHECK(run_and_check(ex, gr, 1, 2, rng));  // A, this thread's last hit
  std::thread other([&] {
    std::mt19937 r(5);
    CHECK(run_and_check(ex, gr, 2, 2, r));  // B
  });
  other.join();
  CHECK(run_and_check(ex, gr, 1, 2, rng));  // A again: only the last-hit path sees it
  CHECK(run_and_check(ex, gr, 3, 2, rng));  // C evicts the least recently used: B
  CHECK(ex.cached(nax::bindings{{"batch", 1}, {"seq", 2}}) != nullptr);
  CHECK(ex.cached(nax::bindings{{"batch", 2}, {"seq", 2}}) == nullptr);
  CHECK(ex.stats().hits == 1);
}

TEST_CASE("threads repeating different bindings get their own results and exact counts") {
  const graph gr;
  auto ex = gr.compile(4);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  constexpr int runs = 50;
  for (std::size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(10 + t));
      for (int i = 0; i < runs; ++i) {
        // Mostly the thread's own binding, now and then a neighbour's.
        const std::size_t batch = 1 + (i % 7 == 6 ? (t + 1) % 4 : t);
        if (!run_and_check(ex, gr, batch, 3, rng)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  const nax::specialization_stats s = ex.stats();
  CHECK(s.hits + s.misses == 4 * runs);
  CHECK(s.evictions == 0);
  CHECK(s.live == 4);
}

TEST_CASE("a static graph's repeated runs stay correct and check their inputs") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("r", 3), dim::named("c", 4)}));
  auto ex = g::compile(b, {g::tanh(x)});
  std::mt19937 rng(6);
  for (int i = 0; i < 3; ++i) {
    const dyn_tensor in[] = {reference::random_tensor(
        shape::make(dtype::f32, {dim::named("r", 3), dim::named("c", 4)}), rng)};
    const dyn_tensor got = ex.run(in)[0];
    for (std::size_t j = 0; j < got.size(); ++j)
      CHECK(got.data<float>()[j] == doctest::Approx(std::tanh(in[0].data<float>()[j])));
  }
  const dyn_tensor wrong[] = {dyn_tensor(shape::make(dtype::f32, {dim::named("r", 3), 5}))};
  CHECK_THROWS_WITH_AS(ex.run(wrong),
                       "input 'x': dimension 1 (axis 'c') mismatch: pattern has 4, got 5",
                       nax::shape_error);
}
