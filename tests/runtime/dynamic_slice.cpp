// The ops whose place along an axis is a run-time value (runtime/steps/dynamic_slice.hpp):
// get_dimension_size gives the run's extent under every size policy; dynamic_slice and
// dynamic_update_slice clamp their start as XLA does (start 0, at the end, past it, negative,
// empty results) and match the reference; their gradients, and a slice's along a dynamic axis,
// match finite differences.
#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "../graph/grad_check.hpp"
#include "reference.hpp"
#include "support/bits.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

dyn_tensor scalar_i64(std::int64_t v) {
  dyn_tensor t(shape::make(dtype::i64, {}));
  std::memcpy(t.data(), &v, sizeof v);
  return t;
}
dyn_tensor scalar_i32(std::int32_t v) {
  dyn_tensor t(shape::make(dtype::i32, {}));
  std::memcpy(t.data(), &v, sizeof v);
  return t;
}
using nax_test::same_bits;

shape seq_h(std::size_t seq) {
  return shape::make(dtype::f32, {dim::named("seq", seq), dim::named("h", 3)});
}

// Every output of b's `outs` run on `in` is the reference's (exactly when they only move data).
void check_runs(g::builder& b, std::span<const g::value> outs, nax::executable& ex,
                const std::vector<dyn_tensor>& in, double tolerance = 0) {
  const std::vector<dyn_tensor> got = ex.run(in);
  const std::vector<reference::dense> all = reference::evaluate(b, in);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    CAPTURE(k);
    const reference::dense& want = all[outs[k].id()];
    CHECK(got[k].shape() == want.shape);
    CHECK(reference::max_error(got[k], want) <= tolerance);
  }
}

}  // namespace

TEST_CASE("get_dimension_size is the run's extent, under every size policy") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::bounded("seq", 16), dim::named("h", 3)}));
  const g::value outs[] = {g::get_dimension_size(x, "seq"),
                           g::get_dimension_size(x, "h", dtype::i64)};
  CHECK(outs[0].shape() == shape::make(dtype::i32, {}));
  for (g::size_policy policy :
       {g::size_policy::exact, g::size_policy::buckets, g::size_policy::bound}) {
    g::compile_options o;
    o.bounded = {policy};
    auto ex = g::compile(b, outs, o);
    for (std::size_t seq : {0u, 1u, 5u, 16u}) {
      const std::vector<dyn_tensor> r = ex.run({dyn_tensor(seq_h(seq))});
      CHECK(r[0].data<std::int32_t>()[0] == static_cast<std::int32_t>(seq));  // never the bound
      CHECK(r[1].data<std::int64_t>()[0] == 3);
    }
  }
}

TEST_CASE("dynamic_slice clamps its start as XLA does, at the edges") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::bounded("seq", 16), dim::named("h", 3)}));
  auto start = b.parameter("start", shape::make(dtype::i64, {}));
  auto start32 = b.parameter("start32", shape::make(dtype::i32, {}));
  const g::value outs[] = {g::dynamic_slice(x, "seq", start, 4),
                           g::dynamic_slice(x, "h", start32, 2),
                           g::dynamic_slice(x, "seq", start, 0)};
  CHECK(outs[0].shape() == shape::make(dtype::f32, {dim::named("seq", 4), dim::named("h", 3)}));
  auto ex = g::compile(b, outs);
  std::mt19937 rng(1);
  for (std::size_t seq : {4u, 7u, 16u})
    for (std::int64_t s : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{5},
                           std::int64_t{100}, std::int64_t{-2}, INT64_MIN, INT64_MAX}) {
      CAPTURE(seq);
      CAPTURE(s);
      const std::vector<dyn_tensor> in = {reference::random_tensor(seq_h(seq), rng), scalar_i64(s),
                                          scalar_i32(static_cast<std::int32_t>(s % 5))};
      check_runs(b, outs, ex, in);
      // The clamped start, spelled out: the slice ends at the extent at most.
      const std::size_t at =
          s <= 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(s), seq - 4);
      const dyn_tensor r = ex.run(in)[0];
      CHECK(r.data<float>()[0] == in[0].data<float>()[at * 3]);
    }
  // A size above the run's extent: refused when specialized, naming the axis and both.
  CHECK_THROWS_WITH_AS(ex.run({dyn_tensor(seq_h(3)), scalar_i64(0), scalar_i32(0)}),
                       "nax::graph::dynamic_slice: size 4 is more than the extent 3 of axis "
                       "'seq' (f32[seq=3, h=3])",
                       nax::shape_error);
}

