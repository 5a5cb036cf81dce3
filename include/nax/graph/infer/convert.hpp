#pragma once
// Shape inference of convert: the operand's shape with another element type.

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of x's elements converted to `type` (any element type to any).
NAX_RUNTIME_INLINE node infer_convert(const ir& g, node_id x, nax::dtype type);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_convert(const ir& g, node_id x, nax::dtype type) {
  const nax::shape& xs = g[x].shape;
  node n;
  n.op = convert_op{};
  n.inputs.push_back(x);
  n.shape = nax::shape(type, xs.dims());
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
