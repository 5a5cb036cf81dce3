// Graph aggregations and graph attention of nax::gnn (issue 19) on R-MAT graphs made here,
// against PyTorch as PyG computes them without its compiled extensions (the source rows gathered
// per edge, per-edge ops, index_add_ into the destinations; bench/peers/torch_peer.py) and
// torch.sparse.mm for the sum, on 1 and 2 threads, beside the bandwidth limit of the sum: the
// bytes it must move (indices and offsets, h read once, the result written) over the time of a
// copy of as many bytes in the same run.
//
//   sum      out[v] = sum over u -> v of h[u]                        h: [node, 64]
//   gcn      the same, each term / sqrt(outdeg(u) indeg(v))          h: [node, 64]
//   gat      attention, 4 heads × 16 (one pass; and the seed's two)   h: [node, 4, 16]
//   gat fwd+bwd  the gradients of sum(dout * gat(h)) by h, a_src, a_dst
//
// nax runs each as a prebuilt layer (aggregate_sum, gcn, gat + gat_grad) and as a vertex program
// (zoom_in, zoom_in_grad). Each variant is checked against nax's prebuilt result first. Then the
// peak memory one call adds (resident set, 1 thread), against the E × F bytes of a per-edge
// buffer.
//
//   bench_gnn [--reps N] [--threads 1,2] [--n LOG2_NODES]   (edges: 16 per node)

#include "harness.hpp"

#include <malloc.h>

#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/gat.hpp>
#include <nax/gnn/gat_grad.hpp>
#include <nax/gnn/vertex.hpp>

namespace {

using feat = nax::axis<"feat", 64>;
using head = nax::axis<"head", 4>;
using hfeat = nax::axis<"hfeat", 16>;
using nax::gnn::node;
namespace gnn = nax::gnn;

// An R-MAT graph (Chakrabarti et al.: a = 0.57, b = c = 0.19): 2^scale nodes, `edges` edges,
// a power law of degrees with a few hubs.
gnn::csr rmat(int scale, std::size_t edges, std::vector<float>& src_f, std::vector<float>& dst_f) {
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
  return gnn::csr::from_edges(std::size_t{1} << scale, src, dst);
}

// "" if got is want within tolerance × (1 + the largest |want|) (sums of many terms, in other
// orders: a hub's thousands of in-edges), or, with tolerance 0, within 1e-4 of each value.
std::string compare(const float* got, const float* want, std::size_t count,
                    double scaled_tolerance = 0) {
  double largest = 0;
  for (std::size_t i = 0; i < count; ++i) largest = std::max(largest, double(std::abs(want[i])));
  for (std::size_t i = 0; i < count; ++i) {
    const double bound =
        scaled_tolerance > 0 ? scaled_tolerance * (1 + largest) : 1e-4 * (1 + std::abs(want[i]));
    if (!(std::abs(got[i] - want[i]) <= bound))
      return cat("element ", std::to_string(i), ": ", std::to_string(got[i]), " vs ",
                 std::to_string(want[i]));
  }
  return "";
}

std::size_t status_kb(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(key)) return std::stoul(line.substr(std::strlen(key)));
  return 0;
}

// The bytes one call of f adds to the resident set at its peak (-1 if the peak cannot be reset).
template <class F>
double peak_extra(F f) {
  malloc_trim(0);
  {
    std::ofstream refs("/proc/self/clear_refs");
    refs << "5";
    if (!refs) return -1;
  }
  const std::size_t base = status_kb("VmRSS:");
  f();
  return double(status_kb("VmHWM:") - base) * 1024;
}

