// take and scatter_add by run-time indices (graph/infer/take.hpp, runtime/steps/take.hpp): shapes
// by name, runs against the reference (int32 and int64 indices, repeated ones, several index
// axes, an axis in the middle, empty index tensors, ids over a bounded axis under each size
// policy), the out-of-range message, and gradients:
// take's is a scatter-add (repeated indices accumulate), checked by finite differences.
#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "../graph/grad_check.hpp"
#include "reference.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

template <class I>
dyn_tensor indices(const shape& s, const std::vector<std::int64_t>& v) {
  dyn_tensor t(s);
  REQUIRE(t.size() == v.size());
  for (std::size_t i = 0; i < v.size(); ++i) static_cast<I*>(t.data())[i] = static_cast<I>(v[i]);
  return t;
}

dyn_tensor counting(const shape& s) {
  dyn_tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (s.dtype() == dtype::f32)
      static_cast<float*>(t.data())[i] = static_cast<float>(i) * 0.5f - 1.f;
    else
      static_cast<double*>(t.data())[i] = static_cast<double>(i) * 0.5 - 1.;
  }
  return t;
}

// Every output of b's `outs` is the reference's, exactly but for the last (`last_tolerance`: an
// exp computed in float).
void check_runs(g::builder& b, std::span<const g::value> outs, const std::vector<dyn_tensor>& in,
                double last_tolerance) {
  for (bool fusion : {true, false}) {
    auto ex = g::compile(b, outs, {.fusion = fusion});
    const std::vector<dyn_tensor> got = ex.run(in);
    const std::vector<reference::dense> all = reference::evaluate(b, in);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      CAPTURE(k);
      const reference::dense& want = all[outs[k].id()];
      CHECK(got[k].shape() == want.shape);
      CHECK(reference::max_error(got[k], want) <= (k + 1 == outs.size() ? last_tolerance : 0));
    }
  }
}

}  // namespace

TEST_CASE("take's shape: the indices' axes in place of the axis") {
  g::builder b;
  auto emb = b.parameter("emb", shape::make(dtype::f32, {dim::named("vocab", 10), dim::named("model", 4)}));
  auto ids = b.parameter("ids", shape::make(dtype::i32, {"batch", "seq"}));
  CHECK(g::take(emb, "vocab", ids).shape() ==
        shape::make(dtype::f32, {"batch", "seq", dim::named("model", 4)}));
  auto x = b.parameter("x", shape::make(dtype::f64, {"head", "vocab", dim::named("model", 4)}));
  auto one = b.parameter("one", shape::make(dtype::i64, {}));
  CHECK(g::take(x, "vocab", one).shape() ==
        shape::make(dtype::f64, {"head", dim::named("model", 4)}));
  CHECK(g::take(x, 1, ids).shape() ==
        shape::make(dtype::f64, {"head", "batch", "seq", dim::named("model", 4)}));
  // Float indices; indices that name an axis the operand keeps.
  auto f = b.parameter("f", shape::make(dtype::f32, {"batch"}));
  CHECK_THROWS_WITH_AS(g::take(emb, "vocab", f), doctest::Contains("the indices must be i32 or i64"),
                       nax::shape_error);
  auto h = b.parameter("h", shape::make(dtype::i32, {"head"}));
  CHECK_THROWS_WITH_AS(g::take(x, "vocab", h),
                       doctest::Contains("the indices' axis 'head' is also an axis of the operand"),
                       nax::shape_error);
  CHECK_THROWS_AS(g::take(emb, "nope", ids), nax::shape_error);
  // scatter_add's updates must have take's shape.
  CHECK_THROWS_WITH_AS(g::scatter_add(emb, "vocab", ids, emb), doctest::Contains("the updates are"),
                       nax::shape_error);
}

