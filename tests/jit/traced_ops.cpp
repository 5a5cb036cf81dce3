// dot, reductions, log_softmax, softmax and layer_norm on traced values become graph ops; the
// jitted results equal the eager typed code's over several bindings.
#include "jit_helpers.hpp"
#include "support/bits.hpp"

#include <nax/graph/ops.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace jit_test;

namespace {

const auto mlp_block = [](auto x, auto w1, auto b1, auto w2, auto b2, auto gamma, auto beta) {
  auto h = nax::eval(nax::gelu(nax::dot<hidden>(x, w1) + b1));  // traced: the fused node
  auto r = nax::eval(nax::dot<ff>(h, w2) + b2 + x);             // the residual
  return nax::layer_norm<hidden>(r, gamma, beta, 1e-5f);
};

const auto attention = [](auto q, auto k, auto v) {
  auto p = nax::softmax<key>(nax::dot<head>(q, k) * 0.25f);  // [batch, seq, key]
  return nax::dot<key>(p, v);                                // [batch, seq, hidden]
};

const auto statistics = [](auto x) {
  return std::tuple(nax::sum<hidden>(x * x), nax::mean<hidden>(x),
                    nax::max<hidden>(x) - nax::min<hidden>(x), nax::log_softmax<hidden>(x));
};

}  // namespace

TEST_CASE("jit: an MLP block with a residual and layer_norm") {
  auto f = nax::jit(mlp_block, nax::input<float, batch, hidden>("x"),
                    nax::input<float, hidden, ff>("w1"), nax::input<float, ff>("b1"),
                    nax::input<float, ff, hidden>("w2"), nax::input<float, hidden>("b2"),
                    nax::input<float, hidden>("gamma"), nax::input<float, hidden>("beta"));
  // dot + b1 + gelu and dot + b2 as GEMMs with epilogues (fuse_dense), the residual, layer_norm.
  CHECK(step_kinds(f.executable()) == std::vector{g::op_kind::fused_dense, g::op_kind::fused_dense,
                                                  g::op_kind::elementwise, g::op_kind::layer_norm});

  nax::tensor<float, hidden, ff> w1;
  nax::tensor<float, ff> b1;
  nax::tensor<float, ff, hidden> w2;
  nax::tensor<float, hidden> b2, gamma, beta;
  fill(w1, 1);
  fill(b1, 2);
  fill(w2, 3);
  fill(b2, 4);
  fill(gamma, 5, 0.5f, 1.5f);
  fill(beta, 6);
  for (std::size_t n : {1, 3, 64}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 7 + static_cast<std::uint32_t>(n));
    const nax::tensor<float, batch, hidden> y = f(x, w1, b1, w2, b2, gamma, beta);
    check_close(
        y, nax::tensor<float, batch, hidden>(eager(mlp_block, x, w1, b1, w2, b2, gamma, beta)));
  }
  CHECK(f.executable().stats().misses == 3);
}

TEST_CASE("jit: attention-like softmax(dot(q, k) * s) contracted with v") {
  auto f = nax::jit(attention, nax::input<float, batch, seq, head>("q"),
                    nax::input<float, batch, key, head>("k"),
                    nax::input<float, batch, key, hidden>("v"));
  CHECK(step_kinds(f.executable()) == std::vector{g::op_kind::dot_general, g::op_kind::elementwise,
                                                  g::op_kind::softmax, g::op_kind::dot_general});
  for (const std::array<int, 3>& nsk : {std::array{1, 1, 5}, {3, 7, 12}, {64, 9, 3}}) {
    const int n = nsk[0], s = nsk[1], k = nsk[2];
    CAPTURE(n);
    nax::tensor<float, batch, seq, head> q{batch(n), seq(s)};
    nax::tensor<float, batch, key, head> kk{batch(n), key(k)};
    nax::tensor<float, batch, key, hidden> v{batch(n), key(k)};
    fill(q, 1);
    fill(kk, 2);
    fill(v, 3);
    const nax::tensor<float, batch, seq, hidden> y = f(q, kk, v);
    check_close(y, nax::tensor<float, batch, seq, hidden>(eager(attention, q, kk, v)));
  }
}

