#pragma once
// nax::gnn::gat: graph attention (Veličković et al.) over a csr graph, forward, in one pass over
// each destination's in-edges. Per head,
//
//   e_uv = leaky_relu(<h[u], a_src> + <h[v], a_dst>)
//   alpha_uv = the softmax of e_uv over v's in-edges
//   out[v] = sum over u -> v of alpha_uv h[u]          (0 for a node without in-edges)
//
// The softmax and the weighted sum are one pass (an online softmax: a running maximum, and the
// running sum and accumulator rescaled when it grows), where the usual form takes two kernels
// and keeps the E × heads scores. The scores' two halves are computed first, once per node and
// head. Each destination is one thread's, in edge order: the same bits on any thread count.

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
#include <nax/gnn/csr.hpp>
#include <nax/kernels/online_softmax.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

// <x, a> over f entries, in double.
template <class T>
double dot_row(const T* x, const T* a, std::size_t f) {
  double s = 0;
  for (std::size_t i = 0; i < f; ++i) s += double(x[i]) * double(a[i]);
  return s;
}

// One head k of destination v over its in-edges [begin, end): the online softmax's weights
// first (per edge: the rescale of the sum so far, and the edge's own weight; one exp per edge),
// then the unnormalized sum of the weighted rows, up to 8 vectors of the row in registers at a
// time, the row written once. Each element is row * scale + p * x, edge after edge. `most` and
// `total` are the softmax's running maximum and sum at the end.
template <class T>
void attend(T* row, const T* x, std::size_t heads, std::size_t k, std::size_t f,
            std::span<const std::int32_t> sources, std::size_t begin, std::size_t end,
            const double* src_half, double dst_half, double slope, std::vector<T>& weights,
            double& most, double& total) {
  using V = simd::vec<T>;
  constexpr std::size_t lanes = simd::width<T>, block = 8;
  const std::size_t m = end - begin;
  weights.resize(2 * m);
  most = -std::numeric_limits<double>::infinity();
  total = 0;
  for (std::size_t j = 0; j < m; ++j) {
    const auto u = static_cast<std::size_t>(sources[begin + j]);
    double s = src_half[u * heads + k] + dst_half;
    s = s > 0 ? s : s * slope;
    // A new maximum rescales what is summed so far (its own weight is then exp(0) = 1).
    const nax::detail::online_weights<double> ws =
        nax::detail::online_softmax_step(s, most, total, [](double d) { return std::exp(d); });
    weights[2 * j] = static_cast<T>(ws.scale);
    weights[2 * j + 1] = static_cast<T>(ws.weight);
  }
  const auto from = [&](std::size_t j, std::size_t i) {
    return x + (static_cast<std::size_t>(sources[begin + j]) * heads + k) * f + i;
  };
  std::size_t i = 0;
  for (; i + block * lanes <= f; i += block * lanes) {
    V acc[block];
    for (V& a : acc) a = V(T(0));
    for (std::size_t j = 0; j < m; ++j) {
      if (j + 16 < m) {  // a random source's row misses the nearer caches
        const auto* ahead = reinterpret_cast<const char*>(from(j + 16, i));
        for (std::size_t b = 0; b < block * lanes * sizeof(T); b += 64)
          __builtin_prefetch(ahead + b, 0, 3);
      }
      const V sv(weights[2 * j]), pv(weights[2 * j + 1]);
      const T* xr = from(j, i);
      for (std::size_t b = 0; b < block; ++b)
        acc[b] = acc[b] * sv + pv * V::load_unaligned(xr + b * lanes);
    }
    for (std::size_t b = 0; b < block; ++b) acc[b].store_unaligned(row + i + b * lanes);
  }
  for (; i + lanes <= f; i += lanes) {
    V acc(T(0));
    for (std::size_t j = 0; j < m; ++j)
      acc = acc * V(weights[2 * j]) + V(weights[2 * j + 1]) * V::load_unaligned(from(j, i));
    acc.store_unaligned(row + i);
  }
  for (; i < f; ++i) {
    T acc = 0;
    for (std::size_t j = 0; j < m; ++j)
      acc = acc * weights[2 * j] + weights[2 * j + 1] * *from(j, i);
    row[i] = acc;
  }
}

// nax::shape_error, naming `op`, unless a_src and a_dst are h's heads × features.
template <class T, class Head, class Feat>
void check_attention(const char* op, const tensor<T, node, Head, Feat>& h,
                     const tensor<T, Head, Feat>& a_src, const tensor<T, Head, Feat>& a_dst) {
  const std::size_t heads = h.template extent<Head>(), f = h.template extent<Feat>();
  if (a_src.template extent<Head>() != heads || a_dst.template extent<Head>() != heads ||
      a_src.template extent<Feat>() != f || a_dst.template extent<Feat>() != f)
    nax::detail::throw_shape_error("nax::gnn::", op, ": h has ", heads, " heads of ", f,
                                   " features; a_src and a_dst must be ", heads, " × ", f);
}

