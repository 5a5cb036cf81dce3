#pragma once
// nax::gnn's prebuilt layers inside nax::jit and nax::value_and_grad. On traced values each layer
// is one node of the runtime graph: an external node (graph/external_kernel.hpp) that runs the
// layer on the run's buffers, and differentiable (graph/differentiable_kernel.hpp), so that
// nax::graph::grad, and with it value_and_grad, differentiates a model through it:
//
//   auto step = nax::value_and_grad(
//       [&](auto x, auto w, auto a_src, auto a_dst) {
//         auto h = nax::gnn::gat(g, nax::dot<in>(x, w), a_src, a_dst, 0.2f);  // w: [in, head, f]
//         return nax::sum<nax::gnn::node>(...);                                 // a loss
//       },
//       nax::data<float, nax::gnn::node, in>("x"), nax::input<float, in, head, f>("w"), ...);
//
// The VJPs are the layers' hand-derived backward kernels (aggregate_grad.hpp, gat_grad.hpp), as
// nodes of the same graph:
//   aggregate_sum, aggregate_mean, gcn   one node: the aggregation over the transpose;
//   gat   two nodes: dh (gat_grad), and da_src with da_dst (gat_grad's destination pass and
//         the sums over nodes, without dh's pass). The second repeats the costly pass: bench/gnn
//         measured forward + backward at 1.6 times the direct calls (a node with three results
//         would remove it; the graph's external nodes have one).
//
// A layer's node keeps a copy of the graph g, so g may go away after tracing. The operands must
// be nodes (traced values): an expression over traced values becomes one with nax::eval.

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/aggregate_grad.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/gnn/gat.hpp>
#include <nax/gnn/gat_grad.hpp>
#include <nax/graph/differentiable_kernel.hpp>
#include <nax/graph/ops.hpp>
#include <nax/jit/fused_expression.hpp>
#include <nax/jit/traced.hpp>
#include <nax/kernels/step_kernel.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

// A tensor over A... with the extents of shape s and a copy of the elements at p.
template <class T, class... A>
tensor<T, A...> copy_in(const void* p, const nax::shape& s) {
  tensor<T, A...> t(nax::detail::extents_from_shape<nax::extents<A...>>(s));
  if (t.size() != 0) std::memcpy(t.data(), p, t.size() * sizeof(T));
  return t;
}
template <class X>
void copy_out(const X& x, void* p) {
  if (x.size() != 0) std::memcpy(p, x.data(), x.size() * sizeof(typename X::value_type));
}

// A step that runs f(values) (the run's buffers by value id).
template <class F>
class layer_step final : public kernels::step_kernel {
 public:
  explicit layer_step(F f) : f_(std::move(f)) {}
  void run(void* const* values, std::byte*) const override { f_(values); }

 private:
  F f_;
};
template <class F>
std::unique_ptr<kernels::step_kernel> make_step(F f) {
  return std::make_unique<layer_step<F>>(std::move(f));
}

inline const char* aggregation_name(edge_weight w, bool grad) {
  switch (w) {
    case edge_weight::one: return grad ? "aggregate_sum_grad" : "aggregate_sum";
    case edge_weight::mean: return grad ? "aggregate_mean_grad" : "aggregate_mean";
    case edge_weight::gcn: return grad ? "gcn_grad" : "gcn";
  }
  return "";
}

// nax::shape_error, naming the layer, unless shape s (over [node, ...]) has g's node count.
inline void check_graph_nodes(const csr& g, const char* layer, const nax::shape& s) {
  const std::size_t n = s[0].extent();
  if (n != g.num_nodes())
    nax::detail::throw_shape_error("nax::gnn::", layer, ": h has ", n, " nodes, the graph ",
                                   g.num_nodes());
}