TEST_CASE("dynamic_update_slice writes the update at the clamped start") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {dim::bounded("seq", 16), dim::named("h", 3)}));
  auto u = b.parameter("u", shape::make(dtype::f64, {dim::named("seq", 2), dim::named("h", 3)}));
  auto whole =
      b.parameter("whole", shape::make(dtype::f64, {dim::bounded("seq", 16), dim::named("h", 3)}));
  auto start = b.parameter("start", shape::make(dtype::i32, {}));
  const g::value outs[] = {g::dynamic_update_slice(x, u, "seq", start),
                           g::dynamic_update_slice(x, whole, "seq", start) * 2.0};
  auto ex = g::compile(b, outs);
  std::mt19937 rng(2);
  for (std::size_t seq : {2u, 5u, 16u})
    for (std::int32_t s : {0, 1, 3, 14, 15, 99, -1}) {
      CAPTURE(seq);
      CAPTURE(s);
      const nax::bindings bind{{"seq", seq}};
      const std::vector<dyn_tensor> in = {
          reference::random_tensor(x.shape().resolve(bind), rng),
          reference::random_tensor(u.shape().resolve(bind), rng),
          reference::random_tensor(whole.shape().resolve(bind), rng), scalar_i32(s)};
      check_runs(b, outs, ex, in);
    }
  CHECK_THROWS_WITH_AS(
      ex.run({dyn_tensor(x.shape().resolve({{"seq", 1}})), dyn_tensor(u.shape()),
              dyn_tensor(whole.shape().resolve({{"seq", 1}})), scalar_i32(0)}),
      "nax::graph::dynamic_update_slice: the update's extent 2 is more than the extent 1 of axis "
      "'seq' (f64[seq=1, h=3])",
      nax::shape_error);
}

TEST_CASE("dynamic_slice and dynamic_update_slice of a tensor that is empty along another axis") {
  // (Found by fuzzing, tests/fuzz/run.cpp, UBSan: the start's offset was applied to the null
  // buffer of an empty tensor. The CI run under UBSan fails on it.)
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::named("seq", 7), 3}));
  auto u = b.parameter("u", shape::make(dtype::f32, {"batch", dim::named("seq", 2), 3}));
  auto start = b.parameter("start", shape::make(dtype::i64, {}));
  const g::value outs[] = {g::dynamic_update_slice(x, u, "seq", start),
                           g::dynamic_slice(x, "seq", start, 2)};
  auto ex = g::compile(b, outs);
  std::mt19937 rng(4);
  for (std::size_t batch : {0u, 2u})
    for (std::int64_t s : {0, 3, 9}) {
      CAPTURE(batch);
      CAPTURE(s);
      const nax::bindings bind{{"batch", batch}};
      const std::vector<dyn_tensor> in = {reference::random_tensor(x.shape().resolve(bind), rng),
                                          reference::random_tensor(u.shape().resolve(bind), rng),
                                          scalar_i64(s)};
      check_runs(b, outs, ex, in);
      const std::vector<dyn_tensor> got = ex.run(in);
      CHECK(got[0].size() == batch * 7 * 3);
      CHECK(got[1].size() == batch * 2 * 3);
    }
  // The same for a static slice from a start past 0 (found the same way: the copy step applied
  // the start's offset to the null buffer).
  g::builder sb;
  auto z = sb.parameter("z", shape::make(dtype::f32, {"batch", dim::named("seq", 7), 3}));
  const g::value sliced[] = {g::slice(z, "seq", 2, 6), g::slice(z, 2, 1, 3)};
  auto sx = g::compile(sb, sliced);
  for (std::size_t batch : {0u, 2u}) {
    CAPTURE(batch);
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(z.shape().resolve({{"batch", batch}}), rng)};
    check_runs(sb, sliced, sx, in);
    CHECK(sx.run(in)[0].size() == batch * 4 * 3);
  }
  // The same for a concat along seq (found the same way: its parts' offsets into the result).
  g::builder c;
  auto y = c.parameter("y", shape::make(dtype::f32, {"batch", dim::named("seq", 2), 3}));
  const g::value joined[] = {g::concat({y, y, y}, "seq")};
  auto cx = g::compile(c, joined);
  for (std::size_t batch : {0u, 2u}) {
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(y.shape().resolve({{"batch", batch}}), rng)};
    check_runs(c, joined, cx, in);
  }
}

