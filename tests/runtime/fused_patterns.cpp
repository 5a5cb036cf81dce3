// Pattern fusion end to end: dense (GEMM with bias and activation in the epilogue), softmax,
// layer_norm and RMSNorm spelled from primitives, run fused against the reference and against
// the unfused graph (the same bits), for several bindings and both float types; and an MLP block
// built op by op.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "program_kinds.hpp"
#include "reference.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

shape concrete(dtype t, std::initializer_list<std::pair<const char*, std::size_t>> dims) {
  std::vector<dim> d;
  for (const auto& e : dims) d.push_back(dim::named(e.first, e.second));
  return shape(t, std::span<const dim>(d));
}

// Runs `outs` of b fused and unfused on `in`; both against the reference (every node of b
// evaluated on `in`: pass it when several checks share the inputs).
void check(const g::builder& b, std::initializer_list<g::value> outs,
           const std::vector<dyn_tensor>& in, double tol, const std::string& want_kinds,
           const std::vector<reference::dense>* evaluated = nullptr) {
  const std::span<const g::value> o(outs.begin(), outs.size());
  auto fused = g::compile(b, o);
  auto plain = g::compile(b, o, {.fusion = false});
  CHECK(program_kinds(fused.program()) == want_kinds);
  const std::vector<reference::dense> own =
      evaluated ? std::vector<reference::dense>{} : reference::evaluate(b, in);
  const std::vector<reference::dense>& want = evaluated ? *evaluated : own;
  const std::vector<dyn_tensor> got = fused.run(in), base = plain.run(in);
  for (std::size_t i = 0; i < o.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].shape() == want[o[i].id()].shape);
    CHECK(reference::max_error(got[i], want[o[i].id()]) <= tol);
    CHECK(reference::max_error(base[i], want[o[i].id()]) <= tol);
    // Fused and unfused: the same bits.
    REQUIRE(got[i].shape() == base[i].shape());
    CHECK((got[i].bytes() == 0 ||  // (an empty result has no buffer: memcmp of null)
           std::memcmp(got[i].data(), base[i].data(), got[i].bytes()) == 0));
  }
}

double tolerance(dtype t) { return t == dtype::f64 ? 1e-10 : 2e-5; }

}  // namespace

TEST_CASE("fused dense: bias and activation in the GEMM epilogue, every GEMM path") {
  std::mt19937 rng(5);
  for (dtype t : {dtype::f32, dtype::f64}) {
    for (std::size_t batch : {1u, 3u, 70u}) {  // gemv, small, packed
      for (std::size_t n : {1u, 5u, 40u}) {    // n = 1: a transposed gemv (strided rows)
        CAPTURE(nax::name(t));
        CAPTURE(batch);
        CAPTURE(n);
        g::builder b;
        const dim hd = dim::named("h", 48), kd = dim::named("k", n);
        auto x = b.parameter("x", shape::make(t, {"batch", hd}));
        auto w = b.parameter("w", shape::make(t, {hd, kd}));
        auto bias = b.parameter("bias", shape::make(t, {kd}));
        auto d = g::dot_general(x, w, {{1, 0}});
        std::vector<dyn_tensor> in = {
            reference::random_tensor(concrete(t, {{"batch", batch}, {"h", 48}}), rng),
            reference::random_tensor(concrete(t, {{"h", 48}, {"k", n}}), rng),
            reference::random_tensor(concrete(t, {{"k", n}}), rng)};
        check(b, {g::gelu(d + bias)}, in, tolerance(t), "fused_dense");
        check(b, {g::tanh(d)}, in, tolerance(t), "fused_dense");
        check(b, {d + bias}, in, tolerance(t), "fused_dense");
        check(b, {g::exp(g::neg(g::relu(d + bias)))}, in, tolerance(t),
              "fused_dense, fused_elementwise");
      }
    }
  }
}