TEST_CASE("jit: self-attention over one input, keys renamed: the cache keys on batch and seq") {
  using kseq = nax::axis<"kseq">;
  const auto self_attention = [](auto x) {
    auto k = nax::rename<seq, kseq>(x);
    auto p = nax::softmax<kseq>(nax::dot<head>(x, k));
    return nax::dot<kseq>(p, nax::rename<seq, kseq>(x));
  };
  auto f = nax::jit(self_attention, nax::input<float, batch, seq, head>("x"));
  const g::program& prog = f.executable().program();
  CHECK(prog.dynamic_axes == std::vector<nax::axis_name>{"batch", "seq"});
  REQUIRE(prog.axis_aliases.size() == 1);
  CHECK(prog.axis_aliases[0] == g::axis_alias{"kseq", "seq"});
  for (const std::array<int, 2>& ns : {std::array{1, 1}, {3, 7}, {2, 33}, {3, 7}}) {
    const int n = ns[0], s = ns[1];
    CAPTURE(n);
    CAPTURE(s);
    nax::tensor<float, batch, seq, head> x{batch(n), seq(s)};
    fill(x, 4);
    const nax::tensor<float, batch, seq, head> y = f(x);
    check_close(y, nax::tensor<float, batch, seq, head>(eager(self_attention, x)));
  }
  CHECK(f.executable().stats().misses == 3);
  CHECK(f.executable().stats().hits == 1);
}

TEST_CASE("jit: permute is a transpose node, and gives the eager result") {
  const auto scaled_t = [](auto x) { return nax::permute<head, seq, batch>(x) * 2.0f; };
  auto f = nax::jit(scaled_t, nax::input<float, batch, seq, head>("x"));
  CHECK(step_kinds(f.executable()) == std::vector{g::op_kind::transpose, g::op_kind::elementwise});
  for (const std::array<int, 2>& ns : {std::array{1, 1}, {3, 7}, {2, 33}}) {
    nax::tensor<float, batch, seq, head> x{batch(ns[0]), seq(ns[1])};
    fill(x, 5);
    const nax::tensor<float, head, seq, batch> y = f(x);
    check_close(y, nax::tensor<float, head, seq, batch>(eager(scaled_t, x)));
  }
}

TEST_CASE("jit: floor, ceil, round, sign and elu: the eager bits, halves rounded to even") {
  const auto f = [](auto x) {
    return nax::floor(x * 3.0f) + nax::ceil(x) * nax::sign(x) + nax::round(x * 8.0f) +
           nax::elu(x, 0.5f);
  };
  auto jitted = nax::jit(f, nax::input<float, batch, hidden>("x"));
  for (std::size_t n : {1, 5}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 3 + static_cast<std::uint32_t>(n));
    x.data()[0] = 0.5f / 8;  // round(0.5) = 0 and round(1.5) = 2: halves to even
    x.data()[1] = 1.5f / 8;
    x.data()[2] = -0.0f;
    const nax::tensor<float, batch, hidden> got = jitted(x);
    const nax::tensor<float, batch, hidden> want = eager(f, x);
    CHECK(nax_test::same_bits(got, want));
  }
}

TEST_CASE("jit: reductions and log_softmax, returned as a tuple") {
  auto f = nax::jit(statistics, nax::input<float, batch, hidden>("x"));
  for (std::size_t n : {1, 3, 64}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 11 + static_cast<std::uint32_t>(n));
    const auto [sum_sq, mean, range, log_p] = f(x);
    const auto want = eager(statistics, x);
    check_close(sum_sq, nax::eval(std::get<0>(want)));
    check_close(mean, nax::eval(std::get<1>(want)));
    check_close(range, nax::eval(std::get<2>(want)));
    check_close(log_p, nax::eval(std::get<3>(want)));
  }
}

