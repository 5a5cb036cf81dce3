#pragma once
// nax::gnn::csr: a graph of n nodes with its edges grouped by destination (compressed sparse
// rows over the destination: the in-edges of v are offsets[v] .. offsets[v + 1]), the layout
// the destination-parallel kernels read, and the transpose (grouped by source) made on first
// use, for the backward's source-side aggregations. Self-loops and multi-edges are allowed;
// within a destination the edges keep their order in the input lists, so that every sum over
// them has one order, whatever the thread count.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <nax/core/axis.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::gnn {

/// The axis of a graph's nodes: features are tensors over [node, ...].
using node = nax::axis<"node">;
/// The axis of per-edge tensors (v.edge(w) in a vertex program), in the edge lists' order.
using edge = nax::axis<"edge">;

/// A destination with more in-edges than this is split: its in-edges in parts of split_degree
/// (the last one shorter), each reduced by a thread of its own, the parts merged in order. The
/// parts depend on the degree alone, so the bits do not depend on the thread count.
inline constexpr std::size_t split_degree = 2048;

/// In- and out-degree statistics of a graph.
struct degree_stats {
  std::size_t min_in = 0, max_in = 0, min_out = 0, max_out = 0;
  double mean = 0;               // edges per node (in and out alike)
  std::size_t no_in_edges = 0;   // nodes with no in-edge (their aggregations are 0)
  std::size_t no_out_edges = 0;  // nodes with no out-edge
  std::size_t self_loops = 0;
};

class csr {
 public:
  csr() = default;

  /// The graph of n nodes with edges src[i] -> dst[i]. nax::shape_error if the lists differ in
  /// length, or naming the first edge whose source or destination is negative or not below n.
  static csr from_edges(std::size_t n, std::span<const std::int32_t> src,
                        std::span<const std::int32_t> dst) {
    if (src.size() != dst.size())
      nax::detail::throw_shape_error("nax::gnn::csr::from_edges: ", src.size(), " sources but ",
                                     dst.size(), " destinations");
    constexpr auto most = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
    if (n > most)
      nax::detail::throw_shape_error("nax::gnn::csr::from_edges: ", n,
                                     " nodes do not fit in int32");
    if (src.size() > most)
      nax::detail::throw_shape_error("nax::gnn::csr::from_edges: ", src.size(),
                                     " edges do not fit in int32");
    auto check = [n](std::size_t i, const char* what, std::int32_t v) {
      if (v < 0)
        nax::detail::throw_shape_error("nax::gnn::csr::from_edges: edge ", i, ": ", what, " ", v,
                                       " is negative");
      if (static_cast<std::size_t>(v) >= n)
        nax::detail::throw_shape_error("nax::gnn::csr::from_edges: edge ", i, ": ", what, " ", v,
                                       " is not a node of a graph of ", n, " nodes");
    };
    for (std::size_t i = 0; i < src.size(); ++i) {
      check(i, "source", src[i]);
      check(i, "destination", dst[i]);
    }
    csr g;
    g.n_ = n;
    group(n, dst, src, g.offsets_, g.neighbors_, g.edge_ids_);
    g.transpose_ = std::make_shared<transposed>();
    g.transpose_->src = std::vector<std::int32_t>(src.begin(), src.end());
    g.transpose_->dst = std::vector<std::int32_t>(dst.begin(), dst.end());
    return g;
  }

  std::size_t num_nodes() const noexcept { return n_; }

  /// nax::shape_error, naming `op`, unless features over n nodes are this graph's.
  void check_nodes(const char* op, std::size_t n) const {
    if (n != n_)
      nax::detail::throw_shape_error("nax::gnn::", op, ": h has ", n, " nodes, the graph ", n_);
  }
  std::size_t num_edges() const noexcept { return neighbors_.size(); }

  /// The in-edges of v are [offsets()[v], offsets()[v + 1]) (n + 1 entries).
  std::span<const std::int64_t> offsets() const noexcept { return offsets_; }
  /// Per in-edge, grouped by destination: its source node.
  std::span<const std::int32_t> sources() const noexcept { return neighbors_; }
  /// Per in-edge, grouped by destination: its position in the lists given to from_edges.
  std::span<const std::int32_t> edge_ids() const noexcept { return edge_ids_; }

  std::size_t in_degree(std::size_t v) const noexcept {
    return static_cast<std::size_t>(offsets_[v + 1] - offsets_[v]);
  }
  std::size_t out_degree(std::size_t v) const { return transpose().in_degree(v); }

  /// The same graph with every edge reversed: grouped by source, sources() giving the
  /// destinations (made on first use, once, safely from several threads).
  const csr& transpose() const {
    std::call_once(transpose_->once, [this] {
      auto t = std::make_unique<csr>();
      t->n_ = n_;
      group(n_, transpose_->src, transpose_->dst, t->offsets_, t->neighbors_, t->edge_ids_);
      // Its own transpose is this graph, made again from the lists (reversed) if asked for.
      t->transpose_->src = std::move(transpose_->dst);
      t->transpose_->dst = std::move(transpose_->src);
      transpose_->graph = std::move(t);
    });
    return *transpose_->graph;
  }

  /// The destinations with more than split_degree in-edges, in order.
  std::vector<std::size_t> split_nodes() const {
    std::vector<std::size_t> hubs;
    for (std::size_t v = 0; v < n_; ++v)
      if (in_degree(v) > split_degree) hubs.push_back(v);
    return hubs;
  }

  degree_stats degrees() const {
    degree_stats s;
    if (n_ == 0) return s;
    const csr& t = transpose();
    s.min_in = s.min_out = std::numeric_limits<std::size_t>::max();
    for (std::size_t v = 0; v < n_; ++v) {
      const std::size_t in = in_degree(v), out = t.in_degree(v);
      s.min_in = std::min(s.min_in, in);
      s.max_in = std::max(s.max_in, in);
      s.min_out = std::min(s.min_out, out);
      s.max_out = std::max(s.max_out, out);
      s.no_in_edges += in == 0;
      s.no_out_edges += out == 0;
      for (std::int64_t e = offsets_[v]; e < offsets_[v + 1]; ++e)
        s.self_loops += static_cast<std::size_t>(neighbors_[static_cast<std::size_t>(e)]) == v;
    }
    s.mean = static_cast<double>(num_edges()) / static_cast<double>(n_);
    return s;
  }

 private:
  // Edges key[i] <- other[i] grouped by key, stably (a counting sort).
  static void group(std::size_t n, std::span<const std::int32_t> key,
                    std::span<const std::int32_t> other, std::vector<std::int64_t>& offsets,
                    std::vector<std::int32_t>& neighbors, std::vector<std::int32_t>& ids) {
    offsets.assign(n + 1, 0);
    for (std::int32_t k : key) ++offsets[static_cast<std::size_t>(k) + 1];
    for (std::size_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
    neighbors.resize(key.size());
    ids.resize(key.size());
    std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < key.size(); ++i) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(key[i])]++);
      neighbors[at] = other[i];
      ids[at] = static_cast<std::int32_t>(i);
    }
  }

  // The transpose, made once; the edge lists kept until then. Shared by copies of the graph.
  struct transposed {
    std::once_flag once;
    std::vector<std::int32_t> src, dst;
    std::unique_ptr<csr> graph;
  };

  std::size_t n_ = 0;
  std::vector<std::int64_t> offsets_{0};
  std::vector<std::int32_t> neighbors_, edge_ids_;
  std::shared_ptr<transposed> transpose_ = std::make_shared<transposed>();
};

}  // namespace nax::gnn
