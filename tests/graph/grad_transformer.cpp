// The gradients of a transformer encoder block built with the graph's ops, by every weight and by
// the input, against central differences in double: pre-norm causal self-attention over named
// heads, seq and key axes (split, rename, merge), softmax, layer_norm, a GELU MLP, residuals.
#include "grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("a transformer encoder block: gradients of every weight and of the input") {
  g::builder b;
  const dim model = dim::named("model", 6), attn = dim::named("attn", 6), ff = dim::named("ff", 8);
  auto param = [&](const char* name, std::initializer_list<dim> dims) {
    return b.parameter(name, shape::make(dtype::f64, dims));
  };
  const g::value x = param("x", {dim("batch"), dim("seq"), model});
  const g::value g1 = param("ln1.gamma", {model}), be1 = param("ln1.beta", {model});
  const g::value wq = param("wq", {model, attn}), wk = param("wk", {model, attn}),
                 wv = param("wv", {model, attn}), wo = param("wo", {attn, model});
  const g::value g2 = param("ln2.gamma", {model}), be2 = param("ln2.beta", {model});
  const g::value w1 = param("w1", {model, ff}), b1 = param("b1", {ff});
  const g::value w2 = param("w2", {ff, model}), b2 = param("b2", {model});

  const dim heads = dim::named("heads", 2), hd = dim::named("hd", 3);
  const g::value a = g::layer_norm(x, g1, be1, "model", 1e-5);
  const g::value q = g::split(g::dot_general(a, wq, {{"model", "model"}}), "attn", heads, hd);
  const g::value k = g::rename(
      g::split(g::dot_general(a, wk, {{"model", "model"}}), "attn", heads, hd), "seq", "key");
  const g::value v = g::rename(
      g::split(g::dot_general(a, wv, {{"model", "model"}}), "attn", heads, hd), "seq", "key");
  const g::value scores =  // [batch, heads, seq, key]
      g::dot_general(q, k, {{"hd", "hd"}}, {{"batch", "batch"}, {"heads", "heads"}}) * 0.5;
  const g::value future = g::greater(g::iota(scores, "key"), g::iota(scores, "seq"));
  const g::value p = g::softmax(g::where(future, -1e9, scores), "key");
  const g::value o =
      g::dot_general(p, v, {{"key", "key"}}, {{"batch", "batch"}, {"heads", "heads"}});
  const g::value merged = g::merge(o, "heads", "hd", "attn");  // [batch, seq, attn]
  const g::value h = x + g::dot_general(merged, wo, {{"attn", "attn"}});
  const g::value c = g::layer_norm(h, g2, be2, "model", 1e-5);
  const g::value f = g::gelu(g::dot_general(c, w1, {{"model", "model"}}) + b1);
  const g::value y = h + g::dot_general(f, w2, {{"ff", "ff"}}) + b2;
  const g::value loss = g::sum(g::tanh(y) * y, {0, 1, 2});

  std::mt19937 rng(15);
  for (const auto& binding : {std::pair<std::size_t, std::size_t>{1, 3}, {2, 4}}) {
    const std::size_t nb = binding.first, n = binding.second;
    CAPTURE(nb);
    CAPTURE(n);
    grad_check::check(b, loss, {x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2},
                      grad_check::inputs(b, {{"batch", nb}, {"seq", n}}, rng));
  }
}
