#pragma once
// nax::gnn::zoom_in: runs a vertex program over every node of a graph, in one
// destination-parallel pass over its in-edges (seed "Programming model").
//
//   auto out = nax::gnn::zoom_in(g, [&](const nax::gnn::vertex& v) {
//     auto coeff = nax::gnn::exp(nax::gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f));
//     return nax::gnn::sum(coeff / nax::gnn::sum(coeff) * v.src(feat));
//   });
//
// The program is written for one destination v; the node axis is factored out. `v` hands out
// the values it reads, each in its scope (vertex/scope.hpp): v.dst(h) is v's own row of h,
// v.src(h) the source's row on each in-edge, v.edge(w) the edge's row of a per-edge tensor, and
// v.param(a) a tensor the same for every node. Ops over node features that need every node (a
// linear layer) run before, as ordinary nax ops over the node axis (the seed's operator
// batching).
//
// The program's value is evaluated per destination v, in one pass: first each aggregation in
// it, inner ones first, each a loop over v's in-edges with its edge values computed in
// registers (vertex/aggregation.hpp); then the result row, written once. No value per edge is
// ever stored, and an aggregation used twice is computed once. Destinations are split over the
// threads, each computed by one thread in edge order: the same bits on any thread count.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/gnn/vertex/aggregation.hpp>
#include <nax/gnn/vertex/leaf.hpp>
#include <nax/gnn/vertex/ops.hpp>
#include <nax/gnn/vertex/scope.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {}  // namespace detail

/// The destination vertex of a vertex program, and the values it reads.
class vertex {
 public:
  explicit vertex(const csr& g) : g_(&g) {}

  const csr& graph() const noexcept { return *g_; }

  /// v's own row of node features h (over [node, ...]): a node value.
  template <class T, class... A>
  auto dst(const tensor<T, node, A...>& h) const {
    g_->check_nodes("vertex::dst", h.template extent<node>());
    return detail::leaf<node_scope, T, nax::axes<A...>>(
        h.data(), detail::layout_of<nax::axes<A...>>(h), g_->num_nodes());
  }
  /// The source's row of h on each of v's in-edges: a source value.
  template <class T, class... A>
  auto src(const tensor<T, node, A...>& h) const {
    g_->check_nodes("vertex::src", h.template extent<node>());
    return detail::leaf<source_scope, T, nax::axes<A...>>(
        h.data(), detail::layout_of<nax::axes<A...>>(h), g_->num_nodes());
  }
  /// The row of w (over [edge, ...], in the order of the edge lists given to csr::from_edges) of
  /// each of v's in-edges: an edge value.
  template <class T, class... A>
  auto edge(const tensor<T, gnn::edge, A...>& w) const {
    const std::size_t e = w.template extent<gnn::edge>();
    if (e != g_->num_edges())
      nax::detail::throw_shape_error("nax::gnn::vertex::edge: w has ", e, " edges, the graph ",
                                     g_->num_edges());
    return detail::leaf<edge_scope, T, nax::axes<A...>>(w.data(),
                                                        detail::layout_of<nax::axes<A...>>(w), e);
  }
  /// A tensor the same for every vertex (a parameter): over its own axes, none of them the node
  /// axis.
  template <class T, class... A>
  auto param(const tensor<T, A...>& a) const {
    static_assert(!axes_contains_v<nax::axes<A...>, node>,
                  "nax::gnn::vertex::param: a tensor over the node axis; read it with v.src(h) "
                  "or v.dst(h)");
    return detail::leaf<param_scope, T, nax::axes<A...>>(a.data(),
                                                         detail::layout_of<nax::axes<A...>>(a), 1);
  }
  /// A constant.
  template <class T>
  requires std::is_arithmetic_v<T> detail::constant<T> param(T value)
  const { return detail::constant<T>(value); }

 private:
  const csr* g_;
};

