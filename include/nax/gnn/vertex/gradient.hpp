#pragma once
// nax::gnn::zoom_in_grad: the gradients of a vertex program (seed "Auto differentiation").
//
//   auto out = gnn::zoom_in(g, program);               // the forward
//   auto grads = gnn::zoom_in_grad(g, program, dout);  // dout: dL/dout, like out
//   auto dh = grads.of(h);                              // dL/dh, for every tensor the program
//   reads
//
// Reverse mode over the program's value, in three passes, none with a buffer per edge:
//
//   1. forward: every aggregation's value, kept per node (each is a node value: N × its row);
//   2. destination pass, over v (the csr): dout[v] goes back through the result to v's own rows
//      (v.dst), the parameters and the aggregations' cotangents; then each aggregation, outer
//      ones first, takes its cotangent back through its edge values on each of v's in-edges, to
//      v's own rows, the edges' rows (v.edge), the parameters and the aggregations inside it;
//   3. source pass, over u (the transpose): on each out-edge u -> v, the aggregations' edge
//      values again, now only for what they read from u (v.src): u's gradient row is summed by
//      one thread, with no atomics.
//
// Each row of a gradient is summed by one thread in a fixed order, and a parameter's gradient is
// summed per block of 64 nodes, then over the blocks in order: the same bits on any thread count.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/gnn/vertex/aggregation.hpp>
#include <nax/gnn/vertex/leaf.hpp>
#include <nax/gnn/vertex/program.hpp>
#include <nax/gnn/vertex/scope.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::gnn {

/// The gradients of a vertex program: one per tensor it reads, by the tensor.
template <class T>
class vertex_grads {
 public:
  /// The gradient of the loss with respect to t, a tensor the program reads (a tensor it reads
  /// several times, say with v.src and v.dst, gets the sum). std::invalid_argument if the program
  /// does not read t.
  template <class... A>
  tensor<T, A...> of(const tensor<T, A...>& t) const {
    for (const entry& e : entries_)
      if (e.key == t.data() && e.grad.size() == t.size()) {
        tensor<T, A...> g = zeros_like(t);
        if (!e.grad.empty()) std::memcpy(g.data(), e.grad.data(), e.grad.size() * sizeof(T));
        return g;
      }
    throw std::invalid_argument(
        "nax::gnn::vertex_grads::of: the program does not read this tensor (pass the tensor "
        "itself, not a copy)");
  }

  // The gradient buffer of the tensor at key, of `size` values (made zero on first use).
  struct entry {
    const T* key;
    std::vector<T> grad;
    bool param;
  };
  std::vector<entry> entries_;

  T* buffer(const T* key, std::size_t size, bool param) {
    for (entry& e : entries_)
      if (e.key == key) return e.grad.data();
    entries_.push_back({key, std::vector<T>(size, T(0)), param});
    return entries_.back().grad.data();
  }
};

namespace detail {

inline constexpr std::size_t grad_block = 64;  // nodes per block of a parameter's partial sums

// Row cot of v's result back through the result r (a node value that is not an aggregation).
template <class R>
void pull_row(R& r, std::size_t v, const typename R::value_type* cot,
              const row_layout<typename R::axes_type>& l) {
  using T = typename R::value_type;
  using Row = typename R::axes_type;
  using Inner = inner_axis_of<Row>;
  const std::size_t n = inner_extent(l);
  for_each_row(l, [&](const std::size_t* idx, std::size_t offset) {
    r.template at_outer<Row>(idx);
    r.template at_site<Inner>(site{v, v, 0});
    const T* c = cot + offset;
    std::size_t i = 0;
    if constexpr (!invariant_v<Row, Inner>)
      for (constexpr std::size_t w = simd::width<T>; i + w <= n; i += w)
        push<Inner>(r, i, simd::vec<T>::load_unaligned(c + i));
    for (; i < n; ++i) push<Inner>(r, i, c[i]);
    r.template flush<Inner>();
  });
}

}  // namespace detail

