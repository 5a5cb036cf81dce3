// The transformer encoder block of examples/transformer_block.hpp (pre-norm, causal 4-head
// self-attention, a GELU MLP; model 64, ff 256) on x[batch, seq, model]:
//
//   nax eager      the generic lambda called on nax::tensors (each op evaluated as it comes)
//   nax::jit       the same lambda traced once, fused, specialized per {batch, seq}, called on
//                  nax::tensors (a cached binding: the hit path)
//   PyTorch eager  the same block in torch ops, as a PyTorch user writes it (a child process,
//                  bench/peers/torch_peer.py; inference_mode)
//
// with 1 and 2 threads, interleaved, each checked against plain loops in double first; beside
// the in-run FMA peak of the thread count (the block's useful FLOPs per second).
//
//   bench_transformer [--reps N] [--threads 1,2]

#include "harness.hpp"

#include "../examples/transformer_block.hpp"

namespace {

using namespace encoder;

struct shape_case {
  std::size_t batch, seq;
};

// The block's multiply-adds, times 2: the projections, the scores and p·v over every key (the
// causal half is computed and masked, as by every variant), and the MLP.
double flops(const shape_case& c) {
  const double M = model::static_extent, A = attn::static_extent, F = ff::static_extent;
  const double tokens = double(c.batch) * double(c.seq);
  return tokens * (2 * (3 * M * A + A * M + 2 * M * F) + 4 * double(c.seq) * A);
}

std::string check(const weights& w, const nax::tensor<float, batch, seq, model>& x,
                  const float* got) {
  const std::size_t nb = x.extent<batch>(), n = x.extent<seq>(), M = model::static_extent;
  for (std::size_t b = 0; b < nb; ++b) {
    const std::vector<double> want = reference(w, x.data() + b * n * M, n);
    for (std::size_t i = 0; i < n * M; ++i) {
      const double g = got[b * n * M + i];
      if (!(std::abs(g - want[i]) <= 1e-4 * (1 + std::abs(want[i]))))
        return cat("element ", std::to_string(b * n * M + i), ": ", std::to_string(g), " vs ",
                   std::to_string(want[i]));
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  run_with_passive_omp_wait(argv);
  options o = parse(argc, argv);
  if (o.reps == 15) o.reps = 9;
  torch_process torch;
  const std::string torch_info = start_torch(torch);
  print_header("# transformer encoder block: nax eager, nax::jit, PyTorch eager", torch_info);
  std::printf("OpenMP:     OMP_WAIT_POLICY=%s\n", std::getenv("OMP_WAIT_POLICY"));
  const weights w(2026);
  auto block_jit = jitted();
  std::printf(
      "\nblock: model %zu, %zu heads × %zu, ff %zu, causal; nax::jit's program: %zu steps\n",
      model::static_extent, heads::static_extent, hd::static_extent, ff::static_extent,
      block_jit.executable().program().steps.size());
  if (torch.ok()) {
    const auto load = [&](const char* name, const auto& t, std::vector<std::size_t> dims) {
      torch.load(name, t.data(), dims);
    };
    const std::size_t M = model::static_extent, A = attn::static_extent, F = ff::static_extent;
    load("ln1_g", w.g1, {M});
    load("ln1_b", w.be1, {M});
    load("wq", w.wq, {M, A});
    load("wk", w.wk, {M, A});
    load("wv", w.wv, {M, A});
    load("wo", w.wo, {A, M});
    load("ln2_g", w.g2, {M});
    load("ln2_b", w.be2, {M});
    load("w1", w.w1, {M, F});
    load("b1", w.b1, {F});
    load("w2", w.w2, {F, M});
    load("b2", w.b2, {M});
    torch.must(cat("param heads ", std::to_string(heads::static_extent)));
    torch.must(cat("param eps ", std::to_string(epsilon)));
    torch.must(cat("param scale ", std::to_string(scale)));
  }

  struct row {
    shape_case c;
    int threads;
    double eager, jit, torch, peak;
  };
  std::vector<row> rows;
  for (const shape_case c : {shape_case{1, 64}, shape_case{16, 128}, shape_case{4, 512}}) {
    const auto x = nax::normal<float, batch, seq, model>(nax::rng{7, c.seq}, 0.0f, 1.0f,
                                                         batch(c.batch), seq(c.seq));
    if (torch.ok()) torch.load("x", x.data(), {c.batch, c.seq, model::static_extent});
    for (int t : o.threads) {
      nax::set_num_threads(t);
      std::vector<variant> vs;
      vs.push_back(timed(
          "nax eager", kind::nax, t,
          [&] {
            const auto y = w.apply(block, x);
            do_not_optimize(y);
          },
          [&] {
            const nax::tensor<float, batch, seq, model> y = w.apply(block, x);
            return check(w, x, y.data());
          }));
      vs.push_back(timed(
          "nax::jit", kind::nax, t,
          [&] {
            const auto y = w.apply(block_jit, x);
            do_not_optimize(y);
          },
          [&] { return check(w, x, w.apply(block_jit, x).data()); }));
      if (torch.ok())
        vs.push_back(
            torch_variant(torch, "PyTorch eager", "encoder", t, 0, x.size(),
                          [&](const std::vector<float>& got) { return check(w, x, got.data()); }));
      measure(vs, o.reps, 0.2, false);
      row r{c, t, vs[0].median, vs[1].median, vs.size() > 2 ? vs[2].median : 0, fma_peak_gflops(t)};
      rows.push_back(r);
      std::printf("batch %zu, seq %zu, %d thread%s:", c.batch, c.seq, t, t > 1 ? "s" : "");
      for (const auto& v : vs)
        std::printf(" %s %.3f ms (best %.3f);", v.name.c_str(), v.median * 1e3, v.best * 1e3);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf(
      "\n| batch × seq | threads | eager ms | jit ms | PyTorch ms | PyTorch / eager | "
      "PyTorch / jit | eager / jit | jit GFLOP/s | of FMA peak |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const row& r : rows) {
    const double gf = flops(r.c) / r.jit * 1e-9;
    auto ratio = [](double a, double b) {
      char s[32];
      std::snprintf(s, sizeof s, "%.2fx", a / b);
      return a > 0 && b > 0 ? std::string(s) : std::string("-");
    };
    std::printf("| %zu × %zu | %d | %.3f | %.3f | %s | %s | %s | %s | %.1f | %.2f |\n", r.c.batch,
                r.c.seq, r.threads, r.eager * 1e3, r.jit * 1e3,
                r.torch > 0 ? std::to_string(r.torch * 1e3).substr(0, 6).c_str() : "-",
                ratio(r.torch, r.eager).c_str(), ratio(r.torch, r.jit).c_str(),
                ratio(r.eager, r.jit).c_str(), gf, gf / r.peak);
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
