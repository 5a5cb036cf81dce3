#pragma once
// What every fusion pass does once it has chosen its groups: replace each group of nodes by one
// fused node that keeps the ops it replaces as its decomposition (graph/decomposition.hpp).
// The fused node takes the place of the group's root (the member whose value it computes);
// each other member whose value is read outside the group, or is an output, becomes an
// extra_result node of it, in the member's place. The graph is then sorted and pruned.

#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/decomposition.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

/// A set of nodes that becomes one fused node.
struct fusion_group {
  fusion_kind kind = fusion_kind::elementwise;
  attributes op;                 // the fused node's attributes
  std::vector<node_id> members;  // ascending (a topological order)
  node_id root = 0;              // the member whose value the fused node is
  std::vector<node_id> extra;    // other members read outside the group (finish_group)
  /// The nodes outside the group its members read: the pattern's operands first, in the order
  /// its kernel takes them; finish_group appends the others (a pattern's constants) in order of
  /// first use, so the decomposition names every operand.
  std::vector<node_id> args;
};

/// Sets gr.extra (members but the root read outside the group or requested) and completes
/// gr.args. `users`: g.users().
NAX_RUNTIME_INLINE void finish_group(const ir& g, const user_lists& users, fusion_group& gr);

/// Replaces every group (finished, disjoint) by its fused node, then sorts and prunes g.
NAX_RUNTIME_INLINE void replace_groups(ir& g, std::span<const fusion_group> groups);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <memory>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void finish_group(const ir& g, const user_lists& users, fusion_group& gr) {
  auto member = [&](node_id i) {
    return std::binary_search(gr.members.begin(), gr.members.end(), i);
  };
  gr.extra.clear();
  for (node_id m : gr.members) {
    if (m == gr.root) continue;
    bool outside = g.is_output(m);
    for (node_id u : users[m]) outside = outside || !member(u);
    if (outside) gr.extra.push_back(m);
  }
  for (node_id m : gr.members)
    for (node_id in : g[m].inputs)
      if (!member(in) && std::find(gr.args.begin(), gr.args.end(), in) == gr.args.end())
        gr.args.push_back(in);
}

namespace detail {

// The decomposition of group gr: its members as ops over its arguments.
inline std::shared_ptr<const decomposition> decompose(const ir& g, const fusion_group& gr) {
  auto d = std::make_shared<decomposition>();
  d->kind = gr.kind;
  d->num_args = gr.args.size();
  auto position = [&](node_id m) {
    return static_cast<std::uint32_t>(std::lower_bound(gr.members.begin(), gr.members.end(), m) -
                                      gr.members.begin());
  };
  auto operand = [&](node_id in) -> std::uint32_t {
    if (std::binary_search(gr.members.begin(), gr.members.end(), in))
      return static_cast<std::uint32_t>(d->num_args) + position(in);
    return static_cast<std::uint32_t>(std::find(gr.args.begin(), gr.args.end(), in) -
                                      gr.args.begin());
  };
  for (node_id m : gr.members) {
    node op = g[m];
    op.fused = nullptr;
    for (node_id& in : op.inputs) in = operand(in);
    d->ops.push_back(std::move(op));
  }
  d->results.push_back(position(gr.root));
  for (node_id m : gr.extra) d->results.push_back(position(m));
  return d;
}

}  // namespace detail

NAX_RUNTIME_INLINE void replace_groups(ir& g, std::span<const fusion_group> groups) {
  if (groups.empty()) return;
  std::vector<std::shared_ptr<const decomposition>> parts;
  parts.reserve(groups.size());
  for (const fusion_group& gr : groups) parts.push_back(detail::decompose(g, gr));
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const fusion_group& gr = groups[k];
    node fused;
    fused.op = gr.op;
    for (node_id a : gr.args) fused.inputs.push_back(a);
    fused.shape = g[gr.root].shape;
    fused.fused = parts[k];
    fused.origin = g[gr.root].origin;
    for (std::size_t e = 0; e < gr.extra.size(); ++e) {
      node& x = g.at(gr.extra[e]);
      node extra;
      extra.op = extra_result_op{static_cast<std::uint32_t>(e + 1)};
      extra.inputs.push_back(gr.root);
      extra.shape = x.shape;
      extra.origin = x.origin;
      x = std::move(extra);
    }
    g.at(gr.root) = std::move(fused);
  }
  g.sort_and_prune();
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