// The aggregation's backward: dout over the transpose.
template <edge_weight W, class T, class... Axes>
class aggregate_grad_kernel final : public graph::external_kernel {
 public:
  explicit aggregate_grad_kernel(std::shared_ptr<const csr> g) : g_(std::move(g)) {}
  std::string label() const override {
    std::string label(
        "gnn::");  // (appended: g++ 12 misreads `std::string("...") + s`, -Warray-bounds)
    return label.append(aggregation_name(W, true));
  }
  std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                             std::uint32_t result,
                                             std::span<const nax::shape> shapes) const override {
    const nax::shape s = shapes[args[0]];
    check_graph_nodes(*g_, aggregation_name(W, true), s);
    return make_step([g = g_, dy = args[0], result, s](void* const* values) {
      const auto d = copy_in<T, node, Axes...>(values[dy], s);
      if constexpr (W == edge_weight::one) copy_out(aggregate_sum_grad(*g, d), values[result]);
      if constexpr (W == edge_weight::mean) copy_out(aggregate_mean_grad(*g, d), values[result]);
      if constexpr (W == edge_weight::gcn) copy_out(gcn_grad(*g, d), values[result]);
    });
  }

 private:
  std::shared_ptr<const csr> g_;
};

template <edge_weight W, class T, class... Axes>
class aggregate_kernel final : public graph::differentiable_kernel {
 public:
  explicit aggregate_kernel(std::shared_ptr<const csr> g) : g_(std::move(g)) {}
  std::string label() const override {
    std::string label(
        "gnn::");  // (appended: g++ 12 misreads `std::string("...") + s`, -Warray-bounds)
    return label.append(aggregation_name(W, false));
  }
  std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                             std::uint32_t result,
                                             std::span<const nax::shape> shapes) const override {
    const nax::shape s = shapes[args[0]];
    check_graph_nodes(*g_, aggregation_name(W, false), s);
    return make_step([g = g_, x = args[0], result, s](void* const* values) {
      const auto h = copy_in<T, node, Axes...>(values[x], s);
      copy_out(aggregate<W>(aggregation_name(W, false), *g, h), values[result]);
    });
  }
  std::vector<std::optional<graph::value>> vjp(std::span<const graph::value> args,
                                               const graph::value&,
                                               const graph::value& dy) const override {
    const graph::value in[] = {dy};
    return {args[0].owner().external(std::make_shared<aggregate_grad_kernel<W, T, Axes...>>(g_), in,
                                     args[0].shape())};
  }

 private:
  std::shared_ptr<const csr> g_;
};

// gat's backward as two nodes over (h, a_src, a_dst, dout): dh, or da_src and da_dst stacked
// along a static axis "gat_side" of 2.
using gat_side = nax::axis<"gat_side", 2>;

template <class T, class Head, class Feat>
class gat_grad_kernel final : public graph::external_kernel {
 public:
  gat_grad_kernel(std::shared_ptr<const csr> g, T slope, bool for_h)
      : g_(std::move(g)), slope_(slope), for_h_(for_h) {}
  std::string label() const override {
    return for_h_ ? "gnn::gat_grad (h)" : "gnn::gat_grad (a_src, a_dst)";
  }
  std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                             std::uint32_t result,
                                             std::span<const nax::shape> shapes) const override {
    check_graph_nodes(*g_, "gat_grad", shapes[args[0]]);
    std::array<nax::shape, 4> s{shapes[args[0]], shapes[args[1]], shapes[args[2]], shapes[args[3]]};
    std::array<std::uint32_t, 4> in{args[0], args[1], args[2], args[3]};
    return make_step([g = g_, slope = slope_, for_h = for_h_, s, in, result](void* const* v) {
      const auto grads = nax::gnn::detail::gat_grad(
          *g, copy_in<T, node, Head, Feat>(v[in[0]], s[0]), copy_in<T, Head, Feat>(v[in[1]], s[1]),
          copy_in<T, Head, Feat>(v[in[2]], s[2]), slope,
          copy_in<T, node, Head, Feat>(v[in[3]], s[3]), for_h);
      if (for_h) return copy_out(grads.h, v[result]);
      copy_out(grads.a_src, v[result]);
      copy_out(grads.a_dst, static_cast<T*>(v[result]) + grads.a_src.size());
    });
  }

 private:
  std::shared_ptr<const csr> g_;
  T slope_;
  bool for_h_;
};

