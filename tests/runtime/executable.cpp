// The two-level JIT end to end: graphs compiled once, specialized per binding, run against a
// plain reference; the cache (LRU, stats, pre-specialization, concurrency); every input error;
// the memory plan of every specialization checked independently.
#include <nax/graph/ops.hpp>
#include <nax/graph/to_dot.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "memory_check.hpp"
#include "random_graph.hpp"
#include "reference.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

#include "support/allocation_counter.hpp"

namespace {

shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

dim h = dim::named("h", 6), k = dim::named("k", 5);

shape concrete(dtype t, std::initializer_list<std::pair<const char*, std::size_t>> dims) {
  std::vector<dim> d;
  for (auto [n, e] : dims) d.push_back(dim::named(n, e));
  return shape(t, std::span<const dim>(d));
}

// Checks every output of `ex` on `inputs` against the reference.
void check_against_reference(const g::builder& b, std::span<const g::value> outs,
                             nax::executable& ex, std::span<const dyn_tensor> inputs,
                             double tolerance) {
  const std::vector<dyn_tensor> got = ex.run(inputs);
  const std::vector<reference::dense> want = reference::evaluate(b, inputs);
  REQUIRE(got.size() == outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const reference::dense& w = want[outs[i].id()];
    CAPTURE(i);
    CAPTURE(nax::detail::concrete_string(got[i].shape()));
    REQUIRE(got[i].shape() == w.shape);
    CHECK(reference::max_error(got[i], w) <= tolerance);
  }
}

void check_memory(const nax::executable& ex, const nax::bindings& bd) {
  memory_check::check(ex, bd);
}

// Runs y = tanh(x . w) `runs` times from one thread (batch 1 + (first + i) % batches, h 6, k 5,
// random inputs from `seed`), counting the results that leave the reference in `failures`.
void run_checked(nax::executable& ex, const g::builder& b, const g::value& y, unsigned seed,
                 int runs, int batches, int first, std::atomic<int>& failures) {
  std::mt19937 rng(seed);
  for (int i = 0; i < runs; ++i) {
    const std::size_t batch = 1 + static_cast<std::size_t>((first + i) % batches);
    const dyn_tensor in[] = {
        reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 6}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"h", 6}, {"k", 5}}), rng)};
    const dyn_tensor got = ex.run(in)[0];
    const reference::dense want = reference::evaluate(b, in)[y.id()];
    if (!(got.shape() == want.shape) || reference::max_error(got, want) > 1e-5) ++failures;
  }
}

}  // namespace

TEST_CASE("an MLP block runs per binding and matches the reference") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w1 = b.parameter("w1", f32({h, k}));
  auto b1 = b.parameter("b1", f32({k}));
  auto w2 = b.parameter("w2", f32({k, h}));
  auto gamma = b.parameter("gamma", f32({h}));
  auto beta = b.parameter("beta", f32({h}));
  auto hid = g::gelu(g::dot_general(x, w1, {{"h", "h"}}) + b1);
  auto y = g::layer_norm(g::dot_general(hid, w2, {{"k", "k"}}) + x, gamma, beta, "h");
  const g::value outs[] = {y, hid};
  auto ex = g::compile(b, outs);
  std::mt19937 rng(1);
  for (std::size_t batch : {1u, 4u, 33u}) {
    CAPTURE(batch);
    const dyn_tensor in[] = {
        reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 6}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"h", 6}, {"k", 5}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"k", 5}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"k", 5}, {"h", 6}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"h", 6}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"h", 6}}), rng)};
    check_against_reference(b, outs, ex, in, 1e-5);
    check_memory(ex, nax::bindings{{"batch", batch}});
  }
  CHECK(ex.stats().misses == 3);
  CHECK(ex.stats().live == 3);
}

