#pragma once
// The VJPs of gnn/aggregate.hpp's aggregations. Each sends a destination's cotangent back along
// its in-edges to their sources, with the forward's edge weight: the same aggregation over the
// transposed graph (csr::transpose, the edges grouped by source).
//
//   aggregate_sum_grad(g, dout)   dh[u] = sum over u -> v of dout[v]
//   aggregate_mean_grad(g, dout)  dh[u] = sum over u -> v of dout[v] / indeg(v)
//   gcn_grad(g, dout)             dh[u] = sum over u -> v of dout[v] / sqrt(max(1, outdeg(u))
//                                         max(1, indeg(v)))
//
// A node without out-edges gets 0. Parallel over the sources, each row summed by one thread in
// the transpose's edge order (the input order): no atomics, the same bits on any thread count.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

// nax::shape_error, naming `op`, unless a cotangent over n nodes is for g's nodes.
inline void check_cotangent_nodes(const char* op, const csr& g, std::size_t n) {
  if (n != g.num_nodes())
    nax::detail::throw_shape_error("nax::gnn::", op, ": dout has ", n, " nodes, the graph ",
                                   g.num_nodes());
}

template <edge_weight Weight, class T, class... Axes>
tensor<T, node, Axes...> aggregate_grad(const char* op, const csr& g,
                                        const tensor<T, node, Axes...>& dout) {
  const std::size_t n = dout.template extent<node>();
  check_cotangent_nodes(op, g, n);
  tensor<T, node, Axes...> dh = zeros_like(dout);
  if (n == 0 || dout.size() == 0) return dh;
  const std::size_t f = dout.size() / n;
  const csr& t = g.transpose();
  const std::span<const std::int64_t> offsets = t.offsets();
  const std::span<const std::int32_t> dests = t.sources();
  const T* x = dout.data();
  T* y = dh.data();
  const std::size_t grain =
      std::max<std::size_t>(1, 4096 / std::max<std::size_t>(1, f * (1 + g.num_edges() / n)));
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t u = lo; u < hi; ++u) {
      const auto begin = static_cast<std::size_t>(offsets[u]),
                 end = static_cast<std::size_t>(offsets[u + 1]);
      T* row = y + u * f;
      if constexpr (Weight == edge_weight::one) {
        sum_rows(row, x, f, f, dests, begin, end, [](std::size_t) { return T(1); });
      } else if constexpr (Weight == edge_weight::mean) {
        // The forward scales v's sum by 1 / indeg(v): the same factor, per edge.
        sum_rows(row, x, f, f, dests, begin, end, [&](std::size_t e) {
          return T(1) / static_cast<T>(g.in_degree(static_cast<std::size_t>(dests[e])));
        });
      } else {
        // The forward's weight of the edge u -> v, in its order of operands: the same bits.
        const double out_part = static_cast<double>(std::max<std::size_t>(1, end - begin));
        sum_rows(row, x, f, f, dests, begin, end, [&](std::size_t e) {
          const auto v = static_cast<std::size_t>(dests[e]);
          const double in_part = static_cast<double>(std::max<std::size_t>(1, g.in_degree(v)));
          return static_cast<T>(1 / std::sqrt(out_part * in_part));
        });
      }
    }
  });
  return dh;
}

}  // namespace detail

/// The VJP of aggregate_sum: dh[u] = the sum of dout[v] over u's out-edges u -> v.
/// nax::shape_error if dout's node extent is not the graph's node count.
template <class T, class... Axes>
tensor<T, node, Axes...> aggregate_sum_grad(const csr& g, const tensor<T, node, Axes...>& dout) {
  return detail::aggregate_grad<detail::edge_weight::one>("aggregate_sum_grad", g, dout);
}

/// The VJP of aggregate_mean: dh[u] = the sum of dout[v] / indeg(v) over u's out-edges u -> v.
template <class T, class... Axes>
tensor<T, node, Axes...> aggregate_mean_grad(const csr& g, const tensor<T, node, Axes...>& dout) {
  return detail::aggregate_grad<detail::edge_weight::mean>("aggregate_mean_grad", g, dout);
}

/// The VJP of gcn: dh[u] = the sum over u -> v of dout[v] / sqrt(max(1, outdeg(u)) max(1,
/// indeg(v))).
template <class T, class... Axes>
tensor<T, node, Axes...> gcn_grad(const csr& g, const tensor<T, node, Axes...>& dout) {
  return detail::aggregate_grad<detail::edge_weight::gcn>("gcn_grad", g, dout);
}

}  // namespace nax::gnn
