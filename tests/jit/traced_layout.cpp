// split, merge, slice and concat on traced values become graph nodes; the jitted results equal
// the eager typed code's. Multi-head attention written with split and merge.
#include "jit_helpers.hpp"

#include <nax/graph/ops.hpp>

#include <array>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace jit_test;

namespace {
using model = nax::axis<"model", 24>;
using heads = nax::axis<"heads", 4>;
using hd = nax::axis<"hd", 6>;
using kseq = nax::axis<"kseq", nax::upto(64)>;
using part = nax::axis<"part", 8>;
}  // namespace

TEST_CASE("jit: split and merge are reshapes (a transpose first when apart)") {
  const auto heads_first = [](auto x) {
    auto h = nax::split<model, heads, hd>(x * 2.0f);                         // [batch, heads, hd]
    return nax::merge<hd, heads, model>(nax::permute<hd, batch, heads>(h));  // [model, batch]
  };
  auto f = nax::jit(heads_first, nax::input<float, batch, model>("x"));
  for (std::size_t n : {1, 5}) {
    nax::tensor<float, batch, model> x{batch(n)};
    fill(x, 3);
    const nax::tensor<float, model, batch> y = f(x);
    const nax::tensor<float, model, batch> want = eager(heads_first, x);
    CHECK(std::equal(y.begin(), y.end(), want.begin()));
    for (std::size_t i = 0; i < n; ++i)  // and by index: model = d * 4 + h
      CHECK(y(5 * 4 + 2, i) == 2.0f * x(i, 2 * 6 + 5));
  }
}

TEST_CASE("jit: slice and concat") {
  const auto halves_swapped = [](auto x) {
    auto lo = nax::rename<hidden, part>(nax::slice<hidden>(x, 0, 8));
    auto hi = nax::rename<hidden, part>(nax::slice<hidden>(x * 1.0f, 16, 24));
    return nax::concat<part>(hi, nax::permute<part, batch>(lo));  // [batch, part = 16]
  };
  auto f = nax::jit(halves_swapped, nax::input<float, batch, hidden>("x"));
  nax::tensor<float, batch, hidden> x{batch(3)};
  fill(x, 9);
  const auto y = f(x);
  static_assert(std::is_same_v<decltype(y),
                               const nax::tensor<float, batch, nax::axis<"part", nax::upto(48)>>>);
  REQUIRE(y.extent<nax::axis<"part">>() == 16);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t c = 0; c < 8; ++c) {
      CHECK(y(i, c) == x(i, 16 + c));
      CHECK(y(i, 8 + c) == x(i, c));
    }
  CHECK_THROWS_WITH_AS(nax::jit([](auto x) { return nax::slice<hidden>(x, 4, 2); },
                                nax::input<float, batch, hidden>("x")),
                       "slice of axis 'hidden': [4, 2) is out of range [0, 2)", nax::shape_error);
}

TEST_CASE("jit: a slice of compile-time bounds is the builder's slice, its axis static") {
  const auto middle = [](auto x) { return nax::slice<hidden, 4, 12>(x * 2.0f); };
  auto f = nax::jit(middle, nax::input<float, batch, hidden>("x"));
  nax::tensor<float, batch, hidden> x{batch(3)};
  fill(x, 13);
  const auto y = f(x);
  static_assert(std::is_same_v<decltype(y), const nax::tensor<float, batch, nax::axis<"hidden", 8>>>);
  const nax::tensor<float, batch, nax::axis<"hidden", 8>> want = eager(middle, x);
  CHECK(std::equal(y.begin(), y.end(), want.begin()));
  // The builder's graph of the same function.
  g::builder b;
  const g::value p = b.parameter("x", nax::shape_of<float, batch, hidden>());
  const g::value s = g::slice(p * 2.0, "hidden", 4, 12);
  CHECK(s.shape()[1].extent() == 8);
  CHECK(s.shape()[1].is_static());
  CHECK(g::compile(b, {s}).to_dot() == f.executable().to_dot());
}

