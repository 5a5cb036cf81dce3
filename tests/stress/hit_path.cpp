// Stress: 10^5 runs of a small graph on the hit path, moving between three cached bindings. A
// run into given outputs must allocate nothing, a run returning its results only its vector of
// results; every result must have the bits of the first run of its binding; the cache's counts
// must move by the hits alone and the resident size must not grow. NAX_STRESS_SECONDS, if set,
// makes it run that long (at least the 10^5 runs).
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "stress.hpp"
#include "support/allocation_counter.hpp"
#include "support/bits.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

constexpr std::size_t H = 8, K = 4;

shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

using nax_test::same_bits;

// One binding's inputs, outputs and the results of its first run.
struct case_of {
  std::size_t batch;
  std::vector<dyn_tensor> in, out, want;
};

// y[batch, k] = softmax over k of relu(x . w), s[batch] = sum over h of tanh(x) * x, by plain
// loops in double: whether `got` holds them.
bool matches(const case_of& c, const std::vector<dyn_tensor>& got) {
  const float *x = c.in[0].data<float>(), *w = c.in[1].data<float>();
  const float *y = got[0].data<float>(), *s = got[1].data<float>();
  for (std::size_t r = 0; r < c.batch; ++r) {
    double z[K], m = 0, total = 0, t = 0;
    for (std::size_t k = 0; k < K; ++k) {
      double acc = 0;
      for (std::size_t i = 0; i < H; ++i) acc += double(x[r * H + i]) * w[i * K + k];
      z[k] = acc > 0 ? acc : 0;
      m = std::max(m, z[k]);
    }
    for (double& v : z) total += (v = std::exp(v - m));
    for (std::size_t k = 0; k < K; ++k)
      if (std::abs(y[r * K + k] - z[k] / total) > 1e-5) return false;
    for (std::size_t i = 0; i < H; ++i) t += std::tanh(double(x[r * H + i])) * x[r * H + i];
    if (std::abs(s[r] - t) > 1e-4) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("10^5 runs on the hit path: no allocation, the same bits, nothing grows") {
  const double seconds = stress::seconds(0);  // 0: the 10^5 runs alone
  const dim h = dim::named("h", H), k = dim::named("k", K);
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto y = g::softmax(g::relu(g::dot_general(x, w, {{"h", "h"}})), "k");
  auto s = g::sum(g::tanh(x) * x, {"h"});
  auto ex = g::compile(b, {y, s}, {.max_specializations = 4});

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<case_of> cases;
  for (std::size_t batch : {3u, 5u, 7u}) {
    case_of c{batch, {}, {}, {}};
    c.in = {dyn_tensor(f32({dim::named("batch", batch), h})), dyn_tensor(f32({h, k}))};
    for (dyn_tensor& t : c.in)
      for (std::size_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
    c.out = {dyn_tensor(f32({dim::named("batch", batch), k})),
             dyn_tensor(f32({dim::named("batch", batch)}))};
    for (const dyn_tensor& t : ex.run(c.in)) c.want.push_back(t.clone());  // (the pool's back)
    REQUIRE(matches(c, c.want));
    ex.run(c.in, c.out);  // warm: this thread's arena for the binding
    cases.push_back(std::move(c));
  }

  // A run of case i into its outputs, first poisoned (a run that wrote nothing would be caught),
  // then compared with the first run's bits.
  std::size_t wrong = 0;
  auto run_into = [&](case_of& c) {
    c.out[0].data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    c.out[1].data<float>()[c.batch - 1] = std::numeric_limits<float>::quiet_NaN();
    ex.run(c.in, c.out);
    if (!same_bits(c.out[0], c.want[0]) || !same_bits(c.out[1], c.want[1])) ++wrong;
  };
  // The binding changes every 10 runs: the thread's last hit serves most, the cache the rest.
  auto which = [](std::size_t i) { return i / 10 % 3; };
  for (std::size_t i = 0; i < 100; ++i) run_into(cases[which(i)]);

  const nax::specialization_stats before = ex.stats();
  const std::size_t resident_before = stress::resident_bytes();
  const long allocations_before = nax_test::allocations.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::size_t runs = 0;
  for (; runs < 100000 || std::chrono::steady_clock::now() < deadline; ++runs)
    run_into(cases[which(runs)]);
  const long allocated = nax_test::allocations.load() - allocations_before;
  const std::size_t resident_after = stress::resident_bytes();
  const nax::specialization_stats after = ex.stats();

  const char* counted = NAX_TEST_COUNT_ALLOCATIONS ? "" : " (not counted under TSan)";
  MESSAGE(runs, " runs into given outputs: ", allocated, " allocations", counted, ", resident ",
          resident_before >> 10, " KiB before, ", resident_after >> 10, " KiB after");
  CHECK(wrong == 0);
  if (NAX_TEST_COUNT_ALLOCATIONS) CHECK(allocated == 0);
  CHECK(after.hits == before.hits + runs);
  CHECK(after.misses == before.misses);
  CHECK(after.total == before.total);
  CHECK(after.live == before.live);
  CHECK(after.evictions == 0);
  CHECK(after.arena_bytes == before.arena_bytes);
  // Nothing grows: a leak of a few bytes per run would show over 10^5 runs.
  CHECK(resident_after <= resident_before + (std::size_t{1} << 20));

  // run(inputs): new results per run, from the executable's pool of released ones; each run
  // allocates its std::vector of results and nothing else.
  const std::size_t resident_results = stress::resident_bytes();
  // (after reading /proc, which allocates)
  const long vectors_before = nax_test::allocations.load();
  const std::size_t result_runs = runs / 10;
  for (std::size_t i = 0; i < result_runs; ++i) {
    case_of& c = cases[which(i)];
    const std::vector<dyn_tensor> got = ex.run(c.in);
    if (!same_bits(got[0], c.want[0]) || !same_bits(got[1], c.want[1])) ++wrong;
  }
  const long vectors = nax_test::allocations.load() - vectors_before;
  MESSAGE(result_runs, " runs returning their results: ", vectors, " allocations", counted);
  CHECK(wrong == 0);
  if (NAX_TEST_COUNT_ALLOCATIONS) CHECK(vectors == static_cast<long>(result_runs));
  CHECK(ex.stats().misses == before.misses);
  CHECK(ex.stats().live == before.live);
  if (stress::resident_size_tells_leaks)  // (these runs allocate and free: stress.hpp)
    CHECK(stress::resident_bytes() <= resident_results + (std::size_t{1} << 20));
}
