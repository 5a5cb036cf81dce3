#pragma once
// Shape inference of a reduction: the reduced axes go, the others stay in order.

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of reduction `kind` of node x of g over `axes`; nax::shape_error naming the op and
/// the axis for an axis x lacks or lists twice, and for bool elements.
NAX_RUNTIME_INLINE node infer_reduce(const ir& g, ops::reduce_kind kind, node_id x,
                                     std::span<const axis_ref> axes);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <string>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_reduce(const ir& g, ops::reduce_kind kind, node_id x,
                                     std::span<const axis_ref> axes) {
  const std::string op = nax::detail::message("reduce_", ops::name(kind));
  const nax::shape& xs = g[x].shape;
  std::vector<bool> reduced(xs.rank(), false);
  for (const axis_ref& a : axes) {
    const std::size_t i = resolve_axis(op, 0, xs, a);
    if (reduced[i])
      nax::detail::throw_shape_error("nax::graph::", op, ": axis ", i, " (", xs[i].to_string(),
                                     ") of ", xs.to_string(), " is listed twice");
    reduced[i] = true;
  }
  if (xs.dtype() == nax::dtype::boolean)
    nax::detail::throw_shape_error("nax::graph::", op, ": cannot reduce bool elements (",
                                   xs.to_string(), ")");
  reduce_op attrs;
  attrs.kind = kind;
  nax::detail::small_vector<dim, 6> kept;
  for (std::size_t i = 0; i < xs.rank(); ++i) {
    if (reduced[i])
      attrs.axes.push_back(static_cast<std::uint32_t>(i));
    else
      kept.push_back(xs[i]);
  }
  node n;
  n.op = std::move(attrs);
  n.inputs.push_back(x);
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(kept.data(), kept.size()));
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
