#pragma once
// Shape inference of argmax and argmin along one axis: the operand's other axes, in order, of
// i64 positions.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of argmax (argmin) of node x of g along `axis`; nax::shape_error naming the op, the
/// operand and the axis if x has no such axis, has bool elements, or the axis is statically empty.
NAX_RUNTIME_INLINE node infer_arg_reduce(const ir& g, arg_kind kind, node_id x, axis_ref axis);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <string_view>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_arg_reduce(const ir& g, arg_kind kind, node_id x, axis_ref axis) {
  const std::string_view op = kind == arg_kind::argmax ? "argmax" : "argmin";
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis(op, 0, xs, axis);
  require_numeric(op, xs);
  if (xs[i].is_static() && xs[i].extent() == 0)
    nax::detail::throw_shape_error("nax::graph::", op, ": ", axis_subject(xs[i], i), " of ",
                                   xs.to_string(), " is empty");
  nax::detail::small_vector<dim, 6> kept;
  for (std::size_t k = 0; k < xs.rank(); ++k)
    if (k != i) kept.push_back(xs[k]);
  node n;
  n.op = arg_reduce_op{kind, static_cast<std::uint32_t>(i)};
  n.inputs.push_back(x);
  n.shape = nax::shape(nax::dtype::i64, std::span<const dim>(kept.data(), kept.size()));
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
