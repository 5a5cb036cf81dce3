#pragma once
// Shape inference of the row ops, softmax and layer_norm along one axis: the result has the
// operand's shape; layer_norm's gamma and beta have the normalized axis alone.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of softmax (or, with `log`, log_softmax) of node x of g along `axis` (f32 or f64).
NAX_RUNTIME_INLINE node infer_softmax(const ir& g, node_id x, axis_ref axis, bool log = false);

/// The node of layer_norm of node x of g along `axis`, scaled by gamma and shifted by beta
/// (each x's element type over that axis alone).
NAX_RUNTIME_INLINE node infer_layer_norm(const ir& g, node_id x, node_id gamma, node_id beta,
                                         axis_ref axis, double epsilon);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/core/unify.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_softmax(const ir& g, node_id x, axis_ref axis, bool log) {
  const std::string_view op = log ? "log_softmax" : "softmax";
  const nax::shape& xs = g[x].shape;
  require_floating(op, xs);
  node n;
  n.op = softmax_op{.axis = static_cast<std::uint32_t>(resolve_axis(op, 0, xs, axis)), .log = log};
  n.inputs.push_back(x);
  n.shape = xs;
  return n;
}

NAX_RUNTIME_INLINE node infer_layer_norm(const ir& g, node_id x, node_id gamma, node_id beta,
                                         axis_ref axis, double epsilon) {
  constexpr std::string_view op = "layer_norm";
  const nax::shape& xs = g[x].shape;
  require_floating(op, xs);
  const std::size_t i = resolve_axis(op, 0, xs, axis);
  const node_id params[2] = {gamma, beta};
  for (std::size_t p = 0; p < 2; ++p) {
    const nax::shape& ps = g[params[p]].shape;
    const char* what = p == 0 ? "gamma" : "beta";
    if (ps.dtype() != xs.dtype() || ps.rank() != 1)
      nax::detail::throw_shape_error("nax::graph::layer_norm: ", what, " must be ",
                                     name(xs.dtype()), "[", xs[i].to_string(), "], not ",
                                     ps.to_string());
    try {
      (void)unify_dims(xs[i], ps[0]);
    } catch (const shape_error& e) {
      nax::detail::throw_shape_error("nax::graph::layer_norm: ", what, " ", ps.to_string(),
                                     " does not match axis ", i, " of ", xs.to_string(), ": ",
                                     e.what());
    }
  }
  node n;
  layer_norm_op attrs;
  attrs.axis = static_cast<std::uint32_t>(i);
  attrs.epsilon = epsilon;
  n.op = attrs;
  n.inputs.push_back(x);
  n.inputs.push_back(gamma);
  n.inputs.push_back(beta);
  n.shape = xs;
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