TEST_CASE_TEMPLATE("take and scatter_add run as the reference does, repeated indices too", I,
                   std::int32_t, std::int64_t) {
  const dtype it = sizeof(I) == 8 ? dtype::i64 : dtype::i32;
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"head", "vocab", dim::named("model", 3)}));
  auto ids = b.parameter("ids", shape::make(it, {"batch", "seq"}));
  auto y = g::take(x, "vocab", ids);
  auto u = b.parameter("u", y.shape());
  auto s = g::scatter_add(x, "vocab", ids, u);
  auto z = g::take(g::exp(x) * 2.0, "vocab", ids) + 1.0;  // between fused groups
  const g::value outs[] = {y, s, z};
  const shape xs = shape::make(dtype::f32, {dim::named("head", 2), dim::named("vocab", 5),
                                            dim::named("model", 3)});
  const shape is = shape::make(it, {dim::named("batch", 2), dim::named("seq", 3)});
  const std::vector<dyn_tensor> in{counting(xs), indices<I>(is, {4, 0, 4, 2, 2, 1}),
                                   counting(y.shape().resolve({{"head", 2}, {"batch", 2},
                                                               {"seq", 3}}))};
  check_runs(b, outs, in, 1e-6);
  // Against a plain loop: y[h, b, s, m] = x[h, ids[b, s], m].
  auto ex = g::compile(b, {y, s});
  const std::vector<dyn_tensor> got = ex.run(in);
  const auto* xv = static_cast<const float*>(in[0].data());
  const auto* iv = static_cast<const I*>(in[1].data());
  const auto* uv = static_cast<const float*>(in[2].data());
  const auto* yv = static_cast<const float*>(got[0].data());
  std::vector<float> want(xv, xv + 30);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t j = 0; j < 6; ++j)
      for (std::size_t m = 0; m < 3; ++m) {
        const auto v = static_cast<std::size_t>(iv[j]);
        CHECK(yv[(h * 6 + j) * 3 + m] == xv[(h * 5 + v) * 3 + m]);
        want[(h * 5 + v) * 3 + m] += uv[(h * 6 + j) * 3 + m];
      }
  for (std::size_t k = 0; k < want.size(); ++k)
    CHECK(static_cast<const float*>(got[1].data())[k] == doctest::Approx(want[k]));
  // Empty index tensors: an empty take, and scatter_add gives the operand back.
  const shape none = shape::make(it, {dim::named("batch", 2), dim::named("seq", 0)});
  std::vector<dyn_tensor> empty{counting(xs), dyn_tensor(none),
                                dyn_tensor(y.shape().resolve({{"head", 2}, {"batch", 2}, {"seq", 0}}))};
  const std::vector<dyn_tensor> e = ex.run(empty);
  CHECK(e[0].size() == 0);
  CHECK(std::memcmp(e[1].data(), empty[0].data(), empty[0].bytes()) == 0);
}