TEST_CASE("random graphs match the reference for many bindings") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 120; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 3 == 0 ? dtype::f64 : dtype::f32;
    random_graph::graph rg(rng, t);
    auto ex = g::compile(rg.b, rg.outs, {.max_specializations = 3});
    for (const auto& bs : {std::pair{1u, 3u}, {5u, 16u}, {2u, 1u}, {9u, 7u}, {5u, 16u}}) {
      const std::size_t batch = bs.first, seq = bs.second;  // not bindings: CAPTURE takes them
      CAPTURE(batch);
      CAPTURE(seq);
      CAPTURE(ex.to_dot());
      const std::vector<dyn_tensor> in = rg.inputs(rng, batch, seq);
      check_against_reference(rg.b, rg.outs, ex, in, t == dtype::f64 ? 1e-11 : 2e-5);
      check_memory(ex, nax::bindings{{"batch", batch}, {"seq", seq}});
    }
    const nax::specialization_stats s = ex.stats();
    CHECK(s.misses == 4);  // {5, 16} comes back once as a hit
    CHECK(s.hits == 1);
    CHECK(s.evictions == 1);
    CHECK(s.live == 3);
  }
}

TEST_CASE("the LRU cache evicts the least recently used binding and rebuilds it on demand") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto ex = g::compile(b, {g::tanh(x) * 2.0}, {.max_specializations = 2});
  std::mt19937 rng(3);
  auto run = [&](std::size_t batch) {
    const dyn_tensor in[] = {
        reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 6}}), rng)};
    const dyn_tensor out = ex.run(in)[0];
    CHECK(out.extent("batch") == batch);
    for (std::size_t i = 0; i < out.size(); ++i)
      CHECK(out.data<float>()[i] ==
            doctest::Approx(2 * std::tanh(in[0].data<float>()[i])).epsilon(1e-6));
  };
  run(1);
  run(2);
  run(1);  // hit: 2 is now the least recently used
  run(3);  // evicts 2
  CHECK(ex.cached(nax::bindings{{"batch", 2}}) == nullptr);
  CHECK(ex.cached(nax::bindings{{"batch", 1}}) != nullptr);
  run(2);  // rebuilt, evicts 1
  const auto s = ex.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 4);
  CHECK(s.total == 4);
  CHECK(s.evictions == 2);
  CHECK(s.live == 2);
  CHECK(s.last_specialization_time.count() > 0);
}

TEST_CASE("a graph without dynamic axes counts every run as a hit of its one specialization") {
  g::builder b;
  auto x = b.parameter("x", f32({dim::named("n", 2), h}));
  auto ex = g::compile(b, {g::exp(x) + 1.0});
  nax::specialization_stats s = ex.stats();
  CHECK(s.total == 1);  // specialized when compiled
  CHECK(s.live == 1);
  CHECK(s.hits == 0);
  CHECK(s.misses == 0);
  std::mt19937 rng(5);
  const dyn_tensor in = reference::random_tensor(concrete(dtype::f32, {{"n", 2}, {"h", 6}}), rng);
  for (int i = 0; i < 7; ++i) (void)ex.run({in});
  ex.pre_specialize({nax::bindings{}});
  s = ex.stats();
  CHECK(s.hits == 8);
  CHECK(s.misses == 0);
  CHECK(s.total == 1);
}

namespace {
// An output_maker that fails, as an allocation of a huge result would (std::bad_alloc).
dyn_tensor fail_to_make(void*, std::size_t, const nax::shape&) { throw std::bad_alloc(); }
}  // namespace

