#pragma once
// The reduction fusion pass: an elementwise group (a fused_elementwise node with no extra
// result, or a single elementwise node) that only a reduction reads, and that is not an output,
// joins that reduction when its reduced axes are one contiguous run (trailing: row sums;
// leading: a sum over the batch). The fused_reduce node computes the group a piece at a time
// into a buffer in cache and reduces it there: the group's result never reaches memory.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void fuse_reduce(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <memory>
#include <vector>

#include <nax/graph/decomposition.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

// The decomposition of elementwise node e followed by reduction r, over e's operands (`args`,
// distinct, in e's order of first use).
inline std::shared_ptr<decomposition> elementwise_then_reduce(const ir& g, node_id e, node_id r,
                                                              std::vector<node_id>& args) {
  auto d = std::make_shared<decomposition>();
  const node& en = g[e];
  if (en.fused) {
    *d = *en.fused;
    args.assign(en.inputs.begin(), en.inputs.end());
  } else {
    node op = en;
    for (node_id& in : op.inputs) {
      auto at = std::find(args.begin(), args.end(), in);
      if (at == args.end()) at = args.insert(args.end(), in);
      in = static_cast<node_id>(at - args.begin());
    }
    d->num_args = args.size();
    d->ops.push_back(std::move(op));
    d->results = {0};
  }
  node reduction = g[r];
  reduction.inputs = {static_cast<node_id>(d->num_args + d->results[0])};
  d->ops.push_back(std::move(reduction));
  d->results = {static_cast<std::uint32_t>(d->ops.size() - 1)};
  d->kind = fusion_kind::reduce;
  return d;
}

inline bool reduces_a_run(const reduce_op& r, std::size_t rank) {
  const std::size_t k = r.axes.size();
  if (k == 0 || k > rank) return false;
  for (std::size_t j = 1; j < k; ++j)
    if (r.axes[j] != r.axes[j - 1] + 1) return false;
  return true;
}

}  // namespace detail

NAX_RUNTIME_INLINE void fuse_reduce(ir& g) {
  const user_lists users = g.users();
  bool changed = false;
  for (node_id r = 0; r < g.size(); ++r) {
    const node& rn = g[r];
    if (!rn.is<reduce_op>() || !ops::is_floating(rn.shape.dtype())) continue;
    const node_id e = rn.inputs[0];
    const node& en = g[e];
    const bool group = en.is<fused_elementwise_op>() && en.fused->results.size() == 1;
    if ((!group && !en.is<elementwise_op>()) || g.is_output(e) || users[e].size() != 1) continue;
    if (!detail::reduces_a_run(rn.as<reduce_op>(), en.shape.rank())) continue;
    std::vector<node_id> args;
    node fused;
    fused.fused = detail::elementwise_then_reduce(g, e, r, args);
    fused.op = fused_reduce_op{rn.as<reduce_op>()};
    fused.inputs.assign(args.begin(), args.end());
    fused.shape = rn.shape;
    fused.origin = rn.origin;
    g.at(r) = std::move(fused);  // e, read by r alone, is now read by nothing
    changed = true;
  }
  if (changed) g.sort_and_prune();
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
