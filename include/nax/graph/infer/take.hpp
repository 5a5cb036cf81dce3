#pragma once
// Shape inference of take (ONNX Gather along one axis) and of scatter_add, its VJP: the
// operand's axes with the axis replaced, in place, by the indices' axes; the indices are i32 or
// i64 of any rank, and their named axes must not be the operand's other axes.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of x's entries along `axis` at `indices`. nax::shape_error naming the op and the
/// operands if the indices are not i32 or i64, or name an axis x keeps.
NAX_RUNTIME_INLINE node infer_take(const ir& g, node_id x, axis_ref axis, node_id indices);

/// The node of x with `updates` added along `axis` at `indices`. nax::shape_error as
/// infer_take's, or if updates' shape is not take(x, axis, indices)'s.
NAX_RUNTIME_INLINE node infer_scatter_add(const ir& g, node_id x, axis_ref axis, node_id indices,
                                          node_id updates);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <span>
#include <string_view>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

namespace take_detail {

// The shape of take(xs, i, is), checked; `op` names the op in messages.
inline nax::shape taken_shape(std::string_view op, const nax::shape& xs, std::size_t i,
                              const nax::shape& is) {
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::", op, "(", xs.to_string(), ", indices ",
                                   is.to_string(), "): ", why...);
  };
  if (is.dtype() != nax::dtype::i32 && is.dtype() != nax::dtype::i64)
    fail("the indices must be i32 or i64");
  std::vector<dim> dims;
  for (std::size_t k = 0; k < i; ++k) dims.push_back(xs[k]);
  for (std::size_t k = 0; k < is.rank(); ++k) {
    const dim& d = is[k];
    if (d.has_name())
      for (std::size_t j = 0; j < xs.rank(); ++j)
        if (j != i && xs[j].has_name() && xs[j].name() == d.name())
          fail("the indices' ", d.describe(), " is also an axis of the operand");
    dims.push_back(d);
  }
  for (std::size_t k = i + 1; k < xs.rank(); ++k) dims.push_back(xs[k]);
  return nax::shape(xs.dtype(), std::span<const dim>(dims));
}

}  // namespace take_detail

NAX_RUNTIME_INLINE node infer_take(const ir& g, node_id x, axis_ref axis, node_id indices) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("take", 0, xs, axis);
  node n;
  n.shape = take_detail::taken_shape("take", xs, i, g[indices].shape);
  n.op = take_op{static_cast<std::uint32_t>(i)};
  n.inputs.push_back(x);
  n.inputs.push_back(indices);
  return n;
}

NAX_RUNTIME_INLINE node infer_scatter_add(const ir& g, node_id x, axis_ref axis, node_id indices,
                                          node_id updates) {
  const nax::shape& xs = g[x].shape;
  const nax::shape& us = g[updates].shape;
  const std::size_t i = resolve_axis("scatter_add", 0, xs, axis);
  const nax::shape want = take_detail::taken_shape("scatter_add", xs, i, g[indices].shape);
  if (!(us == want))
    nax::detail::throw_shape_error("nax::graph::scatter_add(", xs.to_string(), "): the updates are ",
                                   us.to_string(), "; they must be ", want.to_string(),
                                   " (the shape of take with these indices)");
  node n;
  n.op = scatter_add_op{static_cast<std::uint32_t>(i)};
  n.inputs.push_back(x);
  n.inputs.push_back(indices);
  n.inputs.push_back(updates);
  n.shape = xs;
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