TEST_CASE("a failed run leaves the cache as it was") {
  std::mt19937 rng(6);
  auto input = [&](std::size_t batch) {
    return reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 6}}), rng);
  };
  SUBCASE("the exact policy: the new specialization is dropped, a cached one stays") {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", h}));
    auto ex = g::compile(b, {g::exp(x) * 2.0});
    (void)ex.run({input(2)});
    std::vector<dyn_tensor> out(1);
    CHECK_THROWS_AS(ex.run(std::vector<dyn_tensor>{input(3)}, out, fail_to_make, nullptr),
                    std::bad_alloc);
    CHECK(ex.cached(nax::bindings{{"batch", 3}}) == nullptr);
    CHECK(ex.cached(nax::bindings{{"batch", 2}}) != nullptr);
    CHECK(ex.stats().live == 1);
    CHECK_THROWS_AS(ex.run(std::vector<dyn_tensor>{input(2)}, out, fail_to_make, nullptr),
                    std::bad_alloc);
    CHECK(ex.cached(nax::bindings{{"batch", 2}}) != nullptr);  // it was there before
    // The next run of the failed binding specializes again and gives the right result.
    const dyn_tensor in = input(3);
    const std::vector<dyn_tensor> got = ex.run({in});
    REQUIRE(got[0].shape() == in.shape());
    for (std::size_t i = 0; i < 18; ++i) {
      const float want = std::exp(in.data<float>()[i]) * 2.0f;
      CHECK(std::abs(got[0].data<float>()[i] - want) <= 1e-6f * want);
    }
    CHECK(ex.stats().live == 2);
  }
  SUBCASE("the bound policy: a new bucket, and new extents in a cached bucket, are dropped") {
    g::builder b;
    auto x = b.parameter("x", f32({dim::bounded("batch", 16), h}));
    g::compile_options o;
    o.bounded = {g::size_policy::bound};
    auto ex = g::compile(b, {g::exp(x) * 2.0}, o);
    std::vector<dyn_tensor> out(1);
    CHECK_THROWS_AS(ex.run(std::vector<dyn_tensor>{input(3)}, out, fail_to_make, nullptr),
                    std::bad_alloc);
    nax::specialization_stats s = ex.stats();
    CHECK(s.live == 0);
    CHECK(s.live_extents == 0);
    (void)ex.run({input(2)});
    s = ex.stats();
    CHECK(s.live == 1);
    CHECK(s.live_extents == 1);
    CHECK_THROWS_AS(ex.run(std::vector<dyn_tensor>{input(5)}, out, fail_to_make, nullptr),
                    std::bad_alloc);
    s = ex.stats();
    CHECK(s.live == 1);          // the bucket was there before: it stays
    CHECK(s.live_extents == 1);  // batch 5's steps are dropped
    (void)ex.run({input(5)});
    CHECK(ex.stats().live_extents == 2);
  }
}

TEST_CASE("pre-specialization makes the first run a hit") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto ex = g::compile(b, {g::exp(x)});
  ex.pre_specialize({nax::bindings{{"batch", 1}}, nax::bindings{{"batch", 32}}});
  CHECK(ex.stats().misses == 2);
  CHECK(ex.stats().hits == 0);
  std::mt19937 rng(4);
  (void)ex.run({reference::random_tensor(concrete(dtype::f32, {{"batch", 32}, {"h", 6}}), rng)});
  CHECK(ex.stats().hits == 1);
  CHECK(ex.stats().misses == 2);
  CHECK_THROWS_WITH_AS(ex.pre_specialize({nax::bindings{{"seq", 3}}}),
                       "nax::executable::pre_specialize: {seq: 3} does not bind axis 'batch'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.pre_specialize({nax::bindings{{"batch", 3}, {"seq", 3}}}),
                       "nax::executable::pre_specialize: {batch: 3, seq: 3} binds axis 'seq', "
                       "which no input of the graph has",
                       nax::shape_error);
}

TEST_CASE("a warm run into given outputs allocates nothing" *
          doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)) {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto y = g::softmax(g::relu(g::dot_general(x, w, {{"h", "h"}})), "k");
  auto ex = g::compile(b, {g::sum(y, {"k"}), y});
  std::mt19937 rng(5);
  const dyn_tensor in[] = {
      reference::random_tensor(concrete(dtype::f32, {{"batch", 7}, {"h", 6}}), rng),
      reference::random_tensor(concrete(dtype::f32, {{"h", 6}, {"k", 5}}), rng)};
  dyn_tensor out[] = {dyn_tensor(concrete(dtype::f32, {{"batch", 7}})),
                      dyn_tensor(concrete(dtype::f32, {{"batch", 7}, {"k", 5}}))};
  ex.run(in, out);
  const long before = nax_test::allocations.load();
  ex.run(in, out);
  CHECK(nax_test::allocations.load() == before);
  for (std::size_t i = 0; i < 7; ++i) CHECK(out[0].data<float>()[i] == doctest::Approx(1.0));
}

TEST_CASE("concurrent runs with different bindings give correct results") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto y = g::tanh(g::dot_general(x, w, {{"h", "h"}}));
  const g::value outs[] = {y};
  auto ex = g::compile(b, outs, {.max_specializations = 3});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(
        [&, t] { run_checked(ex, b, y, static_cast<unsigned>(100 + t), 60, 5, t, failures); });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  const auto s = ex.stats();
  CHECK(s.hits + s.misses == 240);
  CHECK(s.live <= 3);
}

