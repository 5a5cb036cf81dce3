#pragma once
// The aggregations of node features over a graph's in-edges (nax::gnn::csr), one pass per
// destination node, parallel over destinations, each feature row vectorized: no per-edge
// intermediate is ever made.
//
//   aggregate_sum(g, h)   out[v] = sum over u -> v of h[u]
//   aggregate_mean(g, h)  out[v] = the same divided by indeg(v)
//   gcn(g, h)             out[v] = sum over u -> v of h[u] / sqrt(max(1, outdeg(u)) max(1,
//   indeg(v)))
//
// A node without in-edges gets 0. h is a tensor over [node, ...]: the other axes form one row of
// features per node. Every destination is summed by one thread, in the edges' order (csr.hpp),
// except one with more than split_degree in-edges: its parts are summed by several, and added in
// order. Either way the results have the same bits on any thread count.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

enum class edge_weight { one, mean, gcn };

// The sum over edges [begin, end) of w(e) x[sources[e]] (rows of f, `stride` apart: a head's
// slice of [node, head, feat] rows too), into row (which it sets): vectors of the row are summed
// in registers, up to `block` at a time, each over all the edges, so that a row is written once,
// not once per edge. Every element is summed in edge order.
template <class T, class Weight>
void sum_rows(T* row, const T* x, std::size_t f, std::size_t stride,
              std::span<const std::int32_t> sources, std::size_t begin, std::size_t end, Weight w) {
  using V = simd::vec<T>;
  constexpr std::size_t lanes = simd::width<T>, block = 8;
  std::size_t i = 0;
  for (; i + block * lanes <= f; i += block * lanes) {
    V acc[block];
    for (V& a : acc) a = V(T(0));
    for (std::size_t e = begin; e < end; ++e) {
      // The row 16 edges ahead: a random source's row misses the nearer caches.
      if (e + 16 < end) {
        const auto* ahead = reinterpret_cast<const char*>(
            x + static_cast<std::size_t>(sources[e + 16]) * stride + i);
        for (std::size_t b = 0; b < block * lanes * sizeof(T); b += 64)
          __builtin_prefetch(ahead + b, 0, 3);
      }
      const T* from = x + static_cast<std::size_t>(sources[e]) * stride + i;
      const V we(w(e));
      for (std::size_t j = 0; j < block; ++j)
        acc[j] = acc[j] + we * V::load_unaligned(from + j * lanes);
    }
    for (std::size_t j = 0; j < block; ++j) acc[j].store_unaligned(row + i + j * lanes);
  }
  for (; i + lanes <= f; i += lanes) {
    V acc(T(0));
    for (std::size_t e = begin; e < end; ++e)
      acc =
          acc + V(w(e)) * V::load_unaligned(x + static_cast<std::size_t>(sources[e]) * stride + i);
    acc.store_unaligned(row + i);
  }
  for (; i < f; ++i) {
    T acc = 0;
    for (std::size_t e = begin; e < end; ++e)
      acc = acc + w(e) * x[static_cast<std::size_t>(sources[e]) * stride + i];
    row[i] = acc;
  }
}

template <edge_weight Weight, class T, class... Axes>
tensor<T, node, Axes...> aggregate(const char* op, const csr& g,
                                   const tensor<T, node, Axes...>& h) {
  const std::size_t n = h.template extent<node>();
  g.check_nodes(op, n);
  tensor<T, node, Axes...> out = zeros_like(h);
  if (n == 0 || h.size() == 0) return out;
  const std::size_t f = h.size() / n;
  const std::span<const std::int64_t> offsets = g.offsets();
  const std::span<const std::int32_t> sources = g.sources();
  const csr* t = Weight == edge_weight::gcn ? &g.transpose() : nullptr;  // out-degrees
  const T* x = h.data();
  T* y = out.data();
  // About 4096 feature reads per chunk: enough work to pay for a thread's wake-up.
  const std::size_t grain =
      std::max<std::size_t>(1, 4096 / std::max<std::size_t>(1, f * (1 + g.num_edges() / n)));
  // The weighted sum over v's in-edges [begin, end) into row.
  const auto sum_range = [&](T* row, std::size_t v, std::size_t begin, std::size_t end) {
    if constexpr (Weight == edge_weight::gcn) {
      const double in_part = static_cast<double>(std::max<std::size_t>(1, g.in_degree(v)));
      sum_rows(row, x, f, f, sources, begin, end, [&](std::size_t e) {
        const auto u = static_cast<std::size_t>(sources[e]);
        const double out_part = static_cast<double>(std::max<std::size_t>(1, t->in_degree(u)));
        return static_cast<T>(1 / std::sqrt(out_part * in_part));
      });
    } else {
      sum_rows(row, x, f, f, sources, begin, end, [](std::size_t) { return T(1); });
    }
  };
  const auto finish = [&](T* row, std::size_t in) {
    if constexpr (Weight == edge_weight::mean)
      if (in > 1) {
        const T scale = T(1) / static_cast<T>(in);
        for (std::size_t i = 0; i < f; ++i) row[i] *= scale;
      }
  };
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t v = lo; v < hi; ++v) {
      const std::size_t in = g.in_degree(v);
      if (in > split_degree) continue;  // below
      sum_range(y + v * f, v, static_cast<std::size_t>(offsets[v]),
                static_cast<std::size_t>(offsets[v + 1]));
      finish(y + v * f, in);
    }
  });
  // A destination with many in-edges: its parts over the threads, added in order (csr.hpp).
  std::vector<T> parts;
  for (const std::size_t v : g.split_nodes()) {
    const auto begin = static_cast<std::size_t>(offsets[v]);
    const std::size_t in = g.in_degree(v), count = (in + split_degree - 1) / split_degree;
    parts.resize(count * f);
    parallel_for(0, count, 1, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t c = lo; c < hi; ++c)
        sum_range(parts.data() + c * f, v, begin + c * split_degree,
                  begin + std::min(in, (c + 1) * split_degree));
    });
    T* row = y + v * f;
    std::copy_n(parts.data(), f, row);
    for (std::size_t c = 1; c < count; ++c)
      for (std::size_t i = 0; i < f; ++i) row[i] = row[i] + parts[c * f + i];
    finish(row, in);
  }
  return out;
}

}  // namespace detail

/// out[v] = the sum of h[u] over v's in-edges u -> v (0 without in-edges). nax::shape_error if
/// h's node extent is not the graph's node count.
template <class T, class... Axes>
tensor<T, node, Axes...> aggregate_sum(const csr& g, const tensor<T, node, Axes...>& h) {
  return detail::aggregate<detail::edge_weight::one>("aggregate_sum", g, h);
}

/// out[v] = the mean of h[u] over v's in-edges (0 without in-edges).
template <class T, class... Axes>
tensor<T, node, Axes...> aggregate_mean(const csr& g, const tensor<T, node, Axes...>& h) {
  return detail::aggregate<detail::edge_weight::mean>("aggregate_mean", g, h);
}

/// out[v] = the sum over v's in-edges u -> v of h[u] / sqrt(max(1, outdeg(u)) max(1, indeg(v)))
/// (Kipf and Welling's normalization, without the self-loops they add: add them to the graph).
template <class T, class... Axes>
tensor<T, node, Axes...> gcn(const csr& g, const tensor<T, node, Axes...>& h) {
  return detail::aggregate<detail::edge_weight::gcn>("gcn", g, h);
}

}  // namespace nax::gnn