template <class T, class Head, class Feat>
class gat_kernel final : public graph::differentiable_kernel {
 public:
  gat_kernel(std::shared_ptr<const csr> g, T slope) : g_(std::move(g)), slope_(slope) {}
  std::string label() const override { return "gnn::gat"; }
  std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                             std::uint32_t result,
                                             std::span<const nax::shape> shapes) const override {
    check_graph_nodes(*g_, "gat", shapes[args[0]]);
    std::array<nax::shape, 3> s{shapes[args[0]], shapes[args[1]], shapes[args[2]]};
    std::array<std::uint32_t, 3> in{args[0], args[1], args[2]};
    return make_step([g = g_, slope = slope_, s, in, result](void* const* v) {
      copy_out(gat(*g, copy_in<T, node, Head, Feat>(v[in[0]], s[0]),
                   copy_in<T, Head, Feat>(v[in[1]], s[1]), copy_in<T, Head, Feat>(v[in[2]], s[2]),
                   slope),
               v[result]);
    });
  }
  std::vector<std::optional<graph::value>> vjp(std::span<const graph::value> args,
                                               const graph::value&,
                                               const graph::value& dy) const override {
    graph::builder& b = args[0].owner();
    const graph::value in[] = {args[0], args[1], args[2], dy};
    const graph::value dh = b.external(
        std::make_shared<gat_grad_kernel<T, Head, Feat>>(g_, slope_, true), in, args[0].shape());
    // da_src and da_dst, stacked: [gat_side, Head, Feat].
    const nax::shape& a = args[1].shape();
    std::vector<nax::dim> dims{nax::dim::named(gat_side::name, 2)};
    for (const nax::dim& d : a.dims()) dims.push_back(d);
    const graph::value da =
        b.external(std::make_shared<gat_grad_kernel<T, Head, Feat>>(g_, slope_, false), in,
                   nax::shape(a.dtype(), std::span<const nax::dim>(dims.data(), dims.size())));
    return {dh, graph::reshape(graph::slice(da, gat_side::name, 0, 1), a),
            graph::reshape(graph::slice(da, gat_side::name, 1, 2), args[2].shape())};
  }

 private:
  std::shared_ptr<const csr> g_;
  T slope_;
};

template <edge_weight W, class T, class... Axes>
traced<T, node, Axes...> traced_aggregate(const csr& g, const traced<T, node, Axes...>& h) {
  const graph::value in[] = {h.node()};
  return traced<T, node, Axes...>(h.node().owner().external(
      std::make_shared<aggregate_kernel<W, T, Axes...>>(std::make_shared<const csr>(g)), in,
      h.node().shape()));
}

}  // namespace detail

/// aggregate_sum on a traced value (inside nax::jit or nax::value_and_grad): a graph node.
template <class T, class... Axes>
traced<T, node, Axes...> aggregate_sum(const csr& g, const traced<T, node, Axes...>& h) {
  return detail::traced_aggregate<detail::edge_weight::one>(g, h);
}
/// aggregate_mean on a traced value: a graph node.
template <class T, class... Axes>
traced<T, node, Axes...> aggregate_mean(const csr& g, const traced<T, node, Axes...>& h) {
  return detail::traced_aggregate<detail::edge_weight::mean>(g, h);
}
/// gcn on a traced value: a graph node.
template <class T, class... Axes>
traced<T, node, Axes...> gcn(const csr& g, const traced<T, node, Axes...>& h) {
  return detail::traced_aggregate<detail::edge_weight::gcn>(g, h);
}
/// gat on traced values: a graph node.
template <class T, class Head, class Feat>
traced<T, node, Head, Feat> gat(const csr& g, const traced<T, node, Head, Feat>& h,
                                const traced<T, Head, Feat>& a_src,
                                const traced<T, Head, Feat>& a_dst, T negative_slope) {
  const graph::value in[] = {h.node(), a_src.node(), a_dst.node()};
  return traced<T, node, Head, Feat>(
      h.node().owner().external(std::make_shared<detail::gat_kernel<T, Head, Feat>>(
                                    std::make_shared<const csr>(g), negative_slope),
                                in, h.node().shape()));
}

}  // namespace nax::gnn
