#pragma once
// Random graphs for the gnn tests, and the kinds every kernel is checked on: no node, isolated
// nodes, self-loops and multi-edges (which random edge lists have), one node with most edges.
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/csr.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "support/bits.hpp"
#include "support/threads.hpp"

namespace gnn_test {

using nax_test::threads_guard;

/// n nodes, e edges; a share `hub` of them go into node 0.
inline nax::gnn::csr random_graph(std::size_t n, std::size_t e, double hub, std::mt19937& rng) {
  std::vector<std::int32_t> src(e), dst(e);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < e; ++i) {
    src[i] = static_cast<std::int32_t>(rng() % n);
    dst[i] = u(rng) < hub ? 0 : static_cast<std::int32_t>(rng() % n);
  }
  return nax::gnn::csr::from_edges(n, src, dst);
}

struct graph_case {
  std::size_t n, e;
  double hub;
};
/// Empty (0 nodes), a node alone, few edges (most nodes without in-edges), many, a hub, and a
/// hub of more than split_degree in-edges (split over the threads in 3 parts).
inline constexpr graph_case graph_cases[] = {{0, 0, 0.0},     {1, 0, 0.0},    {1, 3, 0.0},
                                             {9, 5, 0.0},     {40, 300, 0.0}, {150, 1500, 0.6},
                                             {600, 8000, 0.6}};

inline nax::gnn::csr make(const graph_case& c, std::mt19937& rng) {
  return c.n == 0 ? nax::gnn::csr::from_edges(0, {}, {}) : random_graph(c.n, c.e, c.hub, rng);
}

/// The in-edges of v as (source, edge id) pairs, in order.
template <class F>
void for_each_in_edge(const nax::gnn::csr& g, std::size_t v, F f) {
  for (auto e = static_cast<std::size_t>(g.offsets()[v]);
       e < static_cast<std::size_t>(g.offsets()[v + 1]); ++e)
    f(static_cast<std::size_t>(g.sources()[e]), static_cast<std::size_t>(g.edge_ids()[e]));
}

using nax_test::same_bits;

/// The largest |got - want| / (1 + |want|).
inline double worst(const float* got, const std::vector<double>& want) {
  double w = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(got[i] - want[i]) / (1 + std::abs(want[i]));
    w = d > w ? d : w;
  }
  return w;
}

}  // namespace gnn_test