TEST_CASE("traced dynamic_slice and dynamic_update_slice: the eager results, starts clamped") {
  using seq = nax::axis<"seq", nax::upto(16)>;
  using model = nax::axis<"model", 3>;
  using one = nax::axis<"seq", 1>;
  nax::tensor<float, seq, model> cache{seq(5)};
  for (std::size_t i = 0; i < cache.size(); ++i) cache.data()[i] = float(i);
  nax::tensor<float, model, one> row;  // (in another order than the cache)
  row.fill(-1);
  auto update = nax::jit(
      [](auto c, auto r, auto pos) { return nax::dynamic_update_slice<seq>(c, r, pos); },
      nax::input<float, seq, model>("cache"), nax::input<float, model, one>("row"),
      nax::input<std::int32_t>("pos"));
  auto window = nax::jit(
      [](auto c, auto pos) {
        return std::tuple(nax::dynamic_slice<seq, 2>(c, pos), nax::dynamic_slice<model, 1>(c, 2));
      },
      nax::input<float, seq, model>("cache"), nax::input<std::int64_t>("pos"));
  for (std::int32_t start : {-2, 0, 3, 4, 9}) {
    nax::tensor<std::int32_t> pos;
    pos.data()[0] = start;
    nax::tensor<std::int64_t> pos64;
    pos64.data()[0] = start;
    const auto got = update(cache, row, pos);
    const auto want = nax::dynamic_update_slice<seq>(cache, row, start);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == want.data()[i]);
    const auto [w, col] = window(cache, pos64);
    const auto want_w = nax::dynamic_slice<seq, 2>(cache, start);
    for (std::size_t i = 0; i < w.size(); ++i) CHECK(w.data()[i] == want_w.data()[i]);
    CHECK(col(3, 0) == cache(3, 2));
  }
}

TEST_CASE("traced set_dimension_size: the eager result, from a traced size or an integer") {
  using seq = nax::axis<"seq", nax::upto(8)>;
  using model = nax::axis<"model", 2>;
  using n_ax = nax::axis<"n">;
  nax::tensor<float, seq, model> x{seq(3)};
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 1.0f + float(i);
  auto f = nax::jit([](auto a, auto n) { return nax::set_dimension_size<seq, n_ax>(a, n); },
                    nax::input<float, seq, model>("x"), nax::input<std::int32_t>("n"));
  for (std::int32_t n : {0, 2, 3, 6}) {
    nax::tensor<std::int32_t> size;
    size.data()[0] = n;
    const auto got = f(x, size);
    const auto want = nax::set_dimension_size<seq, n_ax>(x, n);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(got)>,
                                 std::remove_cvref_t<decltype(want)>>);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == want.data()[i]);
  }
  auto g = nax::jit([](auto a) { return nax::set_dimension_size<seq, n_ax>(a, 5); },
                    nax::input<float, seq, model>("x"));
  CHECK(g(x).extents().extent(0) == 5);
  // A size or a start that is a rank-0 integer expression (a KV cache's at + 1), the same
  // lambda eager and traced.
  const auto prefix = [](auto a, auto at) {
    return std::tuple(nax::set_dimension_size<seq, n_ax>(a, at + 1),
                      nax::dynamic_slice<seq, 1>(a, at * 2 - 1));
  };
  auto h = nax::jit(prefix, nax::input<float, seq, model>("x"), nax::input<std::int32_t>("at"));
  for (std::int32_t at : {0, 1, 2}) {
    CAPTURE(at);
    nax::tensor<std::int32_t> a;
    a.data()[0] = at;
    const auto [got, row] = h(x, a);
    const auto [want, want_row] = prefix(x, a);
    REQUIRE(got.extents().extent(0) == std::size_t(at + 1));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == want.data()[i]);
    CHECK(row(0, 1) == want_row(0, 1));
    // (The start clamped to [0, 2]: x has 3 rows.)
    CHECK(row(0, 1) == x(std::size_t(std::clamp(at * 2 - 1, 0, 2)), 1));
  }
}

