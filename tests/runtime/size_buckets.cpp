// The size policies of bounded axes (runtime/size_buckets.hpp, graph::compile_options::bounded):
// under buckets and bound every extent gives the exact policy's bits with its true extents, a
// policy makes one specialization per bucket, a bucket's extents run in its arenas, an extent
// above the bound is refused before anything runs, and bad options are refused by name.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "random_graph.hpp"
#include "reference.hpp"
#include "support/bits.hpp"

namespace g = nax::graph;
using g::size_policy;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

using nax_test::same_bits;

g::compile_options with(g::bounded_sizes sizes) {
  g::compile_options o;
  o.bounded = std::move(sizes);
  return o;
}

// x[seq<=16, h=8]: softmax over seq, a sum over seq, layer_norm over h, x . w contracting seq.
struct block {
  g::builder b;
  std::vector<g::value> params, outs;
  block() {
    const dim seq = dim::bounded("seq", 16), h = dim::named("h", 8);
    params.push_back(b.parameter("x", shape::make(dtype::f32, {seq, h})));
    params.push_back(b.parameter("w", shape::make(dtype::f32, {seq, dim::named("k", 3)})));
    params.push_back(b.parameter("gamma", shape::make(dtype::f32, {h})));
    const g::value& x = params[0];
    outs.push_back(g::softmax(x, "seq"));
    outs.push_back(g::sum(g::exp(x), {"seq"}));
    outs.push_back(g::layer_norm(x, params[2], params[2], "h", 1e-5));
    outs.push_back(g::dot_general(x, params[1], {{"seq", "seq"}}));
    outs.push_back(g::transpose(g::exp(x), {1, 0}));  // (an intermediate in the arena)
  }
  std::vector<dyn_tensor> inputs(std::size_t seq, std::mt19937& rng) const {
    return reference::random_inputs(params, nax::bindings{{"seq", seq}}, rng);
  }
};

// Every output of ex.run(in) has exact's shape and bits; the same error if exact throws. Returns
// whether there were results to compare.
bool check_same(nax::executable& ex, nax::executable& exact, const std::vector<dyn_tensor>& in) {
  std::vector<dyn_tensor> want;
  bool threw = false;
  try {
    want = exact.run(in);
  } catch (const nax::shape_error&) {
    threw = true;
  }
  if (threw) {
    CHECK_THROWS_AS(ex.run(in), nax::shape_error);
    return false;
  }
  const std::vector<dyn_tensor> got = ex.run(in);
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k].shape() == want[k].shape());  // the true extents, not the bucket's
    CHECK(same_bits(got[k], want[k]));
  }
  return true;
}

}  // namespace

TEST_CASE("every policy gives the exact policy's bits at every extent up to the bound") {
  const block bl;
  auto exact = g::compile(bl.b, bl.outs);
  auto buckets = g::compile(bl.b, bl.outs, with({size_policy::buckets}));
  auto listed = g::compile(bl.b, bl.outs, with({size_policy::buckets, {3, 10}}));
  auto bound = g::compile(bl.b, bl.outs, with({size_policy::bound}));
  std::mt19937 rng(11);
  for (int pass = 0; pass < 2; ++pass)  // the second pass: every extent's steps are held
    for (std::size_t seq = 0; seq <= 16; ++seq) {
      CAPTURE(seq);
      const std::vector<dyn_tensor> in = bl.inputs(seq, rng);
      check_same(buckets, exact, in);
      check_same(listed, exact, in);
      check_same(bound, exact, in);
    }
  CHECK(exact.stats().total == 17);
  // Specializations: one per bucket used; extents: each made once, then hits.
  CHECK(buckets.stats().total == 5);  // 1 (serves 0 and 1), 2, 4, 8, 16
  CHECK(listed.stats().total == 3);   // 3, 10, and the bound 16
  CHECK(bound.stats().total == 1);
  for (nax::executable* ex : {&buckets, &listed, &bound}) {
    const nax::specialization_stats s = ex->stats();
    CHECK(s.extent_misses == 17);
    CHECK(s.extent_hits == 17);
    CHECK(s.live_extents == 17);
    CHECK(s.misses == s.total);
    CHECK(s.hits + s.misses == 34);
  }
  CHECK(exact.stats().extent_misses == 0);
  // One arena per specialization at a time (one thread runs): the bound's serves all 17.
  CHECK(bound.stats().arena_bytes > 0);
  CHECK(bound.stats().arena_bytes == bound.cached(nax::bindings{{"seq", 16}})->arena_bytes);
  CHECK(bound.stats().arena_bytes < exact.stats().arena_bytes / 4);
}

