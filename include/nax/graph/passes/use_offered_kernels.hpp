#pragma once
// The offered-kernels pass: a fused elementwise group that computes an offered value
// (graph/kernel_offer.hpp) from nothing but the offer's operands and values made for it runs the
// offered kernel instead of the elementwise program. nax::jit offers each typed expression's own
// loop, compiled with the C++ program: the same op bodies (so the same bits), without the block
// interpreter's overhead. A group that fusion grew beyond the expression, or absorbed into a GEMM
// or a reduction, keeps its fused form. Runs after the fusion passes.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void use_offered_kernels(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void use_offered_kernels(ir& g) {
  if (g.offers().empty()) return;
  const user_lists users = g.users();
  for (node_id i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    if (n.kind() != op_kind::fused_elementwise) continue;
    const auto offer = std::find_if(g.offers().begin(), g.offers().end(),
                                    [&](const kernel_offer& o) { return o.root == n.origin; });
    if (offer == g.offers().end()) continue;
    // One result (no extra results read elsewhere), in the kernel's axis order.
    const auto u = users[i];
    if (std::any_of(u.begin(), u.end(),
                    [&](node_id r) { return g[r].kind() == op_kind::extra_result; }))
      continue;
    if (!(n.shape == offer->result)) continue;
    // The group reads the offer's operands, constants, or values made for the offer (a part
    // over fewer axes, computed once by a step of its own: the kernel recomputes it).
    auto ours = [&](node_id origin) {
      return (origin >= offer->interior_begin && origin < offer->root) ||
             std::find(offer->operands.begin(), offer->operands.end(), origin) !=
                 offer->operands.end();
    };
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), [&](node_id in) {
          return g[in].kind() == op_kind::constant || ours(g[in].origin);
        }))
      continue;
    // The kernel reads the operands themselves, wherever the graph now has them.
    node e;
    for (node_id want : offer->operands) {
      node_id at = ir::no_node;
      for (node_id k = 0; k < g.size() && at == ir::no_node; ++k)
        if (g[k].origin == want) at = k;
      if (at == ir::no_node) break;
      e.inputs.push_back(at);
    }
    if (e.inputs.size() != offer->operands.size()) continue;
    e.op = external_op{offer->kernel};
    e.shape = n.shape;
    e.origin = n.origin;
    g.at(i) = std::move(e);
  }
  g.sort_and_prune();  // constants only the group read
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
