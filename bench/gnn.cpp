// Graph aggregations and graph attention of nax::gnn (issue 19) on R-MAT graphs made here,
// against PyTorch as PyG computes them without its compiled extensions (the source rows gathered
// per edge, per-edge ops, index_add_ into the destinations; bench/peers/torch_peer.py) and
// torch.sparse.mm for the sum, on 1 and 2 threads, beside the bandwidth limit of the sum: the
// bytes it must move (indices and offsets, h read once, the result written) over the time of a
// copy of as many bytes in the same run.
//
//   aggregate_sum  out[v] = sum over u -> v of h[u]                  h: [node, 64]
//   gcn            the same, each term / sqrt(outdeg(u) indeg(v))    h: [node, 64]
//   gat            one-pass attention, 4 heads × 16                  h: [node, 4, 16]
//
// Each variant is checked against nax's result first.
//
//   bench_gnn [--reps N] [--threads 1,2] [--n LOG2_NODES]   (edges: 16 per node)

#include "harness.hpp"

#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/gat.hpp>

namespace {

using feat = nax::axis<"feat", 64>;
using head = nax::axis<"head", 4>;
using hfeat = nax::axis<"hfeat", 16>;
using nax::gnn::node;

// An R-MAT graph (Chakrabarti et al.: a = 0.57, b = c = 0.19): 2^scale nodes, `edges` edges,
// a power law of degrees with a few hubs.
nax::gnn::csr rmat(int scale, std::size_t edges, std::vector<float>& src_f,
                   std::vector<float>& dst_f) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::int32_t> src(edges), dst(edges);
  for (std::size_t e = 0; e < edges; ++e) {
    std::int32_t s = 0, d = 0;
    for (int bit = 0; bit < scale; ++bit) {
      const double r = u(rng);
      const int quadrant = r < 0.57 ? 0 : r < 0.76 ? 1 : r < 0.95 ? 2 : 3;
      s = (s << 1) | (quadrant >> 1);
      d = (d << 1) | (quadrant & 1);
    }
    src[e] = s;
    dst[e] = d;
  }
  src_f.assign(src.begin(), src.end());
  dst_f.assign(dst.begin(), dst.end());
  return nax::gnn::csr::from_edges(std::size_t{1} << scale, src, dst);
}