TEST_CASE("pre_specialize, cached and to_dot from one thread while others run and evict") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto y = g::tanh(g::dot_general(x, w, {{"h", "h"}}));
  auto ex = g::compile(b, {y}, {.max_specializations = 3});
  constexpr int runners = 3, runs = 40, ahead = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < runners; ++t)
    threads.emplace_back(
        [&, t] { run_checked(ex, b, y, static_cast<unsigned>(200 + t), runs, 6, t, failures); });
  // Meanwhile: specializations made ahead, inspected and drawn, for the bindings being run.
  std::thread planner([&] {
    for (int i = 0; i < ahead; ++i) {
      const nax::bindings bd{{"batch", 1 + static_cast<std::size_t>(i % 6)}};
      ex.pre_specialize({bd});
      if (auto s = ex.cached(bd))
        if (s->shapes[ex.program().outputs[0]][0].extent() != bd.at("batch")) ++failures;
      if (i % 8 == 0 && ex.to_dot(bd).find("digraph") == std::string::npos) ++failures;
    }
  });
  for (auto& th : threads) th.join();
  planner.join();
  CHECK(failures.load() == 0);
  const auto s = ex.stats();
  // Runs and pre-specializations (to_dot's included, when it missed) are each a hit or a miss.
  CHECK(s.hits + s.misses >= runners * runs + ahead);
  CHECK(s.live <= 3);
  CHECK(s.evictions >= 3);  // six bindings through three places
  CHECK(s.total == s.live + s.evictions);
}

TEST_CASE("input errors name the input, the axis and both extents") {
  g::builder b;
  auto a = b.parameter("a", f32({"batch", dim::bounded("seq", 8), h}));
  auto c = b.parameter("c", f32({"batch", h}));
  auto ex = g::compile(b, {g::sum(a, {"seq"}) + c});
  auto t = [](std::initializer_list<std::pair<const char*, std::size_t>> dims) {
    return dyn_tensor(concrete(dtype::f32, dims));
  };
  const dyn_tensor a_ok = t({{"batch", 2}, {"seq", 3}, {"h", 6}});
  CHECK_THROWS_WITH_AS(ex.run({a_ok}),
                       "nax::executable::run: 1 input given, the graph has 2 (a, c)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({a_ok, t({{"batch", 3}, {"h", 6}})}),
                       "axis 'batch': input 'c' has 3 but input 'a' has 2", nax::shape_error);
  CHECK_THROWS_WITH_AS(
      ex.run({t({{"batch", 2}, {"seq", 9}, {"h", 6}}), t({{"batch", 2}, {"h", 6}})}),
      "input 'a': axis 'seq': extent 9 exceeds its bound 8", nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({a_ok, t({{"batch", 2}, {"h", 7}})}),
                       "input 'c': dimension 1 (axis 'h') mismatch: pattern has 6, got 7",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({a_ok, t({{"batch", 2}})}),
                       "input 'c': rank mismatch: pattern f32[batch, 6] has rank 2, got f32[2] "
                       "with rank 1",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({a_ok, dyn_tensor(concrete(dtype::f64, {{"batch", 2}, {"h", 6}}))}),
                       "input 'c': dtype mismatch: pattern f32[batch, 6] is f32, got f64[2, 6]",
                       nax::shape_error);
  dyn_tensor wrong_out[] = {t({{"batch", 3}, {"h", 6}})};
  const dyn_tensor ins[] = {a_ok, t({{"batch", 2}, {"h", 6}})};
  CHECK_THROWS_WITH_AS(ex.run(ins, wrong_out),
                       "nax::executable::run: output 0 is f32[batch=3, h=6], the result is "
                       "f32[batch=2, h=6]",
                       nax::shape_error);
}