TEST_CASE("the builder's graph::log_softmax is the graph nax::jit makes of nax::log_softmax") {
  using rows = nax::axis<"rows", 3>;
  using vocab = nax::axis<"vocab", 37>;
  nax::tensor<float, rows, vocab> x;
  for (std::size_t i = 0; i < x.size(); ++i)
    x.data()[i] = static_cast<float>((i * 7919) % 101) * 0.37f - 15.0f;
  x(1, 5) = 80.0f;  // a row whose largest term dominates
  auto typed = nax::jit([](auto t) { return nax::log_softmax<vocab>(t); },
                        nax::input<float, rows, vocab>("x"));
  const nax::tensor<float, rows, vocab> want = typed(x);
  CHECK(nax_test::same_bits(want, nax::tensor<float, rows, vocab>(nax::log_softmax<vocab>(x))));
  nax::graph::builder b;
  auto p = b.parameter("x", nax::shape_of<float, rows, vocab>());
  const nax::graph::value y = nax::graph::log_softmax(p, "vocab");
  nax::executable ex = nax::graph::compile(b, {y});
  CHECK(ex.to_dot() == typed.executable().to_dot());
  const auto out = ex.run({nax::dyn_tensor::wrap(nax::shape_of<float, rows, vocab>(), x.data())});
  REQUIRE(out[0].bytes() == want.size() * sizeof(float));
  CHECK(std::memcmp(out[0].data(), want.data(), out[0].bytes()) == 0);
  // Against a plain reference in double.
  for (std::size_t r = 0; r < 3; ++r) {
    double m = x(r, 0), total = 0;
    for (std::size_t v = 0; v < 37; ++v) m = std::max(m, double(x(r, v)));
    for (std::size_t v = 0; v < 37; ++v) total += std::exp(double(x(r, v)) - m);
    for (std::size_t v = 0; v < 37; ++v)
      CHECK(want(r, v) == doctest::Approx(double(x(r, v)) - m - std::log(total)).epsilon(1e-6));
  }
}

TEST_CASE(
    "softmax, log_softmax and layer_norm along every axis: eager and jit give the same bits") {
  // The runtime gathers a non-last axis's rows and runs the typed layer's row kernel on them:
  // rows shorter and longer than a vector, a block of columns and a partial one, and rows past
  // the cached-row threshold (the kernels' online pass; the gathered rows on the heap).
  using a = nax::axis<"a">;
  using b = nax::axis<"b">;
  using c = nax::axis<"c">;
  for (const std::array<std::size_t, 3> ext :
       {std::array<std::size_t, 3>{3, 37, 5}, {2, 9, 21}, {1, 9000, 17}, {17, 2, 3}}) {
    CAPTURE(ext[0]);
    CAPTURE(ext[1]);
    CAPTURE(ext[2]);
    nax::tensor<float, a, b, c> x{a(ext[0]), b(ext[1]), c(ext[2])};
    fill(x, 41, -30.0f, 30.0f);
    auto check_axis = [&]<class A>(std::type_identity<A>) {
      const auto ops = [](auto t) {
        return std::tuple(nax::softmax<A>(t), nax::log_softmax<A>(t),
                          nax::layer_norm<A>(t, 1.5f, -0.25f));
      };
      auto f = nax::jit(ops, nax::input<float, a, b, c>("x"));
      const auto [s, l, n] = f(x);
      const auto [es, el, en] = eager(ops, x);
      CHECK(nax_test::same_bits(s, nax::tensor<float, a, b, c>(es)));
      CHECK(nax_test::same_bits(l, nax::tensor<float, a, b, c>(el)));
      CHECK(nax_test::same_bits(n, nax::tensor<float, a, b, c>(en)));
    };
    check_axis(std::type_identity<a>{});
    check_axis(std::type_identity<b>{});
    check_axis(std::type_identity<c>{});
  }
}