/// The gradients of sum(dout ⊙ zoom_in(g, program)) with respect to every tensor the program
/// reads (see the file comment). dout is over the program's result shape; nax::shape_error,
/// naming the axis, if its extents differ.
template <class Program, class T, class... A>
vertex_grads<T> zoom_in_grad(const csr& g, Program&& program, const tensor<T, node, A...>& dout) {
  const vertex at(g);
  auto result = detail::result_of(at, program);
  using R = decltype(result);
  using Row = typename R::axes_type;
  static_assert(std::is_same_v<typename R::value_type, T>,
                "nax::gnn::zoom_in_grad: dout's element type is not the program's");
  static_assert(
      axes_same_set_v<Row, nax::axes<A...>> && sizeof...(A) == detail::mp::mp_size<Row>::value,
      "nax::gnn::zoom_in_grad: dout's axes are not those of the program's result");
  static_assert(std::is_same_v<nax::axes<A...>, detail::mp::mp_rename<Row, nax::axes>>,
                "nax::gnn::zoom_in_grad: dout's axes are not in the order of the program's "
                "result");
  const std::size_t n = g.num_nodes();
  g.check_nodes("zoom_in_grad", dout.template extent<node>());
  detail::mp::mp_for_each<detail::mp::mp_transform<detail::mp::mp_identity, Row>>([&](auto a) {
    using X = typename decltype(a)::type;
    const std::size_t want = result.template extent<X>(), given = dout.template extent<X>();
    if (want != given)
      nax::detail::throw_axis_mismatch("nax::gnn::zoom_in_grad: ", X::name, "the result", want,
                                       "dout", given);
  });

  vertex_grads<T> grads;
  // Every tensor read gets its gradient buffer (one per tensor, however often it is read).
  result.for_each_leaf([&](auto& l) {
    grads.buffer(l.key(), l.rows() * l.row_size(),
                 std::is_same_v<typename std::remove_cvref_t<decltype(l)>::scope, param_scope>);
  });
  const detail::row_layout<Row> layout = detail::layout_of<Row>(result);
  if (n == 0) return grads;

  // Every aggregation's value and cotangent, per node; copies of one share them.
  std::vector<std::uint64_t> ids;
  std::vector<std::vector<T>> values, cotangents;
  result.for_each_aggregation([&](auto& a) {
    const auto found = std::find(ids.begin(), ids.end(), a.id());
    if (found != ids.end()) {
      const auto k = static_cast<std::size_t>(found - ids.begin());
      a.keep_in(values[k].data(), a.size(), false);
      a.cotangents_in(cotangents[k].data());
      return;
    }
    ids.push_back(a.id());
    values.emplace_back(n * a.size());
    cotangents.emplace_back(n * a.size());
    a.keep_in(values.back().data(), a.size(), true);
    a.cotangents_in(cotangents.back().data());
    a.prepare_backward(n);
  });
  const detail::in_edges edges{g.offsets().data(), g.sources().data(), g.edge_ids().data()};
  const std::size_t per_node = std::max<std::size_t>(1, layout.size * (1 + g.num_edges() / n));
  const std::size_t grain = std::max<std::size_t>(1, 4096 / per_node);

  // 1. The forward: every aggregation's rows.
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    R local = result;
    for (std::size_t v = lo; v < hi; ++v)
      if (g.in_degree(v) <= split_degree)
        local.for_each_aggregation([&](auto& a) { a.compute(edges, v); });
  });
  for (const std::size_t v : g.split_nodes()) {  // as zoom_in computes them
    R shared = result;
    detail::compute_split(g, edges, shared, v);
  }

  // 2. The destination pass, per block of nodes (a parameter's partial sums are per block).
  const std::size_t blocks = (n + detail::grad_block - 1) / detail::grad_block;
  std::vector<std::vector<T>> partials;  // per parameter: blocks × its size
  for (auto& e : grads.entries_) partials.emplace_back(e.param ? blocks * e.grad.size() : 0);
  const T* seed = dout.data();
  parallel_for(0, blocks, 1, [&](std::size_t lo, std::size_t hi) {
    R local = result;
    local.for_each_aggregation([&](auto& a) {
      const auto found = std::find(ids.begin(), ids.end(), a.id());
      a.grad_into(cotangents[static_cast<std::size_t>(found - ids.begin())].data());
    });
    for (std::size_t b = lo; b < hi; ++b) {
      // Leaves add here, except the sources' (pass 3); parameters into this block's partials.
      local.for_each_leaf([&](auto& l) {
        using L = std::remove_cvref_t<decltype(l)>;
        if constexpr (std::is_same_v<typename L::scope, source_scope>) {
          l.grad_into(nullptr);
        } else {
          std::size_t j = 0;
          while (grads.entries_[j].key != l.key()) ++j;
          l.grad_into(std::is_same_v<typename L::scope, param_scope>
                          ? partials[j].data() + b * grads.entries_[j].grad.size()
                          : grads.entries_[j].grad.data());
        }
      });
      const std::size_t end = std::min(n, (b + 1) * detail::grad_block);
      for (std::size_t v = b * detail::grad_block; v < end; ++v) {
        // dout[v] back through the result.
        if constexpr (detail::is_aggregation_v<R>) {
          std::size_t j = 0;
          while (ids[j] != local.id()) ++j;
          std::copy_n(seed + v * layout.size, layout.size, cotangents[j].data() + v * layout.size);
        } else {
          detail::pull_row(local, v, seed + v * layout.size, layout);
        }
        local.for_each_aggregation_reversed([&](auto& a) { a.backward_dst(edges, v); });
      }
    }
  });
  for (std::size_t j = 0; j < partials.size(); ++j) {
    std::vector<T>& total = grads.entries_[j].grad;
    for (std::size_t b = 0; b < blocks && !partials[j].empty(); ++b)
      for (std::size_t i = 0; i < total.size(); ++i) total[i] += partials[j][b * total.size() + i];
  }

  // 3. The source pass, over the transpose: u's row gathers its out-edges' cotangents.
  const csr& t = g.transpose();
  const detail::in_edges out_edges{t.offsets().data(), t.sources().data(), t.edge_ids().data()};
  parallel_for(0, n, grain, [&](std::size_t lo, std::size_t hi) {
    R local = result;
    local.for_each_leaf([&](auto& l) {
      using L = std::remove_cvref_t<decltype(l)>;
      if constexpr (std::is_same_v<typename L::scope, source_scope>) {
        std::size_t j = 0;
        while (grads.entries_[j].key != l.key()) ++j;
        l.grad_into(grads.entries_[j].grad.data());
      } else {
        l.grad_into(nullptr);
      }
    });
    local.for_each_aggregation([&](auto& a) { a.grad_into(nullptr); });
    for (std::size_t u = lo; u < hi; ++u)
      for (auto e = static_cast<std::size_t>(out_edges.offsets[u]);
           e < static_cast<std::size_t>(out_edges.offsets[u + 1]); ++e) {
        const detail::site s{static_cast<std::size_t>(out_edges.sources[e]), u,
                             static_cast<std::size_t>(out_edges.ids[e])};
        const std::size_t in = g.in_degree(s.v);
        local.for_each_aggregation([&](auto& a) { a.backward_edge(s, in); });
      }
  });
  return grads;
}

}  // namespace nax::gnn
