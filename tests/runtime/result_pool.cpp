// The results of executable::run(inputs): buffers not cleared and reused from the executable's
// bounded pool of released results (runtime/result_pool.hpp). A warm run whose earlier results
// are released allocates only its vector of results; a reused buffer shows none of its old bytes;
// results outlive their executable; concurrent runs get buffers of their own.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/result_pool.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "random_graph.hpp"
#include "reference.hpp"

#include "support/allocation_counter.hpp"
#include "support/bits.hpp"

namespace {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

shape concrete(dtype t, std::initializer_list<std::pair<const char*, std::size_t>> dims) {
  std::vector<dim> d;
  for (auto [n, e] : dims) d.push_back(dim::named(n, e));
  return shape(t, std::span<const dim>(d));
}

using nax_test::same_bits;

// The results of `ex` on `in` written into fresh zeroed tensors: what run(inputs) must give.
std::vector<dyn_tensor> into_zeroed(nax::executable& ex, std::span<const dyn_tensor> in) {
  const std::vector<dyn_tensor> shapes = ex.run(in);
  std::vector<dyn_tensor> out;
  for (const dyn_tensor& t : shapes) out.emplace_back(t.shape());
  ex.run(in, out);
  return out;
}

// Every byte of each result's buffer set to 0xff (a NaN in every float type).
void poison(std::vector<dyn_tensor>& results) {
  for (dyn_tensor& t : results)
    if (t.bytes()) std::memset(t.data(), 0xff, t.bytes());
}

// Runs ex on `in`, poisons and releases those results, and runs again: the second results, in
// the buffers the first released. `released`, if given, receives the first results' addresses.
std::vector<dyn_tensor> run_on_released(nax::executable& ex, std::span<const dyn_tensor> in,
                                        std::vector<const void*>* released = nullptr) {
  std::vector<dyn_tensor> old = ex.run(in);
  if (released)
    for (const dyn_tensor& r : old) released->push_back(r.data());
  poison(old);
  old.clear();
  return ex.run(in);
}

}  // namespace

TEST_CASE("the pool hands a released buffer back, keeps within its bound, outlives nothing") {
  using nax::runtime::result_pool;
  auto pool = std::make_unique<result_pool>();
  std::shared_ptr<std::byte> a = pool->get(1000);
  std::byte* const first = a.get();
  CHECK(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
  std::shared_ptr<std::byte> b = pool->get(1000);  // a is held: another buffer
  CHECK(b.get() != first);
  CHECK(pool->buffers() == 2);
  a.reset();
  std::shared_ptr<std::byte> c = pool->get(1000);
  CHECK(c.get() == first);
  CHECK(pool->get(999).get() != first);  // another size: a buffer of its own
  // At most max_buffers buffers: the released ones, least recently handed out first, make room.
  std::vector<std::shared_ptr<std::byte>> held;
  for (std::size_t k = 0; k < 2 * result_pool::max_buffers; ++k) held.push_back(pool->get(64));
  CHECK(pool->buffers() == result_pool::max_buffers);
  held.clear();
  CHECK(pool->buffers() == result_pool::max_buffers);
  // At most max_bytes: a buffer larger is never kept; released ones give way to a new size.
  {
    std::shared_ptr<std::byte> big = pool->get(result_pool::max_bytes + 64);
    CHECK(pool->bytes() <= result_pool::max_bytes);
  }
  std::shared_ptr<std::byte> half = pool->get(result_pool::max_bytes / 2);
  std::shared_ptr<std::byte> other = pool->get(result_pool::max_bytes / 2 - 4096);
  CHECK(pool->bytes() <= result_pool::max_bytes);
  std::byte* const half_at = half.get();
  half.reset();
  other.reset();
  std::shared_ptr<std::byte> again = pool->get(result_pool::max_bytes / 2);
  CHECK(again.get() == half_at);
  CHECK(pool->bytes() <= result_pool::max_bytes);
  // Buffers outlive the pool.
  pool.reset();
  std::memset(c.get(), 1, 1000);
  std::memset(again.get(), 2, 4096);
}

TEST_CASE("a warm run(inputs) whose earlier results are released allocates only its vector" *
          doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)) {
  g::builder b;
  const dim h = dim::named("h", 6), k = dim::named("k", 5);
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", h}));
  auto w = b.parameter("w", shape::make(dtype::f32, {h, k}));
  auto y = g::softmax(g::relu(g::dot_general(x, w, {{"h", "h"}})), "k");
  auto ex = g::compile(b, {g::sum(y, {"k"}), y});
  std::mt19937 rng(5);
  const dyn_tensor in[] = {
      reference::random_tensor(concrete(dtype::f32, {{"batch", 7}, {"h", 6}}), rng),
      reference::random_tensor(concrete(dtype::f32, {{"h", 6}, {"k", 5}}), rng)};
  const std::vector<dyn_tensor> want = into_zeroed(ex, in);
  (void)ex.run(in);  // the pool's buffers made, then released
  long before = nax_test::allocations.load();
  std::vector<dyn_tensor> out = ex.run(in);
  CHECK(nax_test::allocations.load() - before == 1);  // the vector
  REQUIRE(out.size() == 2);
  CHECK(same_bits(out[0], want[0]));
  CHECK(same_bits(out[1], want[1]));
  // The loop `out = ex.run(in)` holds the last results during the run: the pool has two sets.
  out = ex.run(in);
  before = nax_test::allocations.load();
  for (int i = 0; i < 5; ++i) out = ex.run(in);
  CHECK(nax_test::allocations.load() - before == 5);
  CHECK(same_bits(out[1], want[1]));
}