TEST_CASE("take: an index outside the axis, negative ones too, is an error naming it") {
  g::builder b;
  auto emb = b.parameter("emb", shape::make(dtype::f32, {"vocab", dim::named("model", 2)}));
  auto ids = b.parameter("ids", shape::make(dtype::i64, {"batch", "seq"}));
  auto ex = g::compile(b, {g::take(emb, "vocab", ids)});
  const shape es = shape::make(dtype::f32, {dim::named("vocab", 5), dim::named("model", 2)});
  const shape is = shape::make(dtype::i64, {dim::named("batch", 2), dim::named("seq", 3)});
  CHECK_THROWS_WITH_AS(ex.run({counting(es), indices<std::int64_t>(is, {0, 1, 2, 3, 4, 7})}),
                       "nax::graph::take: index 7 at [batch=1, seq=2] is outside vocab's extent 5",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(ex.run({counting(es), indices<std::int64_t>(is, {0, -1, 2, 3, 4, 0})}),
                       "nax::graph::take: index -1 at [batch=0, seq=1] is outside vocab's extent 5",
                       nax::shape_error);
  // The executable still runs afterwards.
  const auto r = ex.run({counting(es), indices<std::int64_t>(is, {4, 4, 4, 0, 0, 0})});
  CHECK(static_cast<const float*>(r[0].data())[0] == 3.f);
}

TEST_CASE("take's gradient is a scatter-add: repeated indices accumulate") {
  std::mt19937 rng(7);
  for (dtype it : {dtype::i32, dtype::i64}) {
    g::builder b;
    auto x = b.parameter("x", shape::make(dtype::f64, {"head", "vocab", dim::named("model", 3)}));
    auto ids = b.parameter("ids", shape::make(it, {"batch", "seq"}));
    auto w = b.parameter("w", shape::make(dtype::f64, {"head", "batch", "seq", dim::named("model", 3)}));
    auto y = g::take(x, "vocab", ids);
    auto loss = g::sum(g::tanh(y) * w, {0, 1, 2, 3});
    const nax::bindings bind{{"head", 2}, {"vocab", 5}, {"batch", 2}, {"seq", 3}};
    std::vector<dyn_tensor> in = grad_check::inputs(b, bind, rng);
    const std::vector<std::int64_t> v{4, 0, 4, 2, 4, 1};  // 4 three times, 3 never
    in[1] = it == dtype::i64 ? indices<std::int64_t>(in[1].shape(), v)
                             : indices<std::int32_t>(in[1].shape(), v);
    const std::vector<dyn_tensor> gr = grad_check::check(b, loss, {x, w}, in);
    // Row 3 of vocab is never taken: zero gradient.
    const auto* gx = static_cast<const double*>(gr[0].data());
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t m = 0; m < 3; ++m) CHECK(gx[(h * 5 + 3) * 3 + m] == 0);
  }
}

TEST_CASE("scatter_add's gradients: the operand's whole, the updates' read at the indices") {
  std::mt19937 rng(8);
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {"vocab", dim::named("model", 2)}));
  auto ids = b.parameter("ids", shape::make(dtype::i32, {"seq"}));
  auto u = b.parameter("u", shape::make(dtype::f64, {"seq", dim::named("model", 2)}));
  auto s = g::scatter_add(x, "vocab", ids, u);
  auto loss = g::sum(s * s * g::tanh(s), {0, 1});
  std::vector<dyn_tensor> in = grad_check::inputs(b, {{"vocab", 4}, {"seq", 5}}, rng);
  in[1] = indices<std::int32_t>(in[1].shape(), {1, 3, 1, 1, 0});
  grad_check::check(b, loss, {x, u}, in);
}

TEST_CASE("take of ids over a bounded axis, under every size policy: the real extent's rows") {
  g::builder b;
  auto emb = b.parameter("emb", shape::make(dtype::f32, {dim::named("vocab", 6), dim::named("model", 2)}));
  auto ids = b.parameter("ids", shape::make(dtype::i64, {dim::bounded("seq", 8)}));
  auto y = g::take(emb, "vocab", ids);
  const g::value outs[] = {y, g::grad(g::sum(y * y, {0, 1}), {emb})[0]};
  for (g::size_policy policy :
       {g::size_policy::exact, g::size_policy::buckets, g::size_policy::bound}) {
    g::compile_options o;
    o.bounded = {policy};
    auto ex = g::compile(b, outs, o);
    for (std::size_t n : {1u, 3u, 8u, 2u}) {
      CAPTURE(n);
      std::vector<std::int64_t> v;
      for (std::size_t k = 0; k < n; ++k) v.push_back(static_cast<std::int64_t>((k * 5 + 1) % 6));
      const std::vector<dyn_tensor> in{
          counting(shape::make(dtype::f32, {dim::named("vocab", 6), dim::named("model", 2)})),
          indices<std::int64_t>(shape::make(dtype::i64, {dim::named("seq", n)}), v)};
      const std::vector<dyn_tensor> got = ex.run(in);
      const std::vector<reference::dense> all = reference::evaluate(b, in);
      for (std::size_t k = 0; k < 2; ++k) {
        CHECK(got[k].shape() == all[outs[k].id()].shape);
        CHECK(reference::max_error(got[k], all[outs[k].id()]) == 0);
      }
    }
  }
}