TEST_CASE("gradients of dynamic_slice, dynamic_update_slice and a slice along a dynamic axis") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {dim::bounded("seq", 8), dim::named("h", 3)}));
  auto u = b.parameter("u", shape::make(dtype::f64, {dim::named("seq", 2), dim::named("h", 3)}));
  auto start = b.parameter("start", shape::make(dtype::i64, {}));
  const g::value w = g::tanh(x) * 1.5;
  const g::value sliced = g::dynamic_slice(w, "seq", start, 3);
  const g::value updated = g::dynamic_update_slice(w, g::tanh(u), "seq", start);
  const g::value stepped = g::slice(w, "seq", 1, 6, 2);  // along the bounded axis
  const g::value loss = g::sum(sliced * sliced, {0, 1}) + g::sum(updated * w, {0, 1}) +
                        g::sum(g::exp(stepped), {0, 1});
  std::mt19937 rng(3);
  for (std::size_t seq : {6u, 8u})
    for (std::int64_t s : {std::int64_t{0}, std::int64_t{2}, std::int64_t{7}}) {
      CAPTURE(seq);
      CAPTURE(s);
      std::vector<dyn_tensor> in = grad_check::inputs(b, {{"seq", seq}}, rng);
      in[2] = scalar_i64(s);
      grad_check::check(b, loss, {x, u}, in);
    }
}

TEST_CASE("set_dimension_size: the seed's dynamic sum, sizes checked before anything runs") {
  // func @dynamic_sum(%data: tensor<4xi32>, %batch_size: tensor<i32>): the sum of the first
  // batch_size elements.
  g::builder b;
  auto data = b.parameter("data", shape::make(dtype::i32, {dim::named("d", 4)}));
  auto batch_size = b.parameter("batch_size", shape::make(dtype::i32, {}));
  const g::value dynamic_data = g::set_dimension_size(data, "d", batch_size, "n");
  CHECK(dynamic_data.shape().to_string() == "i32[n<=4]");
  const g::value sum = g::sum(dynamic_data, {"n"});
  auto ex = g::compile(b, {sum, dynamic_data});
  dyn_tensor in(data.shape());
  for (std::int32_t i = 0; i < 4; ++i) in.data<std::int32_t>()[i] = i + 1;
  CHECK(ex.run({in, scalar_i32(2)})[0].data<std::int32_t>()[0] == 3);
  CHECK(ex.run({in, scalar_i32(3)})[0].data<std::int32_t>()[0] == 6);
  const std::vector<dyn_tensor> r = ex.run({in, scalar_i32(0)});
  CHECK(r[0].data<std::int32_t>()[0] == 0);
  CHECK(r[1].extent("n") == 0);  // the result's true extent
  const std::size_t made = ex.stats().total;
  CHECK_THROWS_WITH_AS(ex.run({in, scalar_i32(5)}),
                       "nax::graph::set_dimension_size: axis 'n': size 5 exceeds its bound 4",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({in, scalar_i32(-1)}),
                       "nax::graph::set_dimension_size: axis 'n': size -1 is negative",
                       nax::shape_error);
  CHECK(ex.stats().total == made);  // refused before specializing
  CHECK_THROWS_WITH_AS(ex.pre_specialize({nax::bindings{{"n", 7}}}),
                       "nax::graph::set_dimension_size: axis 'n': size 7 exceeds its bound 4",
                       nax::shape_error);
}