TEST_CASE("a reused buffer shows none of its old bytes (random graphs, poisoned results)") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 3 == 0 ? dtype::f64 : dtype::f32;
    random_graph::graph rg(rng, t);
    auto ex = g::compile(rg.b, rg.outs);
    for (const auto& bs : {std::pair{3u, 5u}, {1u, 16u}, {3u, 5u}}) {
      const std::vector<dyn_tensor> in = rg.inputs(rng, bs.first, bs.second);
      const std::vector<dyn_tensor> want = into_zeroed(ex, in);
      std::vector<const void*> where;
      const std::vector<dyn_tensor> got = run_on_released(ex, in, &where);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(same_bits(got[i], want[i]));
        if (got[i].bytes()) CHECK(got[i].data() == where[i]);  // (reused: same sizes, released)
      }
    }
  }
}

TEST_CASE("a reused buffer shows none of its old bytes (padding, slices, inputs, constants)") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {dim::bounded("seq", 8), dim::named("h", 3)}));
  auto extra = b.parameter("extra", shape::make(dtype::i32, {}));
  const g::value size = g::min(g::get_dimension_size(x, "seq") + extra, b.constant(8, dtype::i32));
  const g::value grown = g::set_dimension_size(x, "seq", size, "n");  // zeros past seq
  const g::value padded = g::pad(g::tanh(x), "h", 2, 1, 0.0);
  const g::value joined = g::concat({x, g::exp(x)}, "h");
  const g::value outs[] = {grown, padded, joined, x, b.constant(2.5), grown};
  auto ex = g::compile(b, outs);
  std::mt19937 rng(3);
  for (std::size_t seq : {0u, 3u, 8u, 3u})
    for (std::int32_t e : {0, 2, 9, 0}) {
      CAPTURE(seq);
      CAPTURE(e);
      dyn_tensor n(shape::make(dtype::i32, {}));
      *n.data<std::int32_t>() = e;
      const std::vector<dyn_tensor> in = {
          reference::random_tensor(x.shape().resolve({{"seq", seq}}), rng), n};
      const std::vector<dyn_tensor> want = into_zeroed(ex, in);
      const std::vector<dyn_tensor> got = run_on_released(ex, in);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(same_bits(got[i], want[i]));
      }
      if (got[0].bytes()) CHECK(got[0].data() != got[5].data());  // a buffer of its own
    }
}

TEST_CASE("results outlive their executable") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"n"}));
  const g::value outs[] = {g::exp(x) * 2.0, x + 1.0};
  std::mt19937 rng(2);
  const std::vector<dyn_tensor> in = {
      reference::random_tensor(concrete(dtype::f32, {{"n", 1000}}), rng)};
  std::vector<dyn_tensor> kept, want;
  {
    auto ex = g::compile(b, outs);
    want = into_zeroed(ex, in);
    (void)ex.run(in);  // released into the pool
    kept = ex.run(in);
    (void)ex.run(in);
  }
  REQUIRE(kept.size() == 2);
  CHECK(same_bits(kept[0], want[0]));
  CHECK(same_bits(kept[1], want[1]));
  kept[0].fill(1.f);  // still writable memory
  kept.clear();
}

TEST_CASE("concurrent run(inputs) from several threads: buffers of their own, right results") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("h", 64)}));
  auto w = b.parameter("w", shape::make(dtype::f32, {dim::named("h", 64), dim::named("k", 32)}));
  const g::value outs[] = {g::tanh(g::dot_general(x, w, {{"h", "h"}})), g::sum(x * x, {"h"})};
  auto ex = g::compile(b, outs, {.max_specializations = 3});
  constexpr int threads = 4;
  std::vector<std::vector<dyn_tensor>> inputs, wants;
  std::mt19937 rng(9);
  for (int t = 0; t < threads; ++t) {
    const std::size_t batch = 1 + static_cast<std::size_t>(t % 2) * 15;  // two sizes
    inputs.push_back(
        {reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 64}}), rng),
         reference::random_tensor(concrete(dtype::f32, {{"h", 64}, {"k", 32}}), rng)});
    wants.push_back(into_zeroed(ex, inputs.back()));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<dyn_tensor> last;
      for (int i = 0; i < 300; ++i) {
        std::vector<dyn_tensor> got = ex.run(inputs[static_cast<std::size_t>(t)]);
        const std::vector<dyn_tensor>& want = wants[static_cast<std::size_t>(t)];
        for (std::size_t j = 0; j < got.size(); ++j)
          if (!same_bits(got[j], want[j])) failures.fetch_add(1);
        if (i % 3 == 0) poison(last);  // ours alone: no other thread's result may change
        last = std::move(got);
      }
    });
  for (std::thread& th : pool) th.join();
  CHECK(failures.load() == 0);
}
