// Step kernels in shared slabs (runtime/kernel_arena.hpp): objects made in a scope share a few
// allocations and are freed one by one, in any order, on any thread, the slab with the last;
// outside a scope they come from the heap. A specialization of a long graph makes few
// allocations, and steps that copy an earlier step's kernel (runtime/plan_memo.hpp) give the
// bits of a kernel planned alone.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/specialization.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"

#include "support/allocation_counter.hpp"

namespace {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

std::atomic<int> live_objects{0};

struct base {
  virtual ~base() = default;
  virtual int value() const = 0;
};

struct small final : base, nax::runtime::arena_allocated {
  explicit small(int v) : v_(v) { live_objects.fetch_add(1); }
  ~small() override { live_objects.fetch_sub(1); }
  int value() const override { return v_; }
  int v_;
  char pad[40] = {};
};

struct alignas(64) wide final : base, nax::runtime::arena_allocated {
  explicit wide(int v) : v_(v) { live_objects.fetch_add(1); }
  ~wide() override { live_objects.fetch_sub(1); }
  int value() const override { return v_; }
  int v_;
  double lanes[8] = {};
};

shape concrete(dtype t, std::initializer_list<std::pair<const char*, std::size_t>> dims) {
  std::vector<dim> d;
  for (auto [n, e] : dims) d.push_back(dim::named(n, e));
  return shape(t, std::span<const dim>(d));
}

}  // namespace

TEST_CASE("objects made in a scope share slabs; freed in any order, on any thread" *
          doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)) {
  std::vector<std::unique_ptr<base>> objects;
  long made = 0;
  {
    const long before = nax_test::allocations.load();
    const nax::runtime::kernel_arena_scope scope(64 * 1024);
    for (int i = 0; i < 500; ++i) {
      if (i % 3 == 0)
        objects.push_back(std::make_unique<wide>(i));
      else
        objects.push_back(std::make_unique<small>(i));
    }
    made = nax_test::allocations.load() - before;
  }
  const long vector_growth = 10;  // objects' own buffer, doubling to 500
  CHECK(made <= vector_growth + 3);
  CHECK(live_objects.load() == 500);
  for (std::size_t i = 0; i < objects.size(); ++i) {
    CHECK(objects[i]->value() == static_cast<int>(i));
    if (i % 3 == 0) CHECK(reinterpret_cast<std::uintptr_t>(objects[i].get()) % 64 == 0);
  }
  // Every other one freed here, the rest on another thread, backwards.
  for (std::size_t i = 0; i < objects.size(); i += 2) objects[i].reset();
  std::thread([&] {
    for (std::size_t i = objects.size(); i-- > 0;) objects[i].reset();
  }).join();
  CHECK(live_objects.load() == 0);
}

TEST_CASE("outside a scope, and in nested scopes, objects are made and freed alike") {
  auto heap = std::make_unique<wide>(7);
  CHECK(reinterpret_cast<std::uintptr_t>(heap.get()) % 64 == 0);
  std::unique_ptr<base> inner_made, outer_made;
  {
    const nax::runtime::kernel_arena_scope outer(4096);
    {
      const nax::runtime::kernel_arena_scope inner(4096);
      inner_made = std::make_unique<small>(1);
    }
    outer_made = std::make_unique<small>(2);
    std::unique_ptr<base> freed_in_scope = std::make_unique<small>(3);
  }
  CHECK(heap->value() + inner_made->value() + outer_made->value() == 10);
  heap.reset();
  outer_made.reset();
  inner_made.reset();
  CHECK(live_objects.load() == 0);
}

TEST_CASE("a specialization of a 900-step graph makes fewer than 50 allocations" *
          doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)) {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("h", 16)}));
  auto w = b.parameter("w", shape::make(dtype::f32, {dim::named("h", 16), dim::named("k", 16)}));
  auto c = b.parameter("c", shape::make(dtype::f32, {dim::named("k", 16)}));
  g::value h = x;
  for (int i = 0; i < 150; ++i) {
    auto u = g::tanh(g::dot_general(h, w, {{"h", "h"}}) + c);
    h = g::rename(u, "k", "h") * 0.5 + h;
  }
  auto ex = g::compile(b, {h}, {.fusion = false});
  const std::size_t steps = ex.program().steps.size();
  CHECK(steps >= 600);
  const nax::bindings bind{{"batch", 8}};
  // (The recipe is made once per program, with it: an executable's level 1.)
  const nax::runtime::specialization_recipe recipe =
      nax::runtime::make_specialization_recipe(ex.program());
  (void)nax::runtime::specialize(ex.program(), bind, {.threads = 1, .recipe = &recipe});
  const long before = nax_test::allocations.load();
  const std::unique_ptr<nax::runtime::specialization> s =
      nax::runtime::specialize(ex.program(), bind, {.threads = 1, .recipe = &recipe});
  const long made = nax_test::allocations.load() - before;
  CAPTURE(steps);
  MESSAGE("allocations of one specialization: " << made);
  CHECK(made < 50);  // issue 20's target (was one per step and more)
}

