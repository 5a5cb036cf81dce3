// The graph's tensors made from a rule (graph/infer/generate.hpp, graph/infer/arg_reduce.hpp,
// the free functions of graph/ops.hpp): full, iota, eye, tril, random, argmax, argmin, one_hot.
// Their shapes and errors; runs against the plain reference and against the typed layer's bits,
// on one and two threads; CSE keeps random nodes of other keys apart.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/typed/random.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "../runtime/reference.hpp"
#include "support/threads.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

namespace {

using nax_test::threads_guard;

void check_against_reference(const g::builder& b, const std::vector<g::value>& outs,
                             const std::vector<nax::dyn_tensor>& in) {
  auto ex = g::compile(b, outs);
  const std::vector<nax::dyn_tensor> got = ex.run(std::span<const nax::dyn_tensor>(in));
  const std::vector<reference::dense> want =
      reference::evaluate(b, std::span<const nax::dyn_tensor>(in));
  REQUIRE(got.size() == outs.size());
  for (std::size_t o = 0; o < outs.size(); ++o) {
    CAPTURE(o);
    const reference::dense& w = want[outs[o].id()];
    REQUIRE(got[o].shape() == w.shape);
    for (std::size_t i = 0; i < w.v.size(); ++i) {
      CAPTURE(i);
      // The reference computes in double: one f32 op rounded once is the f32 op's result.
      const double want_i = w.shape.dtype() == dtype::f32 ? static_cast<float>(w.v[i]) : w.v[i];
      const double got_i = reference::read_any(got[o], i);
      REQUIRE((got_i == want_i || (std::isnan(got_i) && std::isnan(want_i))));
    }
  }
}

}  // namespace

TEST_CASE("shapes: given, or taken from an operand's axes") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::bounded("seq", 16), 8}));
  CHECK(g::zeros_like(x).shape().to_string() == "f32[batch, seq<=16, 8]");
  CHECK(g::full(b, shape::make(dtype::i32, {"batch", 3}), 7).shape().to_string() ==
        "i32[batch, 3]");
  CHECK(g::iota(x, "seq").shape().to_string() == "i64[seq<=16]");
  CHECK(g::iota(x, 2, dtype::f32).shape().to_string() == "f32[8]");
  CHECK(g::iota(b, shape::make(dtype::i32, {"batch", 4}), 1).shape().to_string() ==
        "i32[batch, 4]");
  CHECK(g::tril(x, "seq", "batch").shape().to_string() == "bool[seq<=16, batch]");
  CHECK(g::eye(x, "batch", "seq", dtype::f64).shape().to_string() == "f64[batch, seq<=16]");
  CHECK(g::uniform_like(x, 1).shape().to_string() == "f32[batch, seq<=16, 8]");
  CHECK(g::argmax(x, "seq").shape().to_string() == "i64[batch, 8]");
  CHECK(g::argmin(x, 0).shape().to_string() == "i64[seq<=16, 8]");
  auto ids = b.parameter("ids", shape::make(dtype::i32, {"batch"}));
  const g::value hot = g::one_hot(ids, dim::named("vocab", 10));
  CHECK(hot.shape().to_string() == "f32[batch, 10]");
  CHECK(hot.shape()[1].name() == "vocab");
  CHECK(g::one_hot(ids, "seq", dtype::boolean).shape().to_string() == "bool[batch, seq]");
  CHECK(g::op_label(b.at(g::argmin(x, 0).id()).op) == "argmin");
  CHECK(g::op_label(b.at(g::normal_like(x, 1).id()).op) == "random_normal");
}