TEST_CASE("fused dense with batch axes and a transposed operand") {
  std::mt19937 rng(6);
  g::builder b;
  const dim hd = dim::named("h", 16), kd = dim::named("k", 24), hh = dim::named("heads", 3);
  auto x = b.parameter("x", shape::make(dtype::f32, {hh, "seq", hd}));
  auto w = b.parameter("w", shape::make(dtype::f32, {kd, hh, hd}));  // contracted axis last
  auto bias = b.parameter("bias", shape::make(dtype::f32, {kd}));
  auto y = g::silu(g::dot_general(x, w, {{"h", "h"}}, {{"heads", "heads"}}) + bias);
  for (std::size_t seq : {1u, 9u, 33u}) {
    CAPTURE(seq);
    std::vector<dyn_tensor> in = {
        reference::random_tensor(concrete(dtype::f32, {{"heads", 3}, {"seq", seq}, {"h", 16}}),
                                 rng),
        reference::random_tensor(concrete(dtype::f32, {{"k", 24}, {"heads", 3}, {"h", 16}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"k", 24}}), rng)};
    check(b, {y}, in, 2e-5, "fused_dense");
  }
}

TEST_CASE("fused softmax from primitives along the last axis and another one") {
  std::mt19937 rng(7);
  for (dtype t : {dtype::f32, dtype::f64}) {
    g::builder b;
    auto x = b.parameter("x", shape::make(t, {"batch", dim::named("h", 37), "seq"}));
    for (const char* axis : {"seq", "h", "batch"}) {
      CAPTURE(axis);
      auto e = g::exp(x - g::reduce_max(x, {axis}));
      auto y1 = e / g::sum(e, {axis});
      auto e2 = g::exp(x * 3.0);
      auto y2 = e2 * (1.0 / g::sum(e2, {axis}));
      for (std::size_t batch : {1u, 4u}) {
        for (std::size_t seq : {1u, 20u}) {
          CAPTURE(batch);
          CAPTURE(seq);
          std::vector<dyn_tensor> in = {reference::random_tensor(
              concrete(t, {{"batch", batch}, {"h", 37}, {"seq", seq}}), rng, -3, 3)};
          check(b, {y1}, in, tolerance(t), "fused_softmax");
          check(b, {y2}, in, tolerance(t), "elementwise, fused_softmax");
        }
      }
    }
  }
}

namespace {

g::value ln_primitives(g::builder& b, g::value x, const g::value* gamma, const g::value* beta,
                       const char* axis, bool rsqrt, double eps) {
  auto mu = g::mean(x, {axis});
  auto d = x - mu;
  auto var = g::mean(rsqrt ? d * d : g::pow(d, 2.0), {axis});
  auto ve = var + b.constant(eps, x.shape().dtype());
  auto n = rsqrt ? d * g::rsqrt(ve) : d / g::sqrt(ve);
  if (gamma) n = n * *gamma;
  if (beta) n = n + *beta;
  return n;
}

// RMSNorm: x * rsqrt(mean(x * x) + eps), or x / sqrt(mean(pow(x, 2)) + eps), then * gamma.
g::value rms_primitives(g::builder& b, g::value x, const g::value* gamma, const char* axis,
                        bool rsqrt, double eps) {
  auto ve = g::mean(rsqrt ? x * x : g::pow(x, 2.0), {axis}) + b.constant(eps, x.shape().dtype());
  auto n = rsqrt ? x * g::rsqrt(ve) : x / g::sqrt(ve);
  return gamma ? n * *gamma : n;
}

}  // namespace

