// A pre-norm transformer encoder block with causal self-attention, written once as a generic
// lambda: called with nax::tensor arguments it runs eagerly; under nax::jit it is traced into a
// runtime graph. Shared by examples/transformer.cpp and bench/transformer.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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
  // Causal: a query sees the keys up to its own position. The bias is over [seq, kseq] alone
  // and broadcast by name; added to the scores, it keeps their axis order.
  auto causal_bias = nax::where(nax::tril<seq, kseq>(scores), 0.0f, -1e9f);
  auto p = nax::softmax<kseq>(scores + causal_bias);
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

// Plain loops in double: the block for one sequence x[s][m] of length n.
inline std::vector<double> reference(const weights& w, const float* x, std::size_t n) {
  constexpr std::size_t M = model::static_extent, A = attn::static_extent, H = heads::static_extent,
                        D = hd::static_extent, F = ff::static_extent;
  auto layer_norm = [&](const std::vector<double>& in, const nax::tensor<float, model>& g,
                        const nax::tensor<float, model>& b) {
    std::vector<double> out(n * M);
    for (std::size_t s = 0; s < n; ++s) {
      double mean = 0, var = 0;
      for (std::size_t m = 0; m < M; ++m) mean += in[s * M + m] / M;
      for (std::size_t m = 0; m < M; ++m)
        var += (in[s * M + m] - mean) * (in[s * M + m] - mean) / M;
      for (std::size_t m = 0; m < M; ++m)
        out[s * M + m] = (in[s * M + m] - mean) / std::sqrt(var + epsilon) * g(m) + b(m);
    }
    return out;
  };
  auto project = [&](const std::vector<double>& in, const nax::tensor<float, model, attn>& wt) {
    std::vector<double> out(n * A, 0.0);
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t j = 0; j < A; ++j)
        for (std::size_t m = 0; m < M; ++m) out[s * A + j] += in[s * M + m] * wt(m, j);
    return out;
  };
  std::vector<double> xd(x, x + n * M);
  const std::vector<double> a = layer_norm(xd, w.g1, w.be1);
  const std::vector<double> q = project(a, w.wq), k = project(a, w.wk), v = project(a, w.wv);
  std::vector<double> o(n * A, 0.0);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t s = 0; s < n; ++s) {
      std::vector<double> p(s + 1);  // causal: keys 0..s
      double top = -INFINITY, total = 0;
      for (std::size_t t = 0; t <= s; ++t) {
        double dot = 0;
        for (std::size_t d = 0; d < D; ++d) dot += q[s * A + h * D + d] * k[t * A + h * D + d];
        p[t] = dot * scale;
        top = std::max(top, p[t]);
      }
      for (double& e : p) total += (e = std::exp(e - top));
      for (std::size_t t = 0; t <= s; ++t)
        for (std::size_t d = 0; d < D; ++d)
          o[s * A + h * D + d] += p[t] / total * v[t * A + h * D + d];
    }
  std::vector<double> hres(xd);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t j = 0; j < A; ++j) hres[s * M + m] += o[s * A + j] * w.wo(j, m);
  const std::vector<double> c = layer_norm(hres, w.g2, w.be2);
  std::vector<double> y(hres);
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<double> f(F);
    for (std::size_t j = 0; j < F; ++j) {
      double z = w.b1(j);
      for (std::size_t m = 0; m < M; ++m) z += c[s * M + m] * w.w1(m, j);
      f[j] = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    }
    for (std::size_t m = 0; m < M; ++m) {
      y[s * M + m] += w.b2(m);
      for (std::size_t j = 0; j < F; ++j) y[s * M + m] += f[j] * w.w2(j, m);
    }
  }
  return y;
}

/// The block under nax::jit: one input per argument, batch and seq dynamic (or x's axis of
/// positions another axis named "seq", such as a bounded one); `options` go to
/// nax::graph::compile.
template <class Seq = seq>
auto jitted(nax::graph::compile_options options = {}) {
  return nax::jit(options, block, nax::input<float, batch, Seq, model>("x"),
                  nax::input<float, model>("ln1.gamma"), nax::input<float, model>("ln1.beta"),
                  nax::input<float, model, attn>("wq"), nax::input<float, model, attn>("wk"),
                  nax::input<float, model, attn>("wv"), nax::input<float, attn, model>("wo"),
                  nax::input<float, model>("ln2.gamma"), nax::input<float, model>("ln2.beta"),
                  nax::input<float, model, ff>("w1"), nax::input<float, ff>("b1"),
                  nax::input<float, ff, model>("w2"), nax::input<float, model>("b2"));
}

}  // namespace encoder
