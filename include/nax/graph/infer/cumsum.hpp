#pragma once
// Shape inference of cumsum along one axis: the operand's shape and element type, which is
// f32, f64, i32 or i64 (ONNX CumSum's numeric types that nax has; not bool, not u8).

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>
#include <nax/ops/cumsum.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of the cumulative sum of node x of g along `axis`; nax::shape_error naming the op,
/// the operand and the axis if x has no such axis or its elements are not f32, f64, i32 or i64.
NAX_RUNTIME_INLINE node infer_cumsum(const ir& g, node_id x, axis_ref axis, cumsum_options options);

}  // namespace nax::NAX_ISA::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_cumsum(const ir& g, node_id x, axis_ref axis,
                                     cumsum_options options) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("cumsum", 0, xs, axis);
  require_numeric("cumsum", xs);
  node n;
  n.op = cumsum_op{static_cast<std::uint32_t>(i), options};
  n.inputs.push_back(x);
  n.shape = xs;
  return n;
}

}  // namespace nax::NAX_ISA::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