TEST_CASE("fused layer_norm and RMSNorm from primitives, with and without gamma and beta") {
  std::mt19937 rng(8);
  for (dtype t : {dtype::f32, dtype::f64}) {
    g::builder b;
    const dim hd = dim::named("h", 40);
    auto x = b.parameter("x", shape::make(t, {"batch", hd, "seq"}));
    auto xl = b.parameter("xl", shape::make(t, {"batch", hd}));
    auto gamma = b.parameter("gamma", shape::make(t, {hd}));
    auto beta = b.parameter("beta", shape::make(t, {hd}));
    auto seqg = b.parameter("seqg", shape::make(t, {"seq"}));
    const g::value outs[] = {
        ln_primitives(b, xl, &gamma, &beta, "h", true, 1e-5),
        ln_primitives(b, xl, nullptr, &beta, "h", false, 1e-3),
        ln_primitives(b, xl, &gamma, nullptr, "h", true, 0.5),
        ln_primitives(b, xl, nullptr, nullptr, "h", false, 1e-5),
        ln_primitives(b, x, nullptr, nullptr, "h", true, 1e-5),  // along a middle axis
        ln_primitives(b, x, &seqg, nullptr, "seq", true, 1e-5),  // along a dynamic axis
        ln_primitives(b, x, &gamma, &beta, "h", true, 1e-5),     // a middle axis, both
        rms_primitives(b, xl, &gamma, "h", true, 1e-6),
        rms_primitives(b, xl, nullptr, "h", false, 1e-5),
        rms_primitives(b, x, &gamma, "h", true, 1e-6),     // along a middle axis
        rms_primitives(b, x, nullptr, "seq", false, 0.5),  // along a dynamic axis
    };
    for (std::size_t batch : {1u, 6u}) {
      for (std::size_t seq : {1u, 11u}) {
        CAPTURE(nax::name(t));
        CAPTURE(batch);
        CAPTURE(seq);
        std::vector<dyn_tensor> in = {
            reference::random_tensor(concrete(t, {{"batch", batch}, {"h", 40}, {"seq", seq}}), rng,
                                     -2, 3),
            reference::random_tensor(concrete(t, {{"batch", batch}, {"h", 40}}), rng, -2, 3),
            reference::random_tensor(concrete(t, {{"h", 40}}), rng),
            reference::random_tensor(concrete(t, {{"h", 40}}), rng),
            reference::random_tensor(concrete(t, {{"seq", seq}}), rng)};
        for (std::size_t i = 0; i < std::size(outs); ++i) {
          CAPTURE(i);
          // A row of one element has variance 0: the norm is 0 / sqrt(eps), fine for both.
          check(b, {outs[i]}, in, t == dtype::f64 ? 1e-9 : 1e-4, "fused_layer_norm");
        }
      }
    }
  }
}

TEST_CASE("an MLP block built op by op runs as fused steps and matches the reference") {
  std::mt19937 rng(9);
  g::builder b;
  const dim d = dim::named("d", 32), f = dim::named("f", 96);
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", d}));
  auto w1 = b.parameter("w1", shape::make(dtype::f32, {d, f}));
  auto b1 = b.parameter("b1", shape::make(dtype::f32, {f}));
  auto w2 = b.parameter("w2", shape::make(dtype::f32, {f, d}));
  auto b2 = b.parameter("b2", shape::make(dtype::f32, {d}));
  auto gamma = b.parameter("gamma", shape::make(dtype::f32, {d}));
  auto beta = b.parameter("beta", shape::make(dtype::f32, {d}));
  auto hdn = g::gelu(g::dot_general(x, w1, {{1, 0}}) + b1);
  auto r = g::dot_general(hdn, w2, {{1, 0}}) + b2 + x;
  auto y = ln_primitives(b, r, &gamma, &beta, "d", true, 1e-5);
  for (std::size_t batch : {1u, 5u, 64u}) {
    CAPTURE(batch);
    std::vector<dyn_tensor> in = {
        reference::random_tensor(concrete(dtype::f32, {{"batch", batch}, {"d", 32}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"d", 32}, {"f", 96}}), rng, -0.2, 0.2),
        reference::random_tensor(concrete(dtype::f32, {{"f", 96}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"f", 96}, {"d", 32}}), rng, -0.2, 0.2),
        reference::random_tensor(concrete(dtype::f32, {{"d", 32}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"d", 32}}), rng),
        reference::random_tensor(concrete(dtype::f32, {{"d", 32}}), rng)};
    // dot + b2 is the second dense (no activation); + x is then its own step.
    check(b, {y}, in, 1e-4, "fused_dense, fused_dense, elementwise, fused_layer_norm");
  }
}