TEST_CASE("a shared plan is one object for all its users, freed with the last of them") {
  struct counted_plan {
    int* alive;
    int value;
    explicit counted_plan(int* a, int v) : alive(a), value(v) { ++*alive; }
    counted_plan(counted_plan&& other) noexcept : alive(other.alive), value(other.value) {
      ++*alive;
    }
    ~counted_plan() { --*alive; }
  };
  int alive = 0;
  {
    const nax::runtime::kernel_arena_scope scope(4096);
    auto first = std::make_unique<nax::runtime::shared_plan<counted_plan>>(counted_plan(&alive, 7));
    CHECK(alive == 1);  // the temporary moved in is gone
    auto second = std::make_unique<nax::runtime::shared_plan<counted_plan>>(*first);
    const nax::runtime::shared_plan<counted_plan> third(*second);
    CHECK(alive == 1);
    CHECK(&**first == &*third);
    CHECK(third->value == 7);
    first.reset();  // any order
    CHECK(alive == 1);
    CHECK((*second)->value == 7);
    second.reset();
    CHECK(alive == 1);
  }
  CHECK(alive == 0);  // with the last user (after the scope: the slab outlives it)
}

TEST_CASE("steps copying an earlier step's kernel give the bits of kernels planned alone") {
  // Two blocks of the same shapes on different inputs: the second block's steps copy the first
  // one's kernels (plan_memo); the second block compiled alone plans its own.
  auto block = [](g::value v, g::value w, g::value c) {
    auto u = g::gelu(g::dot_general(v, w, {{"h", "h"}}) + c);
    return g::rename(g::softmax(u * 0.5, "h2"), "h2", "h") - v;
  };
  const dim hd = dim::named("h", 24);
  auto params = [&](g::builder& b, const char* x, const char* w, const char* c) {
    return std::array<g::value, 3>{
        b.parameter(x, shape::make(dtype::f32, {"batch", hd})),
        b.parameter(w, shape::make(dtype::f32, {hd, dim::named("h2", 24)})),
        b.parameter(c, shape::make(dtype::f32, {dim::named("h2", 24)}))};
  };
  g::builder both;
  const auto first = params(both, "x1", "w1", "c1");
  const auto second = params(both, "x2", "w2", "c2");
  const g::value outs[] = {block(first[0], first[1], first[2]),
                           block(second[0], second[1], second[2])};
  g::builder alone;
  const auto only = params(alone, "x2", "w2", "c2");
  const g::value alone_out[] = {block(only[0], only[1], only[2])};
  for (bool fusion : {false, true}) {
    CAPTURE(fusion);
    auto ex_both = g::compile(both, outs, {.fusion = fusion});
    auto ex_alone = g::compile(alone, alone_out, {.fusion = fusion});
    std::mt19937 rng(4);
    for (std::size_t batch : {1u, 7u, 64u}) {
      CAPTURE(batch);
      std::vector<dyn_tensor> in;
      for (int k = 0; k < 2; ++k) {
        in.push_back(
            reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"h", 24}}), rng));
        in.push_back(reference::random_tensor(concrete(dtype::f32, {{"h", 24}, {"h2", 24}}), rng));
        in.push_back(reference::random_tensor(concrete(dtype::f32, {{"h2", 24}}), rng));
      }
      const std::vector<dyn_tensor> got = ex_both.run(in);
      const dyn_tensor alone_in[] = {in[3], in[4], in[5]};
      const std::vector<dyn_tensor> want = ex_alone.run(alone_in);
      REQUIRE(got.size() == 2);
      REQUIRE(got[1].shape() == want[0].shape());
      CHECK(std::memcmp(got[1].data(), want[0].data(), want[0].bytes()) == 0);
    }
  }
}