namespace detail {

template <class T, class R, class... A, class... D>
tensor<T, node, A...> make_output(std::size_t n, const R& r, nax::axes<A...>, mp::mp_list<D...>) {
  return tensor<T, node, A...>(node{n}, D{r.template extent<D>()}...);
}

template <class A>
using is_static_axis = mp::mp_bool<A::is_static>;

// Evaluates a node value r over its axes into row `out`.
template <class R>
void write_row(R& r, std::size_t v, typename R::value_type* out,
               const row_layout<typename R::axes_type>& l) {
  using T = typename R::value_type;
  using Row = typename R::axes_type;
  using Inner = inner_axis_of<Row>;
  const std::size_t n = inner_extent(l);
  for_each_row(l, [&](const std::size_t* idx, std::size_t offset) {
    r.template at_outer<Row>(idx);
    r.template at_site<Inner>(site{v, v, 0});
    T* row = out + offset;
    std::size_t i = 0;
    if constexpr (!invariant_v<Row, Inner>)
      for (constexpr std::size_t w = simd::width<T>; i + w <= n; i += w)
        r.template vector<Inner>(i).store_unaligned(row + i);
    for (; i < n; ++i) row[i] = r.template scalar<Inner>(i);
  });
}

// The program's value at v, checked: a node value.
template <class Program>
auto result_of(const vertex& at, Program&& program) {
  auto result = program(at);
  using R = decltype(result);
  // An error here means the program returned something other than a value made from v.
  static_assert(
      is_vertex_value_v<R>,
      "nax::gnn::zoom_in, zoom_in_grad: the program must return a value made from v (v.dst(h), an "
      "aggregation such as nax::gnn::sum(...), or ops over those)");
  // An error here means the program returned a per-edge value where a node's is needed.
  static_assert(
      nax::detail::require<
          is_per_node_scope_v<typename R::scope>,
          error::gnn_per_edge_value_used_as_node_value_aggregate_it_first<typename R::scope>>);
  return result;
}

// The aggregations of r at split destination v (csr.hpp): each, inner ones first, as parts of
// v's in-edges over the threads, merged in order into its row. r's aggregations keep their rows
// where every thread reads them (and a part's copy of an aggregation reads the ones inside it
// there).
template <class R>
void compute_split(const csr& g, const in_edges& edges, R& r, std::size_t v) {
  using T = typename R::value_type;
  const auto begin = static_cast<std::size_t>(edges.offsets[v]);
  const std::size_t in = g.in_degree(v), count = (in + split_degree - 1) / split_degree;
  std::vector<T> parts;
  r.for_each_aggregation([&](auto& a) {
    if (!a.owner()) return;
    const std::size_t size = a.part_size();
    parts.resize(count * size);
    parallel_for(0, count, 1, [&](std::size_t lo, std::size_t hi) {
      auto local = a;
      for (std::size_t c = lo; c < hi; ++c)
        local.compute_part(edges, v, begin + c * split_degree,
                           begin + std::min(in, (c + 1) * split_degree), parts.data() + c * size);
    });
    a.merge(v, parts.data(), count, in);
  });
}

}  // namespace detail

/// Runs `program(v)` for every node v of g (see the file comment) and returns its values as a
/// tensor over [node, the value's axes...]. The program must return a node value: an
/// aggregation, v.dst(...), a parameter, or ops over those.
template <class Program>
auto zoom_in(const csr& g, Program&& program) {
  const vertex at(g);
  auto result = detail::result_of(at, program);
  using R = decltype(result);
  using T = typename R::value_type;
  using Row = typename R::axes_type;
  const std::size_t n = g.num_nodes();
  auto out = detail::make_output<T>(
      n, result, Row{},
      detail::mp::mp_remove_if<detail::mp::mp_rename<Row, detail::mp::mp_list>,
                               detail::is_static_axis>{});
  const detail::row_layout<Row> layout = detail::layout_of<Row>(result);
  if (n == 0 || layout.size == 0) return out;
  const detail::in_edges edges{g.offsets().data(), g.sources().data(), g.edge_ids().data()};
  const std::size_t f = layout.size;
  T* y = out.data();
  // About 4096 values read per chunk: enough work to pay for a thread's wake-up.
  const std::size_t grain =
      std::max<std::size_t>(1, 4096 / std::max<std::size_t>(1, f * (1 + g.num_edges() / n)));
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    R local = result;
    // Each aggregation's row, in this thread: one per id (copies of a value share theirs).
    std::vector<std::uint64_t> ids;
    std::vector<std::size_t> offsets;
    std::size_t total = 0;
    local.for_each_aggregation([&](auto& a) {
      if (std::find(ids.begin(), ids.end(), a.id()) != ids.end()) return;
      ids.push_back(a.id());
      offsets.push_back(total);
      total += a.size();
    });
    std::vector<T> rows(total);
    std::vector<std::uint64_t> kept;
    local.for_each_aggregation([&](auto& a) {
      const auto at =
          static_cast<std::size_t>(std::find(ids.begin(), ids.end(), a.id()) - ids.begin());
      const bool owner = std::find(kept.begin(), kept.end(), a.id()) == kept.end();
      if (owner) kept.push_back(a.id());
      a.keep_in(rows.data() + offsets[at], 0, owner);
    });
    // The result is an aggregation: it writes its rows in place.
    if constexpr (detail::is_aggregation_v<R>) local.keep_in(y, f, true);
    for (std::size_t v = lo; v < hi; ++v) {
      if (g.in_degree(v) > split_degree) continue;  // below
      if constexpr (detail::is_aggregation_v<R>) {
        local.for_each_aggregation([&](auto& a) { a.compute(edges, v); });
      } else {
        local.for_each_aggregation([&](auto& a) { a.compute(edges, v); });
        detail::write_row(local, v, y + v * f, layout);
      }
    }
  });
  // The destinations with many in-edges, one at a time, each over the threads.
  const std::vector<std::size_t> hubs = g.split_nodes();
  if (!hubs.empty()) {
    R shared = result;
    std::vector<std::uint64_t> ids;
    std::vector<std::vector<T>> rows;
    shared.for_each_aggregation([&](auto& a) {
      const auto found = std::find(ids.begin(), ids.end(), a.id());
      if (found != ids.end())
        return a.keep_in(rows[static_cast<std::size_t>(found - ids.begin())].data(), 0, false);
      ids.push_back(a.id());
      rows.emplace_back(a.size());
      a.keep_in(rows.back().data(), 0, true);
    });
    if constexpr (detail::is_aggregation_v<R>) shared.keep_in(y, f, true);
    for (const std::size_t v : hubs) {
      detail::compute_split(g, edges, shared, v);
      if constexpr (!detail::is_aggregation_v<R>) detail::write_row(shared, v, y + v * f, layout);
    }
  }
  return out;
}

}  // namespace nax::gnn
