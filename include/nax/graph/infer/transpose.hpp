#pragma once
// Shape inference of transpose: the operand's axes in the order given.

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of node x of g with its axes in the order `perm` (result axis i is x's perm[i]).
NAX_RUNTIME_INLINE node infer_transpose(const ir& g, node_id x, std::span<const axis_ref> perm);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_transpose(const ir& g, node_id x, std::span<const axis_ref> perm) {
  constexpr std::string_view op = "transpose";
  const nax::shape& xs = g[x].shape;
  if (perm.size() != xs.rank())
    nax::detail::throw_shape_error("nax::graph::transpose: ", perm.size(),
                                   " axes given for the rank-", xs.rank(), " operand ",
                                   xs.to_string());
  std::vector<bool> used(xs.rank(), false);
  transpose_op attrs;
  nax::detail::small_vector<dim, 6> out;
  for (const axis_ref& a : perm) {
    const std::size_t i = resolve_axis(op, 0, xs, a);
    if (used[i])
      nax::detail::throw_shape_error("nax::graph::transpose: axis ", i, " (", xs[i].to_string(),
                                     ") of ", xs.to_string(), " is listed twice");
    used[i] = true;
    attrs.perm.push_back(static_cast<std::uint32_t>(i));
    out.push_back(xs[i]);
  }
  node n;
  n.op = std::move(attrs);
  n.inputs.push_back(x);
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