TEST_CASE("jit: multi-head self-attention with split, rename and merge keys on batch and seq") {
  const auto mha = [](auto x, auto wq, auto wk, auto wv, auto wo) {
    auto q = nax::split<model, heads, hd>(nax::dot<hidden>(x, wq));  // [batch, seq, heads, hd]
    auto k = nax::rename<seq, kseq>(nax::split<model, heads, hd>(nax::dot<hidden>(x, wk)));
    auto v = nax::rename<seq, kseq>(nax::split<model, heads, hd>(nax::dot<hidden>(x, wv)));
    auto p = nax::softmax<kseq>(nax::dot<hd>(q, k) * 0.25f);  // [batch, heads, seq, kseq]
    auto o = nax::merge<heads, hd, model>(nax::dot<kseq>(p, v));
    return nax::dot<model>(o, wo);  // [batch, seq, hidden]
  };
  auto f = nax::jit(mha, nax::input<float, batch, seq, hidden>("x"),
                    nax::input<float, hidden, model>("wq"), nax::input<float, hidden, model>("wk"),
                    nax::input<float, hidden, model>("wv"), nax::input<float, model, hidden>("wo"));
  CHECK(f.executable().program().dynamic_axes.size() == 2);  // batch and seq, not kseq
  nax::tensor<float, hidden, model> wq, wk, wv;
  nax::tensor<float, model, hidden> wo;
  fill(wq, 1);
  fill(wk, 2);
  fill(wv, 3);
  fill(wo, 4);
  for (const std::array<std::size_t, 2>& bs : {std::array<std::size_t, 2>{2, 5}, {1, 9}, {2, 5}}) {
    nax::tensor<float, batch, seq, hidden> x{batch(bs[0]), seq(bs[1])};
    fill(x, 5);
    const nax::tensor<float, batch, seq, hidden> y = f(x, wq, wk, wv, wo);
    check_close(y, nax::tensor<float, batch, seq, hidden>(eager(mha, x, wq, wk, wv, wo)));
  }
  CHECK(f.executable().stats().misses == 2);
  CHECK(f.executable().stats().hits == 1);
}

TEST_CASE("jit: a result over a renamed axis and one over a slice get their extents") {
  const auto probabilities = [](auto x) {
    auto k = nax::rename<seq, kseq>(x);
    auto p = nax::softmax<kseq>(nax::dot<hidden>(x, k));    // [batch, seq, kseq]
    return std::tuple(p, nax::slice<seq>(x * 1.0f, 1, 3));  // [batch, 2, hidden]
  };
  auto f = nax::jit(probabilities, nax::input<float, batch, seq, hidden>("x"));
  nax::tensor<float, batch, seq, hidden> x{batch(2), seq(5)};
  fill(x, 4, -0.2f, 0.2f);
  const auto [p, s] = f(x);
  const auto [ep, es] = eager(probabilities, x);
  CHECK(p.extent<kseq>() == 5);
  CHECK(s.extent<seq>() == 2);
  check_close(p, nax::tensor<float, batch, seq, kseq>(ep));
  check_close(s, nax::tensor<float, batch, seq, hidden>(es));
}

TEST_CASE("jit: concat<A, B> along a bounded axis, the joined axis named per layer alike") {
  using pos = nax::axis<"pos", nax::upto(8)>;
  using one = nax::axis<"pos", 1>;
  using ctx = nax::axis<"ctx">;
  // Two layers' caches grown by one position each: both joined axes are ctx (one size).
  const auto grow = [](auto k0, auto k1, auto s0, auto s1) {
    auto g0 = nax::concat<pos, ctx>(k0, s0);
    auto g1 = nax::concat<pos, ctx>(k1 * 2.0f, s1);
    return std::make_tuple(g0, nax::sum<ctx>(g0 * g1));
  };
  auto f =
      nax::jit(grow, nax::input<float, pos, hidden>("k0"), nax::input<float, pos, hidden>("k1"),
               nax::input<float, hidden, one>("s0"), nax::input<float, one, hidden>("s1"));
  for (std::size_t n : {1u, 4u, 7u}) {
    CAPTURE(n);
    nax::tensor<float, pos, hidden> k0{pos(n)}, k1{pos(n)};
    nax::tensor<float, hidden, one> s0;
    nax::tensor<float, one, hidden> s1;
    fill(k0, 1);
    fill(k1, 2);
    fill(s0, 3);
    fill(s1, 4);
    const auto [g, dots] = f(k0, k1, s0, s1);
    const auto [want_g, want_dots] = eager(grow, k0, k1, s0, s1);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(g)>,
                                 nax::tensor<float, nax::axis<"ctx", nax::upto(9)>, hidden>>);
    REQUIRE(g.extent<ctx>() == n + 1);
    CHECK(std::equal(g.begin(), g.end(), want_g.begin()));
    CHECK(std::equal(dots.begin(), dots.end(), want_dots.begin()));
    CHECK(g(n, 5) == s0(5, 0));
  }
  // concat<A> along a dynamic axis has no name to bind the sum by: the message says which.
  CHECK_THROWS_WITH_AS(
      nax::jit([](auto k, auto s) { return nax::concat<pos>(k, s); },
               nax::input<float, pos, hidden>("k"), nax::input<float, one, hidden>("s")),
      "nax::concat<pos>(f32[pos<=8, 24], f32[1, 24]) under nax::jit: axis 'pos' "
      "is dynamic, and its name binds one extent per run; name the joined axis: "
      "nax::concat<pos, joined>(a, b)",
      nax::shape_error);
}
