#pragma once
// nax::gnn::gat_grad: the VJP of nax::gnn::gat (gnn/gat.hpp). Per head, with s_uv the score
// before the leaky ReLU, alpha_uv the softmax over v's in-edges and dout the output's cotangent:
//
//   dalpha_uv = <dout[v], h[u]>
//   ds_uv     = alpha_uv (dalpha_uv - sum over u' -> v of alpha_u'v dalpha_u'v)
//               times 1 where s_uv > 0, else the negative slope
//   dh[u]     = sum over u -> v of alpha_uv dout[v] + (sum over u -> v of ds_uv) a_src
//                                                   + (sum over w -> u of ds_wu) a_dst
//   da_src    = sum over u of (sum over u -> v of ds_uv) h[u]
//   da_dst    = sum over v of (sum over u -> v of ds_uv) h[v]
//
// Three passes: over the destinations (the softmax, then alpha and ds per edge and head: the two
// O(edges × heads) buffers), over the sources through the transpose (dh, each row one thread's:
// no atomics), and over fixed blocks of nodes for da_src and da_dst (partials added in block
// order). Scores are in double, as in the forward, and no sum depends on the thread count: the
// same bits on any thread count.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/gnn/gat.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {

/// gat's gradients with respect to h, a_src and a_dst.
template <class T, class Head, class Feat>
struct gat_grads {
  tensor<T, node, Head, Feat> h;
  tensor<T, Head, Feat> a_src, a_dst;
};