TEST_CASE("set_dimension_size: a padded batch served at its real size, under every policy") {
  // Requests padded to a batch of 8; the real count is a run-time value. Only the real rows are
  // normalized and reduced; the results have the real count of rows.
  g::builder b;
  const dim h = dim::named("h", 5);
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("slots", 8), h}));
  auto count = b.parameter("count", shape::make(dtype::i64, {}));
  auto gamma = b.parameter("gamma", shape::make(dtype::f32, {h}));
  const g::value real = g::set_dimension_size(x, "slots", count, "batch");
  const g::value outs[] = {g::layer_norm(real, gamma, gamma, "h", 1e-5), g::softmax(real, "batch"),
                           g::sum(real, {"batch"}), g::get_dimension_size(real, "batch")};
  std::mt19937 rng(4);
  auto exact = g::compile(b, outs);
  for (g::size_policy policy : {g::size_policy::buckets, g::size_policy::bound}) {
    g::compile_options o;
    o.bounded = {policy};
    auto ex = g::compile(b, outs, o);
    for (std::int64_t n = 0; n <= 8; ++n) {
      CAPTURE(n);
      const std::vector<dyn_tensor> in = {reference::random_tensor(x.shape(), rng), scalar_i64(n),
                                          reference::random_tensor(gamma.shape(), rng)};
      check_runs(b, outs, exact, in, 1e-5);
      const std::vector<dyn_tensor> want = exact.run(in), got = ex.run(in);
      for (std::size_t k = 0; k < got.size(); ++k) {
        CHECK(got[k].shape() == want[k].shape());
        CHECK(same_bits(got[k], want[k]));
      }
      CHECK(got[3].data<std::int32_t>()[0] == n);
    }
  }
}

TEST_CASE("set_dimension_size: sizes from extents, above the operand's extent, and gradients") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {dim::bounded("seq", 8), dim::named("h", 3)}));
  auto extra = b.parameter("extra", shape::make(dtype::i32, {}));
  const g::value size = g::min(g::get_dimension_size(x, "seq") + extra, b.constant(8, dtype::i32));
  const g::value grown = g::set_dimension_size(x, "seq", size, "n");  // zeros past seq
  const g::value outs[] = {grown, g::sum(g::exp(grown), {"n"})};
  auto ex = g::compile(b, outs);
  std::mt19937 rng(5);
  for (std::size_t seq : {0u, 3u, 8u})
    for (std::int32_t e : {0, 2, 9}) {
      CAPTURE(seq);
      CAPTURE(e);
      const std::vector<dyn_tensor> in = {
          reference::random_tensor(x.shape().resolve({{"seq", seq}}), rng), scalar_i32(e)};
      check_runs(b, outs, ex, in, 1e-12);
      CHECK(ex.run(in)[0].extent("n") ==
            std::min<std::size_t>(seq + static_cast<std::size_t>(e), 8));
    }
  // Gradients along a static axis: the cotangent back into the first entries, zeros after.
  g::builder gb;
  auto y = gb.parameter("y", shape::make(dtype::f64, {dim::named("d", 6), dim::named("h", 3)}));
  auto k = gb.parameter("k", shape::make(dtype::i64, {}));
  const g::value cut = g::set_dimension_size(g::tanh(y), "d", k, "m");
  const g::value loss = g::sum(g::exp(cut) * cut, {0, 1});
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{4}, std::int64_t{6}}) {
    CAPTURE(n);
    std::vector<dyn_tensor> in = grad_check::inputs(gb, {}, rng);
    in[1] = scalar_i64(n);
    grad_check::check(gb, loss, {y}, in);
  }
}