TEST_CASE("an elementwise group fused into a reduction over leading or middle axes") {
  std::mt19937 rng(12);
  for (dtype t : {dtype::f32, dtype::f64}) {
    g::builder b;
    auto x = b.parameter("x", shape::make(t, {"batch", "seq", "h"}));
    auto bias = b.parameter("bias", shape::make(t, {"h"}));
    auto e = g::tanh(x * 2.0 + bias) * x;
    // The last: a group none of whose arguments has 'seq' (its broadcast brings it).
    const g::value outs[] = {g::sum(e, {"batch"}), g::mean(e, {"batch", "seq"}),
                             g::reduce_max(e, {"seq"}), g::reduce_min(g::exp(x), {"batch"}),
                             g::sum(b.broadcast(bias, x.shape()) * 2.0, {"batch"})};
    // Short rows, rows of several pieces, few items (parts), an empty batch.
    struct sizes {
      std::size_t batch, seq, h;
    };
    for (const sizes& z : {sizes{1, 1, 5}, sizes{300, 7, 24}, sizes{3, 2, 4500}, sizes{2000, 1, 3},
                           sizes{0, 3, 8}}) {
      const std::size_t batch = z.batch, seq = z.seq, h = z.h;  // (clang 14: CAPTURE lambdas)
      CAPTURE(nax::name(t));
      CAPTURE(batch);
      CAPTURE(seq);
      CAPTURE(h);
      std::vector<dyn_tensor> in = {
          reference::random_tensor(concrete(t, {{"batch", batch}, {"seq", seq}, {"h", h}}), rng),
          reference::random_tensor(concrete(t, {{"h", h}}), rng)};
      const std::vector<reference::dense> want = reference::evaluate(b, in);
      for (std::size_t i = 0; i < std::size(outs); ++i) {
        CAPTURE(i);
        if (batch == 0 &&
            (i == 1 || i == 3)) {  // mean, min of nothing: the plain reduction's error
          auto fused = g::compile(b, {outs[i]});
          CHECK_THROWS_WITH_AS(fused.run(in), doctest::Contains("over an empty axis"),
                               nax::shape_error);
          continue;
        }
        check(b, {outs[i]}, in, tolerance(t) * double(batch * seq + 1), "fused_reduce", &want);
      }
    }
  }
}

TEST_CASE("a fused reduction over a renamed dynamic axis binds it as its source") {
  // The group's reduced axis kseq is seq renamed: no input has it, the binding of seq gives it.
  std::mt19937 rng(13);
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f64, {"seq", dim::named("h", 3)}));
  auto keys = g::rename(x, "seq", "kseq");
  auto scores = g::dot_general(x, keys, {{"h", "h"}});  // [seq, kseq]
  auto out = g::sum(g::tanh(scores) * 2.0, {"kseq"});
  for (std::size_t seq : {1u, 5u}) {
    CAPTURE(seq);
    const std::vector<dyn_tensor> in = {
        reference::random_tensor(concrete(dtype::f64, {{"seq", seq}, {"h", 3}}), rng)};
    check(b, {out}, in, tolerance(dtype::f64), "reshape, fused_dense, fused_reduce");
  }
}

TEST_CASE("an elementwise group fused into its reduction: every kind, chunked over rows") {
  std::mt19937 rng(10);
  for (dtype t : {dtype::f32, dtype::f64}) {
    g::builder b;
    const dim hd = dim::named("h", 37);
    auto x = b.parameter("x", shape::make(t, {"batch", "seq", hd}));
    auto bias = b.parameter("bias", shape::make(t, {hd}));
    auto e = g::tanh(x * 2.0 + bias) * x;
    const g::value outs[] = {g::sum(e, {"h"}), g::mean(g::exp(x), {"seq", "h"}),
                             g::reduce_max(e, {"h"}), g::reduce_min(x - bias, {"h"})};
    for (std::size_t batch : {1u, 3u, 700u}) {  // 700 x 13 rows: several chunks, both threads
      for (std::size_t seq : {1u, 13u}) {
        CAPTURE(nax::name(t));
        CAPTURE(batch);
        CAPTURE(seq);
        std::vector<dyn_tensor> in = {
            reference::random_tensor(concrete(t, {{"batch", batch}, {"seq", seq}, {"h", 37}}), rng),
            reference::random_tensor(concrete(t, {{"h", 37}}), rng)};
        const std::vector<reference::dense> want = reference::evaluate(b, in);
        for (std::size_t i = 0; i < std::size(outs); ++i) {
          CAPTURE(i);
          check(b, {outs[i]}, in, tolerance(t), "fused_reduce", &want);
        }
      }
    }
  }
}