namespace detail {

// <x, y> over f entries in double, four running sums (a dependency chain a quarter as long as
// dot_row's: this one runs once per edge, not per node).
template <class T>
double dot_rows4(const T* x, const T* y, std::size_t f) {
  double s[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= f; i += 4)
    for (std::size_t j = 0; j < 4; ++j) s[j] += double(x[i + j]) * double(y[i + j]);
  for (; i < f; ++i) s[0] += double(x[i]) * double(y[i]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace detail

namespace detail {

// gat_grad; with_h false: dh is not computed (its tensor left unset), and its pass over the
// sources reduced to the sums da_src needs (for a graph node whose result is da_src and da_dst
// alone: gnn/traced.hpp).
template <class T, class Head, class Feat>
gat_grads<T, Head, Feat> gat_grad(const csr& g, const tensor<T, node, Head, Feat>& h,
                                  const tensor<T, Head, Feat>& a_src,
                                  const tensor<T, Head, Feat>& a_dst, T negative_slope,
                                  const tensor<T, node, Head, Feat>& dout, bool with_h) {
  const std::size_t n = h.template extent<node>();
  g.check_nodes("gat_grad", n);
  detail::check_attention("gat_grad", h, a_src, a_dst);
  const std::size_t heads = h.template extent<Head>(), f = h.template extent<Feat>();
  if (dout.template extent<node>() != n)
    nax::detail::throw_shape_error("nax::gnn::gat_grad: dout has ", dout.template extent<node>(),
                                   " nodes, the graph ", n);
  if (dout.template extent<Head>() != heads || dout.template extent<Feat>() != f)
    nax::detail::throw_shape_error("nax::gnn::gat_grad: dout has ", dout.template extent<Head>(),
                                   " heads of ", dout.template extent<Feat>(), " features, h ",
                                   heads, " of ", f);
  // Without dh, its tensor is never touched (nor its pages mapped).
  gat_grads<T, Head, Feat> grads{with_h ? zeros_like(h) : tensor<T, node, Head, Feat>(h.extents()),
                                 zeros_like(a_src), zeros_like(a_dst)};
  if (h.size() == 0) return grads;

  std::vector<double> src_half, dst_half;
  detail::score_halves(h, a_src, a_dst, src_half, dst_half);
  const double slope = static_cast<double>(negative_slope);
  auto score = [&](std::size_t u, std::size_t v, std::size_t k) {
    const double s = src_half[u * heads + k] + dst_half[v * heads + k];
    return s > 0 ? s : s * slope;  // the forward's expression: the same bits
  };
  const T* x = h.data();
  const T* dy = dout.data();
  const std::size_t hf = heads * f;
  const std::size_t grain =
      std::max<std::size_t>(1, 2048 / std::max<std::size_t>(1, hf * (1 + g.num_edges() / n)));

  // Pass 1, per destination v, over its in-edges (the heads side by side, as h's rows hold
  // them): alpha and ds per edge and head (by edge id, the numbering both groupings share), and
  // the sum of v's ds, the coefficient of a_dst in dh[v].
  std::vector<double> ds(g.num_edges() * heads);
  std::vector<T> alpha(g.num_edges() * heads);
  std::vector<double> in_sum(n * heads, 0.0);
  {
    const std::span<const std::int64_t> offsets = g.offsets();
    const std::span<const std::int32_t> sources = g.sources(), ids = g.edge_ids();
    parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
      std::vector<double> p;  // per in-edge and head: the score, then exp(score - max)
      std::vector<double> most(heads), total(heads), mean(heads);
      for (std::size_t v = lo; v < hi; ++v) {
        const auto begin = static_cast<std::size_t>(offsets[v]),
                   end = static_cast<std::size_t>(offsets[v + 1]);
        if (begin == end) continue;
        p.resize((end - begin) * heads);
        std::fill(most.begin(), most.end(), -std::numeric_limits<double>::infinity());
        for (std::size_t e = begin; e < end; ++e)
          for (std::size_t k = 0; k < heads; ++k) {
            const double s = score(static_cast<std::size_t>(sources[e]), v, k);
            p[(e - begin) * heads + k] = s;
            most[k] = std::max(most[k], s);
          }
        // dalpha into ds for now, and its mean under the softmax, sum of alpha dalpha.
        std::fill(total.begin(), total.end(), 0.0);
        std::fill(mean.begin(), mean.end(), 0.0);
        for (std::size_t e = begin; e < end; ++e) {
          const auto u = static_cast<std::size_t>(sources[e]);
          const auto id = static_cast<std::size_t>(ids[e]);
          for (std::size_t k = 0; k < heads; ++k) {
            double& pe = p[(e - begin) * heads + k];
            pe = std::exp(pe - most[k]);
            const double da = detail::dot_rows4(dy + v * hf + k * f, x + u * hf + k * f, f);
            ds[id * heads + k] = da;
            total[k] += pe;
            mean[k] += pe * da;
          }
        }
        for (std::size_t k = 0; k < heads; ++k) mean[k] /= total[k];
        double* sum = in_sum.data() + v * heads;
        for (std::size_t e = begin; e < end; ++e) {
          const auto u = static_cast<std::size_t>(sources[e]);
          const auto id = static_cast<std::size_t>(ids[e]);
          for (std::size_t k = 0; k < heads; ++k) {
            const double a = p[(e - begin) * heads + k] / total[k];
            const double s = src_half[u * heads + k] + dst_half[v * heads + k];
            double& d = ds[id * heads + k];
            d = a * (d - mean[k]) * (s > 0 ? 1.0 : slope);
            sum[k] += d;
            alpha[id * heads + k] = static_cast<T>(a);
          }
        }
      }
    });
  }

  // Pass 2, per source u, over its out-edges u -> v: dh[u] (per head, alpha_uv dout[v] summed in
  // registers as the aggregations do, then the two a terms) and the sum of u's ds, the
  // coefficient of a_src.
  std::vector<double> out_sum(n * heads, 0.0);
  {
    const csr& t = g.transpose();
    const std::span<const std::int64_t> offsets = t.offsets();
    const std::span<const std::int32_t> dests = t.sources(), ids = t.edge_ids();
    T* dh = grads.h.data();
    parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t u = lo; u < hi; ++u) {
        const auto begin = static_cast<std::size_t>(offsets[u]),
                   end = static_cast<std::size_t>(offsets[u + 1]);
        double* sum = out_sum.data() + u * heads;
        for (std::size_t e = begin; e < end; ++e)
          for (std::size_t k = 0; k < heads; ++k)
            sum[k] += ds[static_cast<std::size_t>(ids[e]) * heads + k];
        if (!with_h) continue;
        for (std::size_t k = 0; k < heads; ++k) {
          T* row = dh + u * hf + k * f;
          detail::sum_rows(row, dy + k * f, f, hf, dests, begin, end, [&](std::size_t e) {
            return alpha[static_cast<std::size_t>(ids[e]) * heads + k];
          });
          const T* as = a_src.data() + k * f;
          const T* ad = a_dst.data() + k * f;
          const double to_src = sum[k], to_dst = in_sum[u * heads + k];
          for (std::size_t i = 0; i < f; ++i)
            row[i] =
                static_cast<T>(double(row[i]) + to_src * double(as[i]) + to_dst * double(ad[i]));
        }
      }
    });
  }

  // Pass 3: da_src = sum over u of out_sum[u] h[u], da_dst = sum over v of in_sum[v] h[v], in
  // double, per block of nodes; the blocks depend on n alone and are added in order.
  {
    constexpr std::size_t most_blocks = 256, least_nodes = 64;
    const std::size_t per_block = std::max(least_nodes, (n + most_blocks - 1) / most_blocks);
    const std::size_t blocks = (n + per_block - 1) / per_block;
    std::vector<double> partial(blocks * 2 * hf, 0.0);
    parallel_for(0, blocks, std::max<std::size_t>(1, 4096 / (per_block * hf)),
                 [&](std::size_t lo, std::size_t hi) {
                   for (std::size_t b = lo; b < hi; ++b) {
                     double* ps = partial.data() + b * 2 * hf;
                     double* pd = ps + hf;
                     for (std::size_t u = b * per_block; u < std::min(n, (b + 1) * per_block); ++u)
                       for (std::size_t k = 0; k < heads; ++k) {
                         const double cs = out_sum[u * heads + k], cd = in_sum[u * heads + k];
                         const T* row = x + u * hf + k * f;
                         for (std::size_t i = 0; i < f; ++i) {
                           ps[k * f + i] += cs * double(row[i]);
                           pd[k * f + i] += cd * double(row[i]);
                         }
                       }
                   }
                 });
    for (std::size_t j = 0; j < hf; ++j) {
      double s = 0, d = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        s += partial[b * 2 * hf + j];
        d += partial[b * 2 * hf + hf + j];
      }
      grads.a_src.data()[j] = static_cast<T>(s);
      grads.a_dst.data()[j] = static_cast<T>(d);
    }
  }
  return grads;
}

}  // namespace detail

/// The VJP of gat(g, h, a_src, a_dst, negative_slope) for the cotangent dout of its output (see
/// the file comment). nax::shape_error, naming what does not fit, if h's node extent is not g's
/// node count, a_src or a_dst are not h's heads × features, or dout's extents are not h's.
template <class T, class Head, class Feat>
gat_grads<T, Head, Feat> gat_grad(const csr& g, const tensor<T, node, Head, Feat>& h,
                                  const tensor<T, Head, Feat>& a_src,
                                  const tensor<T, Head, Feat>& a_dst, T negative_slope,
                                  const tensor<T, node, Head, Feat>& dout) {
  return detail::gat_grad(g, h, a_src, a_dst, negative_slope, dout, true);
}

}  // namespace nax::gnn
