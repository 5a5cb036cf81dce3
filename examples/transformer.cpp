// A transformer encoder block (pre-norm, causal self-attention over 4 heads, a GELU MLP),
// written the way the model is usually described: examples/transformer_block.hpp. It runs
// eagerly and under nax::jit with dynamic batch and seq, and both are checked against plain
// loops in double. The jitted block is specialized once per {batch, seq}: the keys' axis kseq is
// seq renamed, not an axis of its own.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "transformer_block.hpp"

using namespace encoder;

namespace {

// Plain loops in double: the block for one sequence x[s][m] of length n.
std::vector<double> reference(const weights& w, const float* x, std::size_t n) {
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

// The largest difference of y from the reference, relative to 1 + |reference|.
double worst_error(const weights& w, const nax::tensor<float, batch, seq, model>& x,
                   const nax::tensor<float, batch, seq, model>& y) {
  const std::size_t nb = x.extent<batch>(), n = x.extent<seq>(), M = model::static_extent;
  double worst = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const std::vector<double> want = reference(w, x.data() + b * n * M, n);
    for (std::size_t i = 0; i < n * M; ++i)
      worst =
          std::max(worst, std::abs(y.data()[b * n * M + i] - want[i]) / (1 + std::abs(want[i])));
  }
  return worst;
}

}  // namespace

int main() {
  const weights w(2026);
  auto jitted_block = jitted();
  bool ok = true;
  for (const auto& [nb, n] :
       {std::pair<std::size_t, std::size_t>{2, 7}, {1, 16}, {3, 33}, {2, 7}}) {
    const auto x =
        nax::normal<float, batch, seq, model>(nax::rng{7, n}, 0.0f, 1.0f, batch(nb), seq(n));
    const nax::tensor<float, batch, seq, model> eager = w.apply(block, x);
    const nax::tensor<float, batch, seq, model> traced = w.apply(jitted_block, x);
    const double e_eager = worst_error(w, x, eager), e_jit = worst_error(w, x, traced);
    std::printf("batch %zu, seq %2zu: eager %.1e, nax::jit %.1e from the reference in double\n", nb,
                n, e_eager, e_jit);
    ok = ok && e_eager < 1e-4 && e_jit < 1e-4;
  }
  const nax::specialization_stats st = jitted_block.executable().stats();
  std::printf("specializations: %zu misses, %zu hits (keyed on batch and seq: %zu dynamic axes)\n",
              st.misses, st.hits, jitted_block.executable().program().dynamic_axes.size());
  std::printf("steps:");
  for (const nax::graph::program_step& s : jitted_block.executable().program().steps)
    std::printf(" %s",
                std::string(s.fused ? nax::graph::name(s.fused->kind) : nax::graph::name(s.kind()))
                    .c_str());
  std::printf("\n%s\n", ok && st.misses == 3 && st.hits == 1 ? "ok" : "FAILED");
  return ok && st.misses == 3 && st.hits == 1 ? 0 : 1;
}