TEST_CASE("concat along bounded axes: the seed's self-concat and its runtime size") {
  // func @self_concat_size(%data: tensor<?xi32, bounds = [16]>): the size of concat(data, data).
  g::builder b;
  auto data = b.parameter("data", shape::make(dtype::i32, {dim::bounded("n", 16)}));
  auto tail = b.parameter("tail", shape::make(dtype::i32, {dim::named("n", 3)}));
  const g::value concat = g::concat({data, data}, "n", "joined");
  CHECK(concat.shape().to_string() == "i32[joined<=32]");
  const g::value mixed = g::concat({data, tail, data}, 0, "mixed");
  CHECK(mixed.shape().to_string() == "i32[mixed<=35]");
  const g::value outs[] = {g::get_dimension_size(concat, "joined"), concat, mixed};
  {  // Each operand's part of a cotangent would have a run-time place and extent.
    g::builder gb;
    auto f = gb.parameter("f", shape::make(dtype::f32, {dim::bounded("m", 4)}));
    const g::value joined = g::concat({f, f}, "m", "j");
    CHECK_THROWS_WITH_AS(g::grad(g::sum(joined, {0}), {f}),
                         doctest::Contains("no VJP for a concat along dynamic axes (f32[j<=8])"),
                         nax::shape_error);
  }
  auto exact = g::compile(b, outs);
  for (g::size_policy policy :
       {g::size_policy::exact, g::size_policy::buckets, g::size_policy::bound}) {
    g::compile_options o;
    o.bounded = {policy};
    auto ex = g::compile(b, outs, o);
    for (std::size_t n : {0u, 1u, 3u, 5u, 7u, 16u}) {
      CAPTURE(n);
      std::vector<dyn_tensor> in = {dyn_tensor(data.shape().resolve({{"n", n}})),
                                    dyn_tensor(tail.shape())};
      for (std::size_t i = 0; i < n; ++i)
        in[0].data<std::int32_t>()[i] = static_cast<std::int32_t>(i * 7);
      for (std::size_t i = 0; i < 3; ++i) in[1].data<std::int32_t>()[i] = -1;
      check_runs(b, outs, ex, in);
      const std::vector<dyn_tensor> r = ex.run(in);
      CHECK(r[0].data<std::int32_t>()[0] == static_cast<std::int32_t>(2 * n));
      CHECK(r[1].extent("joined") == 2 * n);
      CHECK(r[2].extent("mixed") == 2 * n + 3);
      const std::vector<dyn_tensor> want = exact.run(in);
      for (std::size_t k = 0; k < r.size(); ++k) CHECK(same_bits(r[k], want[k]));
    }
  }
}

TEST_CASE("value axes: only those the outputs reach are computed; an overflow is an error") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("d", 4)}));
  auto count = b.parameter("count", shape::make(dtype::i64, {}));
  const g::value cut = g::set_dimension_size(x, "d", count * 4, "n");
  auto unreached = g::compile(b, {g::tanh(x)});  // never reads count
  CHECK(unreached.program().value_axes.empty());
  CHECK(unreached.run({dyn_tensor(x.shape()), scalar_i64(99)})[0].extent("d") == 4);
  auto ex = g::compile(b, {cut});
  CHECK(ex.run({dyn_tensor(x.shape()), scalar_i64(1)})[0].extent("n") == 4);
  // 2^62 + 1 times 4 wraps to 4 in 64 bits: refused, not taken for 4.
  CHECK_THROWS_WITH_AS(ex.run({dyn_tensor(x.shape()), scalar_i64((std::int64_t{1} << 62) + 1)}),
                       "nax::graph::set_dimension_size: axis 'n': its size overflows int64",
                       nax::shape_error);
}

