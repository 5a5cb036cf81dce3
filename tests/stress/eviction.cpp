// Stress: 8 threads run one executable with random bindings drawn from 1 000 values while it
// keeps at most 4 specializations, so nearly every run evicts one and builds another. Every
// result is checked against plain loops; at the end the cache's counts must add up, the
// specializations evicted must be gone (none kept alive by a leak), and the resident size must
// not have grown with the runs. NAX_STRESS_SECONDS sets how long it runs (default 2 s).
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "stress.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

constexpr std::size_t D = 16, E = 32, F = 8;
constexpr std::size_t threads = 8, capacity = 4, values = 1000;

shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

// y[batch, f] = tanh(x[batch, d] . w1[d, e] + b[e]) . w2[e, f]; s[batch] = sum over f of y * y.
// The hidden layer is an intermediate of the arena (batch x 32 floats): a specialization leaked
// at every eviction would keep its arenas, some 64 KiB on average.
struct model {
  g::builder b;
  g::value y, s;
  model() {
    const dim d = dim::named("d", D), e = dim::named("e", E), f = dim::named("f", F);
    auto x = b.parameter("x", f32({"batch", d}));
    auto w1 = b.parameter("w1", f32({d, e}));
    auto bias = b.parameter("b", f32({e}));
    auto w2 = b.parameter("w2", f32({e, f}));
    auto h = g::tanh(g::dot_general(x, w1, {{"d", "d"}}) + bias);
    y = g::dot_general(h, w2, {{"e", "e"}});
    s = g::sum(y * y, {"f"});
  }
};

dyn_tensor random_tensor(const shape& s, std::mt19937& rng) {
  dyn_tensor t(s);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t.data<float>();
  for (std::size_t i = 0; i < t.size(); ++i) p[i] = u(rng);
  return t;
}

// Whether y and s are the model's value on x (plain loops in double).
bool matches(const dyn_tensor& x, const dyn_tensor& w1, const dyn_tensor& bias,
             const dyn_tensor& w2, const dyn_tensor& y, const dyn_tensor& s) {
  const std::size_t batch = x.extent(0);
  if (y.rank() != 2 || y.extent(0) != batch || y.extent(1) != F) return false;
  if (s.rank() != 1 || s.extent(0) != batch) return false;
  const float *px = x.data<float>(), *pw1 = w1.data<float>(), *pb = bias.data<float>(),
              *pw2 = w2.data<float>(), *py = y.data<float>(), *ps = s.data<float>();
  auto close = [](double got, double want) {
    return std::abs(got - want) <= 1e-4 * (1 + std::abs(want));
  };
  double h[E];
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t j = 0; j < E; ++j) {
      double acc = pb[j];
      for (std::size_t i = 0; i < D; ++i) acc += double(px[r * D + i]) * pw1[i * E + j];
      h[j] = std::tanh(acc);
    }
    double sum = 0;
    for (std::size_t k = 0; k < F; ++k) {
      double acc = 0;
      for (std::size_t j = 0; j < E; ++j) acc += h[j] * pw2[j * F + k];
      if (!close(py[r * F + k], acc)) return false;
      sum += acc * acc;
    }
    if (!close(ps[r], sum)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("8 threads, bindings from 1000 values, 4 specializations: results, counts, memory") {
  const double seconds = stress::seconds(2);
  const model m;
  auto ex = g::compile(m.b, {m.y, m.s}, {.max_specializations = capacity});
  std::mt19937 setup(1);
  const dyn_tensor w1 = random_tensor(f32({dim::named("d", D), dim::named("e", E)}), setup);
  const dyn_tensor bias = random_tensor(f32({dim::named("e", E)}), setup);
  const dyn_tensor w2 = random_tensor(f32({dim::named("e", E), dim::named("f", F)}), setup);

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  // The resident size once every thread has run a while (glibc's per-thread arenas made, the
  // result pool full), and again at the end.
  const auto warm_at = start + std::chrono::duration<double>(seconds / 4);
  std::atomic<std::size_t> runs{0}, prespecialized{0}, wrong{0}, errors{0};
  // A sample of the specializations that served runs, by weak reference: once evicted, and once
  // the threads' run slots are gone, each must be freed.
  std::vector<std::vector<std::weak_ptr<const nax::runtime::specialization>>> seen(threads);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(100 + t));
      std::uniform_int_distribution<std::size_t> pick(1, values);
      try {
        for (std::size_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
          const std::size_t batch = pick(rng);
          const dyn_tensor in[] = {
              random_tensor(f32({dim::named("batch", batch), dim::named("d", D)}), rng), w1, bias,
              w2};
          std::vector<dyn_tensor> out;
          if (i % 2 == 0) {
            out = ex.run(in);
          } else {  // into tensors of our own
            out = {dyn_tensor(f32({dim::named("batch", batch), dim::named("f", F)})),
                   dyn_tensor(f32({dim::named("batch", batch)}))};
            ex.run(in, out);
          }
          runs.fetch_add(1, std::memory_order_relaxed);
          if (!matches(in[0], w1, bias, w2, out[0], out[1]))
            wrong.fetch_add(1, std::memory_order_relaxed);
          if (i % 8 == 0 && seen[t].size() < 256)
            if (auto s = ex.cached(nax::bindings{{"batch", batch}})) seen[t].push_back(s);
          if (i % 16 == 15) {  // specializations made ahead, while the others run
            ex.pre_specialize({nax::bindings{{"batch", pick(rng)}}});
            prespecialized.fetch_add(1, std::memory_order_relaxed);
          }
        }
      } catch (...) {
        errors.fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::this_thread::sleep_until(warm_at);
  const std::size_t warm_resident = stress::resident_bytes();
  const nax::specialization_stats warm = ex.stats();
  for (auto& th : pool) th.join();
  const std::size_t end_resident = stress::resident_bytes();
  const nax::specialization_stats s = ex.stats();

  MESSAGE(runs.load(), " runs and ", prespecialized.load(), " pre-specializations in ", seconds,
          " s: ", s.misses, " misses, ", s.evictions, " evictions; resident ", warm_resident >> 10,
          " KiB after a quarter, ", end_resident >> 10, " KiB at the end");
  CHECK(errors.load() == 0);
  CHECK(wrong.load() == 0);
  CHECK(runs.load() >= threads);
  // The counts add up: every run and pre-specialization is a hit or a miss; every
  // specialization built is live or evicted, and at most `capacity` are live.
  CHECK(s.hits + s.misses == runs.load() + prespecialized.load());
  CHECK(s.total == s.live + s.evictions);
  CHECK(s.live <= capacity);
  CHECK(s.misses >= s.total);
  // Bindings from 1000 values, 4 kept: nearly every run builds a specialization.
  CHECK(s.misses * 2 > runs.load());
  // Of the specializations sampled, only live ones are alive (the threads, and their run slots,
  // are gone): at most `capacity`.
  std::size_t sampled = 0, alive = 0;
  for (const auto& v : seen)
    for (const auto& w : v) {
      ++sampled;
      if (!w.expired()) ++alive;
    }
  CAPTURE(sampled);
  CHECK(alive <= capacity);
  // The resident size is bounded: the runs after the first quarter built some thousands of
  // specializations (each with an arena of ~64 KiB of hidden layer for a batch of ~500); a leak
  // of those would grow it by far more than this.
  // (Not under the sanitizers, whose own memory grows with what the runs allocate and free.)
  const std::size_t later_misses = s.misses - warm.misses;
  CAPTURE(later_misses);
  if (stress::resident_size_tells_leaks)
    CHECK(end_resident <= warm_resident + (std::size_t{16} << 20));
}