TEST_CASE(
    "outputs sharing memory with an input or each other, and sizes past size_t, are refused") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto ex = g::compile(b, {x * 2.0, g::exp(x)});
  const dyn_tensor in(concrete(dtype::f32, {{"batch", 3}, {"h", 6}}));
  const dyn_tensor ins[] = {in};
  dyn_tensor same[] = {in, dyn_tensor(concrete(dtype::f32, {{"batch", 3}, {"h", 6}}))};
  CHECK_THROWS_WITH_AS(ex.run(ins, same),
                       "nax::executable::run: output 0 shares memory with input 'x'; a run reads "
                       "its inputs while it writes its outputs",
                       nax::shape_error);
  // A view of the second half of the input's rows overlaps it too.
  const shape half = concrete(dtype::f32, {{"batch", 3}, {"h", 6}});
  dyn_tensor part[] = {dyn_tensor(half),
                       dyn_tensor::wrap(half, const_cast<float*>(in.data<float>()) + 6)};
  CHECK_THROWS_WITH_AS(ex.run(ins, part),
                       "nax::executable::run: output 1 shares memory with input 'x'; a run reads "
                       "its inputs while it writes its outputs",
                       nax::shape_error);
  const dyn_tensor y(half);
  dyn_tensor twice[] = {y, y};
  CHECK_THROWS_WITH_AS(ex.run(ins, twice), "nax::executable::run: outputs 0 and 1 share memory",
                       nax::shape_error);
  // Neighbours that do not overlap are fine, and so are empty tensors.
  std::vector<float> both(2 * 18);
  dyn_tensor apart[] = {dyn_tensor::wrap(half, both.data()),
                        dyn_tensor::wrap(half, both.data() + 18)};
  ex.run(ins, apart);
  CHECK(both[18] == doctest::Approx(1.0));  // exp(0)

  g::builder big;
  auto z = big.parameter("z", f32({"batch", h}));
  const std::size_t huge = std::size_t{1} << 31;
  auto wide = g::compile(big, {g::broadcast(z, f32({dim(huge), dim(huge), "batch", h}))});
  CHECK_THROWS_WITH_AS(wide.run({dyn_tensor(concrete(dtype::f32, {{"batch", 2}, {"h", 6}}))}),
                       "nax::executable: at {batch: 2}, the result of broadcast (f32[2147483648, "
                       "2147483648, batch=2, h=6]) has more bytes than fit in size_t",
                       nax::shape_error);
  CHECK(wide.stats().total == 0);
}

TEST_CASE("a binding that breaks what shape inference unified is reported at specialization") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto y = b.parameter("y", f32({dim::named("batch", 4), h}));  // batch unified with 4
  auto ex = g::compile(b, {x + y});
  CHECK_THROWS_WITH_AS(
      ex.run({dyn_tensor(concrete(dtype::f32, {{"batch", 5}, {"h", 6}})),
              dyn_tensor(concrete(dtype::f32, {{"batch", 4}, {"h", 6}}))}),
      "nax::graph::add: axis 'batch' is 5 in operand 0 but 4 in the result (f32[batch=5, h=6] vs "
      "f32[batch=4, h=6])",
      nax::shape_error);
  CHECK(ex.stats().live == 0);  // nothing half-built is cached
}

TEST_CASE("a graph without dynamic axes is specialized once, at compile time") {
  g::builder b;
  auto x = b.parameter("x", f32({h}));
  auto ex = g::compile(b, {g::neg(x), x, g::neg(x)});  // an input and a repeat as results
  CHECK(ex.stats().total == 1);
  CHECK(ex.program().dynamic_axes.empty());
  dyn_tensor in(concrete(dtype::f32, {{"h", 6}}));
  for (std::size_t i = 0; i < 6; ++i) in.data<float>()[i] = static_cast<float>(i);
  const auto out = ex.run({in});
  REQUIRE(out.size() == 3);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(out[0].data<float>()[i] == -static_cast<float>(i));
    CHECK(out[1].data<float>()[i] == static_cast<float>(i));
    CHECK(out[2].data<float>()[i] == -static_cast<float>(i));
  }
  CHECK_THROWS_WITH_AS(ex.run({dyn_tensor(concrete(dtype::f32, {{"h", 5}}))}),
                       "input 'x': dimension 0 (axis 'h') mismatch: pattern has 6, got 5",
                       nax::shape_error);
}