TEST_CASE("set_dimension_size of a prefix moves no data; past the extent it zero-fills") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("d", 6), dim::named("h", 3)}));
  auto k = b.parameter("k", shape::make(dtype::i32, {}));
  auto y = b.parameter("y", shape::make(dtype::f32, {dim::bounded("s", 4), dim::named("h", 3)}));
  const g::value cut = g::set_dimension_size(g::tanh(x), "d", k, "m");    // a prefix of tanh(x)
  const g::value grown = g::set_dimension_size(g::tanh(y), "s", k, "r");  // may pass y's extent
  const g::value outs[] = {g::exp(cut), g::exp(grown)};
  auto ex = g::compile(b, outs, {.fusion = false});
  std::mt19937 rng(8);
  for (std::int32_t n : {0, 2, 4}) {
    CAPTURE(n);
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(x.shape(), rng), scalar_i32(n),
        reference::random_tensor(y.shape().resolve({{"s", 2}}), rng)};
    check_runs(b, outs, ex, in, 1e-6);
  }
  // The cut's step does nothing (its result is tanh(x)'s buffer); the grown one's copies.
  const auto spec = ex.cached(nax::bindings{{"s", 2}, {"m", 4}, {"r", 4}});
  REQUIRE(spec != nullptr);
  const nax::graph::program& p = ex.program();
  int idle = 0, moving = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    if (p.steps[s].kind() == g::op_kind::set_dimension_size)
      (spec->kernels[s]->does_nothing() ? idle : moving) += 1;
  CHECK(idle == 1);
  CHECK(moving == 1);
}

TEST_CASE("a prefix or a reshape of an input or a result is a view of the caller's buffer") {
  g::builder b;
  auto cache =
      b.parameter("cache", shape::make(dtype::f32, {dim::bounded("pos", 8), dim::named("h", 3)}));
  auto row =
      b.parameter("row", shape::make(dtype::f32, {dim::named("pos", 1), dim::named("h", 3)}));
  auto at = b.parameter("at", shape::make(dtype::i32, {}));
  auto x = b.parameter("x", shape::make(dtype::f32, {dim::named("a", 2), dim::named("c", 6)}));
  // A KV cache's pattern: the row written at `at` (a result), then its first at + 1 positions.
  const g::value written = g::dynamic_update_slice(cache, row, "pos", at);
  const g::value live = g::set_dimension_size(written, "pos", at + 1, "n");
  const g::value split = g::reshape(
      x, shape::make(dtype::f32, {dim::named("a", 2), dim::named("p", 2), dim::named("q", 3)}));
  const g::value outs[] = {written, g::sum(g::exp(live), {"n"}), g::tanh(split),
                           g::exp(g::set_dimension_size(cache, "pos", at, "m"))};
  auto ex = g::compile(b, outs, {.fusion = false});
  std::mt19937 rng(10);
  for (std::int32_t n : {0, 3, 7}) {
    CAPTURE(n);
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(cache.shape().resolve({{"pos", 8}}), rng),
        reference::random_tensor(row.shape(), rng), scalar_i32(n),
        reference::random_tensor(x.shape(), rng)};
    check_runs(b, outs, ex, in, 1e-6);
    // Into outputs the caller gives (the views then point into them).
    std::vector<dyn_tensor> given = ex.run(in);
    for (dyn_tensor& t : given)
      if (t.bytes()) std::memset(t.data(), 0, t.bytes());  // (an empty one has no data)
    ex.run(in, given);
    const std::vector<dyn_tensor> want = ex.run(in);
    for (std::size_t k = 0; k < given.size(); ++k) CHECK(same_bits(given[k], want[k]));
  }
  // No step copies: the three views do nothing, and the arena holds none of their bytes.
  const auto spec = ex.cached(nax::bindings{{"pos", 8}, {"n", 8}, {"m", 7}});
  REQUIRE(spec != nullptr);
  const nax::graph::program& p = ex.program();
  int idle = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    if (p.steps[s].kind() == g::op_kind::set_dimension_size ||
        p.steps[s].kind() == g::op_kind::reshape)
      idle += spec->kernels[s]->does_nothing() ? 1 : 0;
  CHECK(idle == 3);
  CHECK(spec->views.size() == 3);
}