TEST_CASE("random graphs: every policy gives the exact policy's results at every extent") {
  std::mt19937 rng(5);
  int compared = 0;  // runs with results: a graph whose runs all throw compares nothing
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const dtype t = trial % 4 == 0 ? dtype::f64 : dtype::f32;
    random_graph::graph rg(rng, t);  // seq <= 16
    auto exact = g::compile(rg.b, rg.outs);
    auto buckets = g::compile(rg.b, rg.outs, with({size_policy::buckets}));
    auto bound = g::compile(rg.b, rg.outs, with({size_policy::bound}));
    CAPTURE(exact.to_dot());
    const std::size_t batch = std::uniform_int_distribution<std::size_t>(1, 5)(rng);
    for (std::size_t seq = 0; seq <= 16; ++seq) {
      CAPTURE(seq);
      const std::vector<dyn_tensor> in = rg.inputs(rng, batch, seq);
      compared += check_same(buckets, exact, in) ? 1 : 0;
      compared += check_same(bound, exact, in) ? 1 : 0;
    }
    CHECK(bound.stats().total <= 1);
    CHECK(buckets.stats().total <= 5);
  }
  CHECK(compared > 40 * 17);  // most of the 2 × 40 × 17 runs
}

TEST_CASE("an extent above the bound is refused, naming the axis, the extent and the bound") {
  const block bl;
  auto bound = g::compile(bl.b, bl.outs, with({size_policy::bound}));
  std::mt19937 rng(2);
  std::vector<dyn_tensor> in = bl.inputs(4, rng);
  in[0] = reference::random_tensor(
      shape::make(dtype::f32, {dim::named("seq", 17), dim::named("h", 8)}), rng);
  in[1] = reference::random_tensor(
      shape::make(dtype::f32, {dim::named("seq", 17), dim::named("k", 3)}), rng);
  CHECK_THROWS_WITH_AS(bound.run(in), "input 'x': axis 'seq': extent 17 exceeds its bound 16",
                       nax::shape_error);
  CHECK(bound.stats().total == 0);  // nothing specialized, nothing ran
  CHECK_THROWS_WITH_AS(bound.pre_specialize({nax::bindings{{"seq", 20}}}),
                       "input 'x': axis 'seq': extent 20 exceeds its bound 16", nax::shape_error);
}

TEST_CASE("policies per axis, and options that cannot apply, named") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), dim::bounded("seq", 100)}));
  const g::value y = g::tanh(x);
  {  // batch has no bound: the default policy leaves it exact; a list of buckets serves it
    g::compile_options o = with({size_policy::bound});
    o.bounded_axes = {{"batch", {size_policy::buckets, {4, 8}}}};
    auto ex = g::compile(b, {y}, o);
    std::mt19937 rng(1);
    for (std::size_t batch : {1u, 3u, 4u, 7u, 9u, 12u})
      for (std::size_t seq : {1u, 50u, 100u}) {
        const std::vector<dyn_tensor> in = {reference::random_tensor(
            shape::make(dtype::f32, {dim::named("batch", batch), dim::named("seq", seq)}), rng)};
        const dyn_tensor out = ex.run(in)[0];
        CHECK(out.extent("batch") == batch);
        CHECK(out.extent("seq") == seq);
        CHECK(out.data<float>()[out.size() - 1] ==
              doctest::Approx(std::tanh(in[0].data<float>()[out.size() - 1])));
      }
    CHECK(ex.stats().total == 4);  // batch in 4, 8, 9, 12 (above the last bucket: exact)
  }
  auto refused = [&](g::compile_options o, const char* message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(g::compile(b, {y}, o), message, nax::shape_error);
  };
  g::compile_options o;
  o.bounded_axes = {{"sq", {size_policy::bound}}};
  refused(o,
          "nax::graph::compile: compile_options::bounded_axes names 'sq', which is not a dynamic "
          "axis of the inputs (batch, seq)");
  o.bounded_axes = {{"batch", {size_policy::bound}}};
  refused(o,
          "nax::graph::compile: axis 'batch' has no bound: size_policy::bound needs one (declare "
          "it as 'batch<=N', or give the buckets)");
  o.bounded_axes = {{"batch", {size_policy::buckets}}};
  refused(o,
          "nax::graph::compile: axis 'batch' has no bound: size_policy::buckets with no list of "
          "buckets needs one (declare it as 'batch<=N', or give the buckets)");
  o.bounded_axes = {{"seq", {size_policy::buckets, {8, 4}}}};
  refused(o,
          "nax::graph::compile: axis 'seq': the buckets must be ascending positive extents, got 4 "
          "at position 1");
  o.bounded_axes = {{"seq", {size_policy::buckets, {8, 128}}}};
  refused(o, "nax::graph::compile: axis 'seq': bucket 128 is above its bound 100");
  o.bounded_axes = {};
  o.max_extents_per_specialization = 0;
  refused(o, "nax::graph::compile: max_extents_per_specialization must be at least 1, got 0");
}