TEST_CASE("compile drops dead nodes, keeps lifetimes and draws the plan") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto unused = b.parameter("unused", f32({k}));
  auto dead = g::exp(x);
  auto t = g::tanh(x);
  auto y = t * t + 1.0;
  (void)dead;
  (void)unused;
  const g::value outs[] = {y};
  const g::program p = g::compile_program(b, outs, {.fusion = false});
  CHECK(p.num_inputs() == 2);  // every parameter is an input
  CHECK(p.steps.size() == 3);  // tanh, mul, add: exp is dead
  const g::program_value& tv = p.values[p.steps[0].result];
  CHECK(tv.role == g::value_role::intermediate);
  CHECK(tv.first_step == 0);
  CHECK(tv.last_step == 1);
  CHECK(p.values[p.steps[2].result].role == g::value_role::output);
  const std::string dot = g::to_dot(p);
  CHECK(dot.find("tanh") != std::string::npos);
  CHECK(dot.find("exp") == std::string::npos);
  CHECK(dot.find("label=\"f32[batch, 6]\"") != std::string::npos);
  CHECK(dot.find("peripheries=2") != std::string::npos);
  CHECK(dot.find("style=dashed, label=\"1\"") != std::string::npos);  // the constant 1.0
  CHECK_THROWS_WITH_AS(g::compile_program(b, {}), "nax::graph::compile: no outputs requested",
                       nax::shape_error);
  g::builder u;
  auto q = u.parameter("q", f32({nax::dynamic, 3}));
  CHECK_THROWS_WITH_AS(g::compile(u, {g::exp(q)}),
                       "nax::graph::compile: parameter 'q' (f32[?, 3]): dimension 0 is dynamic "
                       "without a name; name it (e.g. \"batch\") so that runs can bind its extent",
                       nax::shape_error);
}

TEST_CASE("a slice past the end of a dynamic axis is reported when the binding is specialized") {
  g::builder b;
  auto x = b.parameter("x", f32({dim::bounded("seq", 16), h}));
  auto ex = g::compile(b, {g::slice(x, "seq", 2, 8, 3)});
  std::mt19937 rng(9);
  const dyn_tensor ok[] = {
      reference::random_tensor(concrete(dtype::f32, {{"seq", 8}, {"h", 6}}), rng)};
  const dyn_tensor got = ex.run(ok)[0];
  REQUIRE(got.extent("seq") == 2);
  for (std::size_t j = 0; j < 6; ++j) {
    CHECK(got.data<float>()[j] == ok[0].data<float>()[2 * 6 + j]);
    CHECK(got.data<float>()[6 + j] == ok[0].data<float>()[5 * 6 + j]);
  }
  CHECK_THROWS_WITH_AS(ex.run({dyn_tensor(concrete(dtype::f32, {{"seq", 5}, {"h", 6}}))}),
                       "nax::graph::slice: stop 8 is past the end of axis 'seq', whose extent is 5 "
                       "(f32[seq=5, h=6])",
                       nax::shape_error);
}

TEST_CASE("a reshape between intermediates shares its operand's buffer and moves nothing") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("model", 6)}));
  auto e = g::exp(x);                                                     // an intermediate
  auto s = g::split(e, "model", dim::named("h", 2), dim::named("d", 3));  // its reshape
  auto r = g::rename(s, "d", "k");                                        // and another
  auto m = g::merge(g::tanh(r), "h", "k", "model");                       // a third
  auto y = m + g::exp(e * 2.0);  // e is read after the reshapes too
  auto ex = g::compile(b, {y}, {.fusion = false});
  const nax::bindings bd{{"batch", 4}};
  nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", 4), dim::named("model", 6)}));
  for (std::size_t i = 0; i < in.size(); ++i) in.data<float>()[i] = 0.1f * float(i) - 1.0f;
  const std::vector<nax::dyn_tensor> out = ex.run({in});
  check_memory(ex, bd);
  const g::program& p = ex.program();
  std::size_t shared = 0;
  for (std::size_t v = 0; v < p.values.size(); ++v)
    if (memory_check::buffer_owner(p, v) != v) ++shared;
  CHECK(shared == 3);  // the split, the rename and the merge
  const float* o = out[0].data<float>();
  for (std::size_t i = 0; i < 24; ++i) {
    const float xv = in.data<float>()[i];
    CHECK(o[i] == doctest::Approx(std::tanh(std::exp(xv)) + std::exp(std::exp(xv) * 2.0f)));
  }
}