TEST_CASE("errors name the op, the operand and the axis") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", 0, 4}));
  auto m = b.parameter("m", shape::make(dtype::boolean, {"batch"}));
  auto f = b.parameter("f", shape::make(dtype::f32, {"batch"}));
  CHECK_THROWS_WITH_AS(g::argmax(x, "seq"),
                       "nax::graph::argmax: operand 0 (f32[batch, 0, 4]) has no axis 'seq'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::argmin(x, 1), "nax::graph::argmin: axis 1 of f32[batch, 0, 4] is empty",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::argmax(m, 0),
                       "nax::graph::argmax: needs f32, f64, i32 or i64 elements, not bool[batch]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::iota(x, "hidden"),
                       "nax::graph::iota: f32[batch, 0, 4] has no axis 'hidden'", nax::shape_error);
  CHECK_THROWS_WITH_AS(g::iota(b, shape::make(dtype::f32, {dim(), 3}), 1),
                       doctest::Contains("nax::graph::iota(f32[?, 3]): dimension 0 is dynamic "
                                         "without a name"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::iota(b, shape::make(dtype::boolean, {3}), 0),
                       "nax::graph::iota: needs f32, f64, i32 or i64 elements, not bool[3]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::uniform(b, shape::make(dtype::i32, {3}), 1),
                       "nax::graph::random_uniform: needs f32 or f64 elements, not i32[3]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::normal(b, shape::make(dtype::f32, {3}), 1, 0, -2),
                       "nax::graph::random_normal: stddev (-2.000000) is negative",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(g::one_hot(f, dim::named("vocab", 3)),
                       "nax::graph::one_hot: the indices must be i32 or i64, not f32[batch]",
                       nax::shape_error);
  auto ids = b.parameter("ids", shape::make(dtype::i64, {"batch"}));
  CHECK_THROWS_WITH_AS(g::one_hot(ids, dim::named("batch", 3)),
                       "nax::graph::one_hot: the indices i64[batch] already have an axis 'batch'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::one_hot(ids, dim(5)),
                       "nax::graph::one_hot: the new axis (5) needs a name", nax::shape_error);
}

TEST_CASE("iota, eye, tril, full, argmax, argmin and one_hot run as the reference does") {
  g::builder b;
  const dim h = dim::named("h", 5);
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq", h}));
  auto ids = b.parameter("ids", shape::make(dtype::i64, {"batch", "seq"}));
  const std::vector<g::value> outs = {
      g::argmax(x, "seq"),
      g::argmin(x, "h"),
      g::argmax(x * -1.0, 0),  // of a fused elementwise node
      g::iota(x, "seq", dtype::f32),
      g::iota(b, shape::make(dtype::i32, {"batch", "seq", h}), "seq"),
      g::eye(x, "seq", "h", dtype::f64),
      g::tril(x, "seq", "h", dtype::i32),
      g::tril(x, "h", "seq"),
      g::full_like(x, 2.5) + x,
      g::one_hot(ids, dim::named("vocab", 6)),
      g::one_hot(ids, h, dtype::i64),
      g::uniform_like(x, {3, 1}, -1, 1) + x,
  };
  for (std::size_t batch : {1u, 3u})
    for (std::size_t seq : {4u, 7u}) {
      CAPTURE(batch);
      CAPTURE(seq);
      std::mt19937 rng(static_cast<unsigned>(batch * 10 + seq));
      std::vector<nax::dyn_tensor> in;
      in.push_back(reference::random_tensor(
          shape::make(dtype::f32, {dim::named("batch", batch), dim::named("seq", seq), h}), rng));
      nax::dyn_tensor i(
          shape::make(dtype::i64, {dim::named("batch", batch), dim::named("seq", seq)}));
      for (std::size_t k = 0; k < i.size(); ++k)
        i.data<std::int64_t>()[k] = static_cast<std::int64_t>(k % 9) - 1;  // -1 and 6, 7: zeros
      in.push_back(i);
      // A tie along seq and a NaN along h.
      float* xv = in[0].data<float>();
      xv[0] = xv[5] = 10.f;
      xv[7] = std::numeric_limits<float>::quiet_NaN();
      check_against_reference(b, outs, in);
    }
}

TEST_CASE("random nodes give the typed layer's bits, on one and two threads") {
  threads_guard guard;
  using batch = nax::axis<"batch">;
  using hidden = nax::axis<"hidden", 100>;
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {"batch", dim::named("hidden", 100)}));
  auto u = g::uniform_like(x, {9, 2}, -3, 3);
  auto n = g::normal(b, shape::make(dtype::f32, {"batch", dim::named("hidden", 100)}), 9, 1, 2);
  auto t = g::truncated_normal_like(x, 9);
  auto ex = g::compile(b, {u, n, t});
  nax::dyn_tensor in(
      shape::make(dtype::f64, {dim::named("batch", 700), dim::named("hidden", 100)}));
  const auto tu = nax::uniform<double, batch, hidden>({9, 2}, -3, 3, batch(700));
  const auto tn = nax::normal<float, batch, hidden>(9, 1, 2, batch(700));
  const auto tt = nax::truncated_normal<double, batch, hidden>(9, 0, 1, batch(700));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    nax::set_num_threads(threads);
    const std::vector<nax::dyn_tensor> out = ex.run({in});
    CHECK(std::memcmp(out[0].data<double>(), tu.data(), tu.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(out[1].data<float>(), tn.data(), tn.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(out[2].data<double>(), tt.data(), tt.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("CSE merges random nodes of one key and keeps other keys apart") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch"}));
  auto same = g::uniform_like(x, 1) + g::uniform_like(x, 1);
  auto other = g::uniform_like(x, 1) - g::uniform_like(x, {1, 1});
  auto ex = g::compile(b, {same, other});
  std::size_t random_steps = 0;
  for (const g::program_step& s : ex.program().steps)
    random_steps += s.kind() == g::op_kind::random;
  CHECK(random_steps == 2);
  CHECK(ex.to_dot().find("random_uniform") != std::string::npos);
  nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", 50)}));
  const auto out = ex.run({in});
  bool differ = false;
  for (std::size_t i = 0; i < 50; ++i) differ |= out[1].data<float>()[i] != 0.f;
  CHECK(differ);  // stream 1 is not stream 0
}

TEST_CASE("argmax along an axis bound to 0 throws when the executable specializes") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq"}));
  auto ex = g::compile(b, {g::argmax(x, "seq")});
  nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("batch", 2), dim::named("seq", 0)}));
  CHECK_THROWS_WITH_AS(ex.run({in}),
                       "nax::executable: argmax along axis 'seq' of f32[2, 0]: the axis is empty",
                       nax::shape_error);
}

TEST_CASE("a tril mask over a renamed axis binds by its source") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"seq", dim::named("d", 2)}));
  auto k = g::rename(x, "seq", "kseq");
  auto scores = g::dot_general(x, k, {{"d", "d"}});
  auto masked = g::where(g::tril(scores, "seq", "kseq"), scores, -1e9);
  auto ex = g::compile(b, {masked});
  nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("seq", 3), dim::named("d", 2)}));
  in.fill(1.f);
  const auto out = ex.run({in});
  REQUIRE(out[0].size() == 9);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c)
      CHECK(out[0].data<float>()[r * 3 + c] == (c <= r ? 2.f : -1e9f));
}