TEST_CASE("a bucket's extents evicted least recently used beyond the capacity, then rebuilt") {
  const block bl;
  g::compile_options o = with({size_policy::bound});
  o.max_extents_per_specialization = 2;
  auto exact = g::compile(bl.b, bl.outs);
  auto bound = g::compile(bl.b, bl.outs, o);
  std::mt19937 rng(3);
  for (std::size_t seq : {1u, 2u, 1u, 3u, 2u, 5u, 1u}) {
    CAPTURE(seq);
    check_same(bound, exact, bl.inputs(seq, rng));
  }
  const nax::specialization_stats s = bound.stats();
  CHECK(s.live_extents == 2);
  CHECK(s.extent_misses == 6);  // all but the second 1: 3 drops 2, 2 drops 1, 5 drops 3, 1 drops 2
  CHECK(bound.cached(nax::bindings{{"seq", 1}}) != nullptr);
  CHECK(bound.cached(nax::bindings{{"seq", 3}}) == nullptr);
}

TEST_CASE("threads running many extents of one bucket at once share its arenas safely") {
  // Few extents kept per bucket: they are evicted and made again while arenas laid out for them
  // move between the threads' slots and the pools (an arena is laid out again for each new
  // specialization, even one made at a freed one's address).
  const block bl;
  auto exact = g::compile(bl.b, bl.outs);
  g::compile_options o = with({size_policy::bound});
  o.max_extents_per_specialization = 3;
  auto bound = g::compile(bl.b, bl.outs, o);
  o.bounded = {size_policy::buckets};
  auto buckets = g::compile(bl.b, bl.outs, o);
  std::vector<std::vector<dyn_tensor>> inputs, wants;
  std::mt19937 rng(4);
  for (std::size_t seq = 0; seq <= 16; ++seq) {
    inputs.push_back(bl.inputs(seq, rng));
    wants.push_back(exact.run(inputs.back()));
  }
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 60; ++i) {
        const std::size_t seq = static_cast<std::size_t>(i * 7 + t * 3) % 17;
        for (nax::executable* ex : {&bound, &buckets}) {
          const std::vector<dyn_tensor> got = ex->run(inputs[seq]);
          for (std::size_t k = 0; k < got.size(); ++k)
            if (!same_bits(got[k], wants[seq][k])) ++wrong[static_cast<std::size_t>(t)];
        }
      }
    });
  for (std::thread& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
  CHECK(bound.stats().total == 1);
}

TEST_CASE("a bucket whose extents the graph refuses: its extents are served exactly") {
  // slice(x, seq, 0, 1) + x unifies seq with 1: only seq = 1 runs, exactly as without buckets.
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::bounded("seq", 16)}));
  const g::value y = g::slice(x, "seq", 0, 1) + x;
  auto exact = g::compile(b, {y});
  auto bound = g::compile(b, {y}, with({size_policy::bound}));
  std::mt19937 rng(6);
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t seq : {1u, 2u, 16u}) {
      CAPTURE(seq);
      check_same(
          bound, exact,
          {reference::random_tensor(shape::make(dtype::f32, {dim::named("seq", seq)}), rng)});
    }
  CHECK(bound.stats().total == 1);  // seq = 1, exactly
}