// The scores' halves, per node and head (index u * heads + k): <h[u], a_src> and <h[u], a_dst>.
// The backward computes them the same way, so that its scores are the forward's bit for bit.
template <class T, class Head, class Feat>
void score_halves(const tensor<T, node, Head, Feat>& h, const tensor<T, Head, Feat>& a_src,
                  const tensor<T, Head, Feat>& a_dst, std::vector<double>& src_half,
                  std::vector<double>& dst_half) {
  const std::size_t n = h.template extent<node>(), heads = h.template extent<Head>(),
                    f = h.template extent<Feat>();
  src_half.assign(n * heads, 0.0);
  dst_half.assign(n * heads, 0.0);
  const T* x = h.data();
  parallel_for(0, n, std::max<std::size_t>(1, 2048 / std::max<std::size_t>(1, heads * f)),
               [&](std::size_t lo, std::size_t hi) {
                 for (std::size_t u = lo; u < hi; ++u)
                   for (std::size_t k = 0; k < heads; ++k) {
                     const T* row = x + (u * heads + k) * f;
                     src_half[u * heads + k] = dot_row(row, a_src.data() + k * f, f);
                     dst_half[u * heads + k] = dot_row(row, a_dst.data() + k * f, f);
                   }
               });
}

}  // namespace detail

/// Graph attention over g: h over [node, Head, Feat], a_src and a_dst over [Head, Feat] (see the
/// file comment). nax::shape_error if h's node extent is not g's node count.
template <class T, class Head, class Feat>
tensor<T, node, Head, Feat> gat(const csr& g, const tensor<T, node, Head, Feat>& h,
                                const tensor<T, Head, Feat>& a_src,
                                const tensor<T, Head, Feat>& a_dst, T negative_slope) {
  const std::size_t n = h.template extent<node>();
  g.check_nodes("gat", n);
  detail::check_attention("gat", h, a_src, a_dst);
  const std::size_t heads = h.template extent<Head>(), f = h.template extent<Feat>();
  tensor<T, node, Head, Feat> out = zeros_like(h);
  if (h.size() == 0) return out;
  std::vector<double> src_half, dst_half;
  detail::score_halves(h, a_src, a_dst, src_half, dst_half);
  const T* x = h.data();
  const std::span<const std::int64_t> offsets = g.offsets();
  const std::span<const std::int32_t> sources = g.sources();
  T* y = out.data();
  const double slope = static_cast<double>(negative_slope);
  const std::size_t grain = std::max<std::size_t>(
      1, 2048 / std::max<std::size_t>(1, heads * f * (1 + g.num_edges() / n)));
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    std::vector<T> weights;
    for (std::size_t v = lo; v < hi; ++v) {
      if (g.in_degree(v) > split_degree) continue;  // below
      for (std::size_t k = 0; k < heads; ++k) {
        T* row = y + (v * heads + k) * f;
        double most, total;
        detail::attend(row, x, heads, k, f, sources, static_cast<std::size_t>(offsets[v]),
                       static_cast<std::size_t>(offsets[v + 1]), src_half.data(),
                       dst_half[v * heads + k], slope, weights, most, total);
        if (total > 0) {
          const T inverse = static_cast<T>(1 / total);
          for (std::size_t i = 0; i < f; ++i) row[i] *= inverse;
        }
      }
    }
  });
  // A destination with many in-edges: its parts over the threads (csr.hpp), each an
  // unnormalized sum with its softmax's maximum and sum, merged in order at the largest maximum.
  const std::size_t hf = heads * f;
  std::vector<T> parts;
  std::vector<double> stats;
  for (const std::size_t v : g.split_nodes()) {
    const auto begin = static_cast<std::size_t>(offsets[v]);
    const std::size_t in = g.in_degree(v), count = (in + split_degree - 1) / split_degree;
    parts.resize(count * hf);
    stats.resize(2 * count * heads);
    parallel_for(0, count * heads, 1, [&](std::size_t lo, std::size_t hi) {
      std::vector<T> weights;
      for (std::size_t ck = lo; ck < hi; ++ck) {
        const std::size_t c = ck / heads, k = ck % heads;
        detail::attend(parts.data() + c * hf + k * f, x, heads, k, f, sources,
                       begin + c * split_degree, begin + std::min(in, (c + 1) * split_degree),
                       src_half.data(), dst_half[v * heads + k], slope, weights, stats[2 * ck],
                       stats[2 * ck + 1]);
      }
    });
    for (std::size_t k = 0; k < heads; ++k) {
      T* row = y + (v * heads + k) * f;
      double most = -std::numeric_limits<double>::infinity(), total = 0;
      for (std::size_t c = 0; c < count; ++c) most = std::max(most, stats[2 * (c * heads + k)]);
      for (std::size_t c = 0; c < count; ++c) {
        const double scale = std::exp(stats[2 * (c * heads + k)] - most);
        total += stats[2 * (c * heads + k) + 1] * scale;
        const T* part = parts.data() + c * hf + k * f;
        for (std::size_t i = 0; i < f; ++i)
          row[i] = (c == 0 ? T(0) : row[i]) + part[i] * static_cast<T>(scale);
      }
      const T inverse = static_cast<T>(1 / total);
      for (std::size_t i = 0; i < f; ++i) row[i] *= inverse;
    }
  }
  return out;
}

}  // namespace nax::gnn
