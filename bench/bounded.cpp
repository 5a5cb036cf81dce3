// The size policies of a bounded axis (docs/bounded.md) on a served stream: the transformer
// encoder block of examples/transformer_block.hpp under nax::jit, with x[batch = 1, seq <= 512,
// model], called with sequence lengths drawn uniformly from 1..512:
//
//   exact     one specialization per length (today's default)
//   buckets   one per power of two up to 512: 10
//   bound     one at 512
//
// For each: the stream's total time including every specialization (cold), the same stream
// again (steady: every length seen), the specializations, the extents whose steps were made, and
// the arena bytes the cache holds. Beside them, the fixed-size run of each length: a length
// called again right after itself (the hit path's best case), summed over the stream. Every
// policy's results are first checked to be the exact policy's bits at several lengths.
//
//   bench_bounded [--calls N] [--threads 1,2]

#include "harness.hpp"

#include "../examples/transformer_block.hpp"

namespace {

using namespace encoder;
using bseq = nax::axis<"seq", nax::upto(512)>;
using input = nax::tensor<float, batch, bseq, model>;
constexpr std::size_t bound = 512;

auto jitted_bounded(nax::graph::size_policy policy) {
  nax::graph::compile_options o;
  o.max_specializations = 2 * bound;  // exact keeps every length: its steady state is all hits
  o.max_extents_per_specialization = 2 * bound;
  o.bounded = {policy};
  return jitted<bseq>(o);
}

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

struct policy_run {
  const char* name;
  nax::graph::size_policy policy;
  double cold = 0, steady = 0;
  nax::specialization_stats stats;
};

}  // namespace

int main(int argc, char** argv) {
  options o = parse(argc, argv);
  const std::size_t calls = o.calls == 20 ? 2000 : o.calls;  // (20: the harness's default)
  print_header("# bounded axis: exact vs buckets vs bound on a served stream", "not used");
  const weights w(2026);
  std::vector<input> xs;
  for (std::size_t n = 1; n <= bound; ++n)
    xs.push_back(
        nax::normal<float, batch, bseq, model>(nax::rng{7, n}, 0.0f, 1.0f, batch{1}, bseq{n}));
  std::mt19937 rng(2026);
  std::vector<std::size_t> stream(calls);
  for (std::size_t& n : stream) n = std::uniform_int_distribution<std::size_t>(1, bound)(rng);
  std::vector<char> seen(bound + 1, 0);
  std::size_t distinct = 0;
  for (std::size_t n : stream) distinct += seen[n] ? 0 : (seen[n] = 1);
  std::printf("\nblock: model %zu, %zu heads × %zu, ff %zu, causal; x[batch 1, seq <= %zu]\n",
              model::static_extent, heads::static_extent, hd::static_extent, ff::static_extent,
              bound);
  std::printf("stream: %zu calls, lengths uniform in 1..%zu (%zu distinct)\n", calls, bound,
              distinct);

  for (int threads : o.threads) {
    nax::set_num_threads(threads);
    std::printf("\n## %d thread%s\n\n", threads, threads == 1 ? "" : "s");
    policy_run runs[] = {{"exact", nax::graph::size_policy::exact, 0, 0, {}},
                         {"buckets", nax::graph::size_policy::buckets, 0, 0, {}},
                         {"bound", nax::graph::size_policy::bound, 0, 0, {}}};
    std::vector<double> fixed(bound + 1, 0);
    for (policy_run& r : runs) {
      auto f = jitted_bounded(r.policy);
      auto pass = [&] {
        const auto start = clock_type::now();
        for (std::size_t n : stream) do_not_optimize(w.apply(f, xs[n - 1]).data()[0]);
        return seconds_since(start);
      };
      r.cold = pass();
      r.stats = f.executable().stats();
      r.steady = std::min(pass(), pass());
      if (r.policy == nax::graph::size_policy::exact) {
        // The fixed-size run of each length: called right after itself (best of 3).
        for (std::size_t n = 1; n <= bound; ++n) {
          if (!seen[n]) continue;
          do_not_optimize(w.apply(f, xs[n - 1]).data()[0]);
          double best = 1e30;
          for (int k = 0; k < 3; ++k) {
            const auto start = clock_type::now();
            do_not_optimize(w.apply(f, xs[n - 1]).data()[0]);
            best = std::min(best, seconds_since(start));
          }
          fixed[n] = best;
        }
      }
    }
    // The same bits as exact (one fresh executable per policy, lengths across the buckets).
    {
      auto exact = jitted_bounded(nax::graph::size_policy::exact);
      for (policy_run& r : runs) {
        if (r.policy == nax::graph::size_policy::exact) continue;
        auto f = jitted_bounded(r.policy);
        for (std::size_t n : {1u, 2u, 3u, 100u, 255u, 256u, 257u, 511u, 512u}) {
          const input want = w.apply(exact, xs[n - 1]), got = w.apply(f, xs[n - 1]);
          if (std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) != 0)
            fail(cat(r.name, ": length ", std::to_string(n), " differs from exact"));
        }
      }
    }
    double fixed_total = 0;
    for (std::size_t n : stream) fixed_total += fixed[n];
    const double exact_steady = runs[0].steady;
    std::printf(
        "| policy | specializations | extents made | arena MiB held | total (cold) s | steady s | "
        "cold / exact steady | steady / exact steady |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const policy_run& r : runs)
      std::printf("| %s | %zu | %zu | %.1f | %.3f | %.3f | %.3f | %.3f |\n", r.name, r.stats.total,
                  r.stats.extent_misses, double(r.stats.arena_bytes) / (1 << 20), r.cold, r.steady,
                  r.cold / exact_steady, r.steady / exact_steady);
    std::printf("\nfixed-size runs of the stream's lengths (each after itself), summed: %.3f s\n",
                fixed_total);
    std::printf("exact steady / fixed-size: %.3f (target <= 1.05)\n", exact_steady / fixed_total);
    std::printf(
        "buckets total / exact steady: %.3f (target <= 1.15), specializations %zu vs %zu "
        "(%.0fx fewer; target >= 20x)\n",
        runs[1].cold / exact_steady, runs[1].stats.total, runs[0].stats.total,
        double(runs[0].stats.total) / double(runs[1].stats.total));
    std::printf("bound total / exact steady: %.3f, specializations %zu\n",
                runs[2].cold / exact_steady, runs[2].stats.total);
    std::printf("exact total (cold) / exact steady: %.3f\n", runs[0].cold / exact_steady);
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
