// A transformer encoder block (pre-norm, causal self-attention over 4 heads, a GELU MLP),
// written the way the model is usually described: examples/transformer_block.hpp. It runs
// eagerly and under nax::jit with dynamic batch and seq, and both are checked against plain
// loops in double. The jitted block is specialized once per {batch, seq}: the keys' axis kseq is
// seq renamed, not an axis of its own.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "transformer_block.hpp"

using namespace encoder;

namespace {

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