// The gradients of gat as one vector: h, a_src, a_dst.
std::vector<float> flat(const gnn::gat_grads<float, head, hfeat>& d) {
  std::vector<float> out(d.h.data(), d.h.data() + d.h.size());
  out.insert(out.end(), d.a_src.data(), d.a_src.data() + d.a_src.size());
  out.insert(out.end(), d.a_dst.data(), d.a_dst.data() + d.a_dst.size());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  run_with_passive_omp_wait(argv);
  options o = parse(argc, argv);
  if (o.reps == 15) o.reps = 7;
  const int scale = o.n ? static_cast<int>(o.n) : 16;
  torch_process torch;
  const std::string torch_info = start_torch(torch);
  print_header("# gnn: aggregations and attention over R-MAT graphs, nax vs PyTorch", torch_info);

  std::vector<float> src_f, dst_f;
  const std::size_t n = std::size_t{1} << scale, edges = 16 * n;
  const gnn::csr g = rmat(scale, edges, src_f, dst_f);
  (void)g.transpose();  // made once, before timing (gcn reads out-degrees)
  const gnn::degree_stats d = g.degrees();
  std::printf(
      "\ngraph: R-MAT, %zu nodes, %zu edges; in-degree max %zu (%zu nodes above split_degree "
      "%zu), %zu nodes without in-edges; out-degree max %zu\n",
      n, edges, d.max_in, g.split_nodes().size(), gnn::split_degree, d.no_in_edges, d.max_out);

  const auto h = nax::uniform<float, node, feat>(nax::rng{1, 0}, -1.0f, 1.0f, node{n});
  const auto hg = nax::uniform<float, node, head, hfeat>(nax::rng{2, 0}, -1.0f, 1.0f, node{n});
  const auto a_src = nax::uniform<float, head, hfeat>(nax::rng{3, 0}, -0.5f, 0.5f);
  const auto a_dst = nax::uniform<float, head, hfeat>(nax::rng{4, 0}, -0.5f, 0.5f);
  const auto dout = nax::uniform<float, node, head, hfeat>(nax::rng{5, 0}, -1.0f, 1.0f, node{n});
  if (torch.ok()) {
    torch.load("src", src_f.data(), {edges});
    torch.load("dst", dst_f.data(), {edges});
    torch.load("dout", dout.data(), {n, head::static_extent, hfeat::static_extent});
    torch.must("param slope 0.2");
  }
  // The bytes a sum must move: indices and offsets, h once, the result once.
  const double sum_bytes = double(edges) * 4 + double(n + 1) * 8 + 2.0 * double(h.size()) * 4;
  std::vector<float> copy_from(static_cast<std::size_t>(sum_bytes / 8)), copy_to(copy_from.size());

  // The vertex programs: the sum; GAT the seed's way (two sums) and in one pass. The node-wide
  // halves of the scores first, as ordinary nax ops.
  const auto vertex_sum = [&] {
    return gnn::zoom_in(g, [&](const gnn::vertex& v) { return gnn::sum(v.src(h)); });
  };
  const auto halves = [&] {
    return std::pair<nax::tensor<float, node, head>, nax::tensor<float, node, head>>(
        nax::sum<hfeat>(hg * a_src), nax::sum<hfeat>(hg * a_dst));
  };
  const auto vertex_gat_one = [&] {
    const auto [el, er] = halves();
    return gnn::zoom_in(g, [&](const gnn::vertex& v) {
      return gnn::softmax_sum(gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f), v.src(hg));
    });
  };
  const auto vertex_gat_two = [&] {
    const auto [el, er] = halves();
    return gnn::zoom_in(g, [&](const gnn::vertex& v) {
      auto coeff = gnn::exp(gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f));
      return gnn::sum(coeff / gnn::sum(coeff) * v.src(hg));
    });
  };
  // Forward and backward through the vertex program, the halves' gradients chained by hand.
  const auto vertex_gat_grads = [&] {
    const auto [el, er] = halves();
    const auto program = [&](const gnn::vertex& v) {
      return gnn::softmax_sum(gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f), v.src(hg));
    };
    do_not_optimize(gnn::zoom_in(g, program).data()[0]);
    const auto grads = gnn::zoom_in_grad(g, program, dout);
    const auto d_el = grads.of(el), d_er = grads.of(er);
    gnn::gat_grads<float, head, hfeat> out{grads.of(hg) + d_el * a_src + d_er * a_dst,
                                           nax::sum<node>(d_el * hg), nax::sum<node>(d_er * hg)};
    return out;
  };
  // The same through nax::value_and_grad: gat as a graph node (gnn/traced.hpp), its VJP the
  // hand-derived kernels as two nodes.
  auto traced_step = nax::value_and_grad(
      [&](auto x, auto r, auto as, auto ad) {
        return nax::sum<node>(nax::sum<head>(nax::sum<hfeat>(gnn::gat(g, x, as, ad, 0.2f) * r)));
      },
      nax::input<float, node, head, hfeat>("h"), nax::data<float, node, head, hfeat>("dout"),
      nax::input<float, head, hfeat>("a_src"), nax::input<float, head, hfeat>("a_dst"));
  const auto traced_gat_grads = [&] {
    auto [loss, grads] = traced_step(hg, dout, a_src, a_dst);
    do_not_optimize(loss.data()[0]);
    return gnn::gat_grads<float, head, hfeat>{std::move(std::get<0>(grads)),
                                              std::move(std::get<1>(grads)),
                                              std::move(std::get<2>(grads))};
  };
  const auto prebuilt_gat_grads = [&] {
    do_not_optimize(gnn::gat(g, hg, a_src, a_dst, 0.2f).data()[0]);
    return gnn::gat_grad(g, hg, a_src, a_dst, 0.2f, dout);
  };

  for (int t : o.threads) {
    nax::set_num_threads(t);
    const auto want_sum = gnn::aggregate_sum(g, h);
    const auto want_gcn = gnn::gcn(g, h);
    const auto want_gat = gnn::gat(g, hg, a_src, a_dst, 0.2f);
    const std::vector<float> want_grads = flat(prebuilt_gat_grads());
    for (const std::string which : {"sum", "gcn", "gat", "gat fwd+bwd"}) {
      std::vector<variant> vs;
      const bool backward = which == "gat fwd+bwd";
      const float* want = which == "sum"   ? want_sum.data()
                          : which == "gcn" ? want_gcn.data()
                          : backward       ? want_grads.data()
                                           : want_gat.data();
      const std::size_t count = backward         ? want_grads.size()
                                : which == "gat" ? hg.size()
                                                 : h.size();
      const double tolerance =
          backward ? 1e-3 : 1e-5;  // scaled: sums of ~30 000 terms in other orders
      const auto check = [want, count, tolerance](const float* got) {
        return compare(got, want, count, tolerance);
      };
      if (which == "sum") {
        vs.push_back(timed(
            "nax aggregate_sum", kind::nax, t,
            [&] { do_not_optimize(gnn::aggregate_sum(g, h).data()[0]); },
            [&] { return check(gnn::aggregate_sum(g, h).data()); }));
        vs.push_back(timed(
            "nax zoom_in: sum(v.src(h))", kind::baseline, t,
            [&] { do_not_optimize(vertex_sum().data()[0]); },
            [&] { return check(vertex_sum().data()); }));
      } else if (which == "gcn") {
        vs.push_back(timed(
            "nax gcn", kind::nax, t, [&] { do_not_optimize(gnn::gcn(g, h).data()[0]); },
            [&] { return check(gnn::gcn(g, h).data()); }));
      } else if (which == "gat") {
        vs.push_back(timed(
            "nax gat (one pass)", kind::nax, t,
            [&] { do_not_optimize(gnn::gat(g, hg, a_src, a_dst, 0.2f).data()[0]); },
            [&] { return check(gnn::gat(g, hg, a_src, a_dst, 0.2f).data()); }));
        vs.push_back(timed(
            "nax zoom_in: softmax_sum (one pass)", kind::baseline, t,
            [&] { do_not_optimize(vertex_gat_one().data()[0]); },
            [&] { return check(vertex_gat_one().data()); }));
        vs.push_back(timed(
            "nax zoom_in: the seed's two sums (two passes)", kind::baseline, t,
            [&] { do_not_optimize(vertex_gat_two().data()[0]); },
            [&] { return check(vertex_gat_two().data()); }));
      } else {
        vs.push_back(timed(
            "nax gat + gat_grad", kind::nax, t,
            [&] { do_not_optimize(prebuilt_gat_grads().h.data()[0]); },
            [&] { return check(flat(prebuilt_gat_grads()).data()); }));
        vs.push_back(timed(
            "nax value_and_grad (gat as a graph node)", kind::baseline, t,
            [&] { do_not_optimize(traced_gat_grads().h.data()[0]); },
            [&] { return check(flat(traced_gat_grads()).data()); }));
        vs.push_back(timed(
            "nax zoom_in + zoom_in_grad", kind::baseline, t,
            [&] { do_not_optimize(vertex_gat_grads().h.data()[0]); },
            [&] { return check(flat(vertex_gat_grads()).data()); }));
      }
      if (which == "sum") vs.front().bytes = vs[1].bytes = sum_bytes;  // (GB/s: the sum's alone)
      if (torch.ok()) {
        if (which == "sum" || which == "gcn") {
          torch.load("x", h.data(), {n, feat::static_extent});
        } else {
          torch.load("x", hg.data(), {n, head::static_extent, hfeat::static_extent});
          torch.load("a_src", a_src.data(), {head::static_extent, hfeat::static_extent});
          torch.load("a_dst", a_dst.data(), {head::static_extent, hfeat::static_extent});
        }
        const auto checked = [check](const std::vector<float>& got) { return check(got.data()); };
        const std::string op = backward ? "gnn_gat_grads" : cat("gnn_", which);
        vs.push_back(torch_variant(torch, "PyTorch, per-edge (PyG's way)", op, t,
                                   which == "sum" ? sum_bytes : 0, count, checked));
        if (which == "sum")
          vs.push_back(
              torch_variant(torch, "PyTorch sparse.mm", "gnn_spmm", t, sum_bytes, count, checked));
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
      std::printf("\n### %s, %d thread%s\n\n", which.c_str(), t, t > 1 ? "s" : "");
      print_table(
          vs,
          which == "gat" ? 3.0
          : backward     ? 2.0
                         : 1.5,
          which == "sum"
              ? std::vector<std::pair<std::string, double>>{{"copy of the sum's bytes (limit)",
                                                             0.6}}
              : std::vector<std::pair<std::string, double>>{});
      if (which == "gat") {
        const variant* two = find(vs, "nax zoom_in: the seed's two sums (two passes)");
        for (const char* one : {"nax gat (one pass)", "nax zoom_in: softmax_sum (one pass)"}) {
          const double r = two->median / find(vs, one)->median;
          std::printf("%s / two passes: %.2fx by median (target >= 1.30x: %s)\n", one, r,
                      r >= 1.3 ? "met" : "MISSED");
        }
      }
      std::fflush(stdout);
    }
  }

  // Peak memory of one call, 1 thread.
  nax::set_num_threads(1);
  if (torch.ok()) torch.must("threads 1");
  const double per_edge_bytes = double(edges) * double(hg.size() / n) * 4;
  std::printf("\n### peak memory one call adds (resident set, 1 thread)\n\n");
  std::printf("An E × F buffer of floats (one value per edge and feature) is %.1f MiB.\n\n",
              per_edge_bytes / (1 << 20));
  std::printf("| op | variant | MiB |\n| --- | --- | ---: |\n");
  const auto row = [](const char* op, const char* name, double bytes) {
    std::printf("| %s | %s | %.1f |\n", op, name, bytes / (1 << 20));
  };
  const auto torch_peak = [&](const char* op, const char* name, const std::string& peer_op) {
    if (torch.ok()) row(op, name, std::stod(torch.must(cat("peak ", peer_op))));
  };
  row("sum", "nax aggregate_sum",
      peak_extra([&] { do_not_optimize(gnn::aggregate_sum(g, h).data()[0]); }));
  row("sum", "nax zoom_in", peak_extra([&] { do_not_optimize(vertex_sum().data()[0]); }));
  if (torch.ok()) torch.load("x", h.data(), {n, feat::static_extent});
  torch_peak("sum", "PyTorch, per-edge", "gnn_sum");
  torch_peak("sum", "PyTorch sparse.mm", "gnn_spmm");
  row("gat", "nax gat",
      peak_extra([&] { do_not_optimize(gnn::gat(g, hg, a_src, a_dst, 0.2f).data()[0]); }));
  row("gat", "nax zoom_in, one pass",
      peak_extra([&] { do_not_optimize(vertex_gat_one().data()[0]); }));
  row("gat", "nax zoom_in, two passes",
      peak_extra([&] { do_not_optimize(vertex_gat_two().data()[0]); }));
  if (torch.ok()) {
    torch.load("x", hg.data(), {n, head::static_extent, hfeat::static_extent});
    torch.load("a_src", a_src.data(), {head::static_extent, hfeat::static_extent});
    torch.load("a_dst", a_dst.data(), {head::static_extent, hfeat::static_extent});
  }
  torch_peak("gat", "PyTorch, per-edge", "gnn_gat");
  row("gat fwd+bwd", "nax gat + gat_grad",
      peak_extra([&] { do_not_optimize(prebuilt_gat_grads().h.data()[0]); }));
  row("gat fwd+bwd", "nax value_and_grad",
      peak_extra([&] { do_not_optimize(traced_gat_grads().h.data()[0]); }));
  row("gat fwd+bwd", "nax zoom_in + zoom_in_grad",
      peak_extra([&] { do_not_optimize(vertex_gat_grads().h.data()[0]); }));
  torch_peak("gat fwd+bwd", "PyTorch, per-edge", "gnn_gat_grads");
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