TEST_CASE("pad by run-time amounts: XLA's dynamic_pad with a bound") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {dim::bounded("seq", 8), dim::named("h", 2)}));
  auto low = b.parameter("low", shape::make(dtype::i64, {}));
  auto high = b.parameter("high", shape::make(dtype::i64, {}));
  const g::value padded = g::pad(x, "seq", low, high, -1.0, "padded", 16);
  CHECK(padded.shape().to_string() == "f64[padded<=16, 2]");
  const g::value outs[] = {padded, g::sum(padded, {"padded"})};
  auto exact = g::compile(b, outs);
  g::compile_options o;
  o.bounded = {g::size_policy::bound};
  auto bound = g::compile(b, outs, o);
  std::mt19937 rng(9);
  for (std::size_t seq : {0u, 3u, 8u})
    for (std::int64_t l : {std::int64_t{0}, std::int64_t{2}})
      for (std::int64_t h : {std::int64_t{0}, std::int64_t{5}}) {
        CAPTURE(seq);
        CAPTURE(l);
        CAPTURE(h);
        const std::vector<dyn_tensor> in = {
            reference::random_tensor(x.shape().resolve({{"seq", seq}}), rng), scalar_i64(l),
            scalar_i64(h)};
        check_runs(b, outs, exact, in, 1e-12);
        const std::vector<dyn_tensor> r = exact.run(in), q = bound.run(in);
        const std::size_t n = static_cast<std::size_t>(l + h) + seq;
        CHECK(r[0].extent("padded") == n);
        if (l > 0) CHECK(r[0].data<double>()[0] == -1.0);
        if (seq > 0)
          CHECK(r[0].data<double>()[static_cast<std::size_t>(l) * 2] == in[0].data<double>()[0]);
        for (std::size_t k = 0; k < r.size(); ++k) CHECK(same_bits(r[k], q[k]));
      }
  const dyn_tensor x8(x.shape().resolve({{"seq", 8}}));
  CHECK_THROWS_WITH_AS(exact.run({x8, scalar_i64(5), scalar_i64(4)}),
                       "nax::graph::pad: axis 'padded': size 17 exceeds its bound 16",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(exact.run({x8, scalar_i64(-1), scalar_i64(4)}),
                       "nax::graph::pad: axis 'padded': a part of its size is negative (-1)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::pad(x, "seq", low, high, 0.0, "p2", 7),
                       "nax::graph::pad(f64[seq<=8, 2]): the bound 7 of the padded axis is below "
                       "the bound 8 of axis 'seq'",
                       nax::shape_error);
  auto low32 = b.parameter("low32", shape::make(dtype::i32, {}));
  CHECK_THROWS_WITH_AS(g::pad(x, "seq", low32, high, 0.0, "p3", 20),
                       "nax::graph::pad(f64[seq<=8, 2]): the amounts have two types: low is "
                       "i32[], high is i64[]",
                       nax::shape_error);
  // Gradients along a static axis: the cotangent of x's entries where they were placed.
  g::builder gb;
  auto z = gb.parameter("z", shape::make(dtype::f64, {dim::named("d", 3), dim::named("h", 2)}));
  auto zl = gb.parameter("zl", shape::make(dtype::i64, {}));
  auto zh = gb.parameter("zh", shape::make(dtype::i64, {}));
  const g::value zp = g::pad(g::tanh(z), "d", zl, zh, 0.5, "zp", 9);
  const g::value loss = g::sum(g::exp(zp) * zp, {0, 1});
  for (std::int64_t l : {std::int64_t{0}, std::int64_t{3}}) {
    CAPTURE(l);
    std::vector<dyn_tensor> in = grad_check::inputs(gb, {}, rng);
    in[1] = scalar_i64(l);
    in[2] = scalar_i64(2);
    grad_check::check(gb, loss, {z}, in);
  }
}
