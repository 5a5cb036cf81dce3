// A pre-norm transformer encoder block with causal self-attention, written once as a generic
// lambda: called with nax::tensor arguments it runs eagerly; under nax::jit it is traced into a
// runtime graph. Shared by examples/transformer.cpp and bench/transformer.cpp.
#pragma once

#include <cstdint>

#include <nax/nax.hpp>

namespace encoder {

using batch = nax::axis<"batch">;  // dynamic
using seq = nax::axis<"seq">;      // dynamic: the queries' positions
using kseq = nax::axis<"kseq">;    // the same positions as keys (nax::rename of seq)
using model = nax::axis<"model", 64>;
using attn = nax::axis<"attn", 64>;  // the attention projections' width: heads × hd
using heads = nax::axis<"heads", 4>;
using hd = nax::axis<"hd", 16>;
using ff = nax::axis<"ff", 256>;

inline constexpr float scale = 0.25f;  // 1 / sqrt(hd)
inline constexpr float epsilon = 1e-5f;

// x: [batch, seq, model]. Weights: wq, wk, wv [model, attn], wo [attn, model], w1 [model, ff],
// b1 [ff], w2 [ff, model], b2 [model]; layer norms' gamma and beta [model].
inline const auto block = [](auto x, auto g1, auto be1, auto wq, auto wk, auto wv, auto wo, auto g2,
                             auto be2, auto w1, auto b1, auto w2, auto b2) {
  // Attention: per head, queries over seq against keys over kseq (the same positions).
  auto a = nax::layer_norm<model>(x, g1, be1, epsilon);
  auto q = nax::split<attn, heads, hd>(nax::dot<model>(a, wq));  // [batch, seq, heads, hd]
  auto k = nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, wk)));
  auto v = nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, wv)));
  auto scores = nax::dot<hd>(q, k) * scale;  // [batch, heads, seq, kseq]
  auto causal = nax::where(nax::tril<seq, kseq>(scores), scores, -1e9f);  // key <= query
  auto p = nax::softmax<kseq>(causal);
  auto o = nax::merge<heads, hd, attn>(nax::dot<kseq>(p, v));  // heads back into one axis
  auto h = nax::eval(x + nax::dot<attn>(o, wo));               // the residual
  // The MLP, with its own residual.
  auto c = nax::layer_norm<model>(h, g2, be2, epsilon);
  auto f = nax::gelu(nax::dot<model>(c, w1) + b1);
  return nax::eval(h + nax::dot<ff>(f, w2) + b2);
};

/// The block's weights, filled with reproducible random values.
struct weights {
  nax::tensor<float, model> g1, be1, g2, be2, b2;
  nax::tensor<float, model, attn> wq, wk, wv;
  nax::tensor<float, attn, model> wo;
  nax::tensor<float, model, ff> w1;
  nax::tensor<float, ff> b1;
  nax::tensor<float, ff, model> w2;

  explicit weights(std::uint64_t seed)
      : g1(nax::uniform<float, model>(nax::rng{seed, 0}, 0.8f, 1.2f)),
        be1(nax::uniform<float, model>(nax::rng{seed, 1}, -0.1f, 0.1f)),
        g2(nax::uniform<float, model>(nax::rng{seed, 2}, 0.8f, 1.2f)),
        be2(nax::uniform<float, model>(nax::rng{seed, 3}, -0.1f, 0.1f)),
        b2(nax::uniform<float, model>(nax::rng{seed, 4}, -0.1f, 0.1f)),
        wq(nax::normal<float, model, attn>(nax::rng{seed, 5}, 0.0f, 0.125f)),
        wk(nax::normal<float, model, attn>(nax::rng{seed, 6}, 0.0f, 0.125f)),
        wv(nax::normal<float, model, attn>(nax::rng{seed, 7}, 0.0f, 0.125f)),
        wo(nax::normal<float, attn, model>(nax::rng{seed, 8}, 0.0f, 0.125f)),
        w1(nax::normal<float, model, ff>(nax::rng{seed, 9}, 0.0f, 0.125f)),
        b1(nax::uniform<float, ff>(nax::rng{seed, 10}, -0.1f, 0.1f)),
        w2(nax::normal<float, ff, model>(nax::rng{seed, 11}, 0.0f, 0.0625f)) {}

  /// f(x, every weight in the block's order).
  template <class F, class X>
  decltype(auto) apply(const F& f, const X& x) const {
    return f(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2);
  }
};

/// The block under nax::jit: one input per argument, batch and seq dynamic.
inline auto jitted() {
  return nax::jit(block, nax::input<float, batch, seq, model>("x"),
                  nax::input<float, model>("ln1.gamma"), nax::input<float, model>("ln1.beta"),
                  nax::input<float, model, attn>("wq"), nax::input<float, model, attn>("wk"),
                  nax::input<float, model, attn>("wv"), nax::input<float, attn, model>("wo"),
                  nax::input<float, model>("ln2.gamma"), nax::input<float, model>("ln2.beta"),
                  nax::input<float, model, ff>("w1"), nax::input<float, ff>("b1"),
                  nax::input<float, ff, model>("w2"), nax::input<float, model>("b2"));
}

}  // namespace encoder