// "" if got is want within 1e-4 of the row's scale.
std::string compare(const float* got, const float* want, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (!(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i]))))
      return cat("element ", std::to_string(i), ": ", std::to_string(got[i]), " vs ",
                 std::to_string(want[i]));
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("OMP_WAIT_POLICY")) {  // as bench/transformer.cpp: see there
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  options o = parse(argc, argv);
  if (o.reps == 15) o.reps = 7;
  const int scale = o.n ? static_cast<int>(o.n) : 16;
  torch_process torch;
  const std::string torch_info = start_torch(torch);
  print_header("# gnn: aggregations and attention over R-MAT graphs, nax vs PyTorch", torch_info);

  std::vector<float> src_f, dst_f;
  const std::size_t n = std::size_t{1} << scale, edges = 16 * n;
  const nax::gnn::csr g = rmat(scale, edges, src_f, dst_f);
  (void)g.transpose();  // made once, before timing (gcn reads out-degrees)
  const nax::gnn::degree_stats d = g.degrees();
  std::printf(
      "\ngraph: R-MAT, %zu nodes, %zu edges; in-degree max %zu, %zu nodes without "
      "in-edges; out-degree max %zu\n",
      n, edges, d.max_in, d.no_in_edges, d.max_out);

  const auto h = nax::uniform<float, node, feat>(nax::rng{1, 0}, -1.0f, 1.0f, node{n});
  const auto hg = nax::uniform<float, node, head, hfeat>(nax::rng{2, 0}, -1.0f, 1.0f, node{n});
  const auto a_src = nax::uniform<float, head, hfeat>(nax::rng{3, 0}, -0.5f, 0.5f);
  const auto a_dst = nax::uniform<float, head, hfeat>(nax::rng{4, 0}, -0.5f, 0.5f);
  if (torch.ok()) {
    torch.load("src", src_f.data(), {edges});
    torch.load("dst", dst_f.data(), {edges});
    torch.must("param slope 0.2");
  }
  // The bytes a sum must move: indices and offsets, h once, the result once.
  const double sum_bytes = double(edges) * 4 + double(n + 1) * 8 + 2.0 * double(h.size()) * 4;
  std::vector<float> copy_from(static_cast<std::size_t>(sum_bytes / 8)), copy_to(copy_from.size());

  for (int t : o.threads) {
    nax::set_num_threads(t);
    const auto want_sum = nax::gnn::aggregate_sum(g, h);
    const auto want_gcn = nax::gnn::gcn(g, h);
    const auto want_gat = nax::gnn::gat(g, hg, a_src, a_dst, 0.2f);
    for (const char* op : {"sum", "gcn", "gat"}) {
      const std::string which = op;
      std::vector<variant> vs;
      const float* want = which == "sum"   ? want_sum.data()
                          : which == "gcn" ? want_gcn.data()
                                           : want_gat.data();
      const std::size_t count = which == "gat" ? hg.size() : h.size();
      if (which == "gat") {
        vs.push_back(timed(
            "nax gat (one pass)", kind::nax, t,
            [&] { do_not_optimize(nax::gnn::gat(g, hg, a_src, a_dst, 0.2f).data()[0]); },
            [&] { return compare(nax::gnn::gat(g, hg, a_src, a_dst, 0.2f).data(), want, count); }));
      } else {
        auto run = [&] {
          return which == "sum" ? nax::gnn::aggregate_sum(g, h) : nax::gnn::gcn(g, h);
        };
        vs.push_back(timed(
            cat("nax ", which), kind::nax, t, [&] { do_not_optimize(run().data()[0]); },
            [&] { return compare(run().data(), want, count); }));
      }
      if (which == "sum") vs.back().bytes = sum_bytes;  // (GB/s: the sum's alone)
      if (torch.ok()) {
        if (which == "gat") {
          torch.load("x", hg.data(), {n, head::static_extent, hfeat::static_extent});
          torch.load("a_src", a_src.data(), {head::static_extent, hfeat::static_extent});
          torch.load("a_dst", a_dst.data(), {head::static_extent, hfeat::static_extent});
        } else {
          torch.load("x", h.data(), {n, feat::static_extent});
        }
        auto check = [want, count](const std::vector<float>& got) {
          return compare(got.data(), want, count);
        };
        vs.push_back(torch_variant(torch, "PyTorch, per-edge (PyG's way)", cat("gnn_", which), t,
                                   which == "sum" ? sum_bytes : 0, count, check));
        if (which == "sum")
          vs.push_back(
              torch_variant(torch, "PyTorch sparse.mm", "gnn_spmm", t, sum_bytes, count, check));
      }
      if (which == "sum") {
        variant copy = timed(
            "copy of the sum's bytes (limit)", kind::limit, t,
            [&] {
              const std::size_t m = copy_from.size();
              nax::parallel_for(0, m, 1 << 16, [&](std::size_t lo, std::size_t hi) {
                std::memcpy(copy_to.data() + lo, copy_from.data() + lo, (hi - lo) * 4);
              });
              do_not_optimize(copy_to[0]);
            },
            [] { return std::string(); });
        copy.bytes = sum_bytes;
        vs.push_back(copy);
      }
      measure(vs, o.reps, 0.2, false);
      std::printf("\n### %s, %d thread%s\n\n", op, t, t > 1 ? "s" : "");
      print_table(
          vs, which == "gat" ? 3.0 : 1.5,
          which == "sum"
              ? std::vector<std::pair<std::string, double>>{{"copy of the sum's bytes (limit)",
                                                             0.6}}
              : std::vector<std::pair<std::string, double>>{});
      std::fflush(stdout);
    }
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
