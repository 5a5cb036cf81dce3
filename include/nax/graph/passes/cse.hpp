#pragma once
// The common-subexpression pass: a node with the same op, attributes, inputs and shape as an
// earlier node is that node (its readers read the earlier one; it is dropped). Parameters never
// merge; external nodes merge only when they hold the same kernel object.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void cse(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <bit>
#include <cstdint>
#include <vector>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

inline std::size_t node_hash(const node& n) {
  std::size_t h = static_cast<std::size_t>(n.kind()) * 0x9e3779b97f4a7c15ull;
  auto mix = [&](std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  if (const auto* e = n.op.get_if<elementwise_op>()) mix(static_cast<std::size_t>(e->op));
  if (const auto* c = n.op.get_if<constant_op>())
    mix(static_cast<std::size_t>(std::bit_cast<std::uint64_t>(c->value)));
  for (node_id i : n.inputs) mix(i);
  mix(static_cast<std::size_t>(n.shape.dtype()));
  for (const dim& d : n.shape.dims()) mix(d.extent() ^ (d.name().hash() << 1) ^ (d.bound() << 3));
  return h;
}

inline bool same_node(const node& a, const node& b) {
  return a.op == b.op && a.fused == b.fused && a.shape == b.shape &&
         std::equal(a.inputs.begin(), a.inputs.end(), b.inputs.begin(), b.inputs.end());
}

}  // namespace detail

NAX_RUNTIME_INLINE void cse(ir& g) {
  // An open-addressing table of the distinct nodes met so far, by hash: one allocation.
  std::size_t slots = 16;
  while (slots < 2 * g.size()) slots *= 2;
  struct slot {
    std::size_t hash = 0;
    node_id id = ir::no_node;
  };
  std::vector<slot> table(slots);
  bool merged = false;
  std::vector<node_id> same(g.size());
  for (node_id i = 0; i < g.size(); ++i) {
    node& n = g.at(i);
    same[i] = i;
    for (node_id& in : n.inputs) in = same[in];  // earlier nodes are already merged
    if (n.kind() == op_kind::parameter) continue;
    const std::size_t h = detail::node_hash(n);
    std::size_t k = h & (slots - 1);
    for (; table[k].id != ir::no_node; k = (k + 1) & (slots - 1))
      if (table[k].hash == h && detail::same_node(g[table[k].id], n)) {
        same[i] = table[k].id;
        merged = true;
        break;
      }
    if (same[i] == i) table[k] = {h, i};
  }
  if (!merged) return;
  std::vector<node_id> outputs(g.outputs().begin(), g.outputs().end());
  for (node_id& o : outputs) o = same[o];
  g.set_outputs(std::move(outputs));
  g.sort_and_prune();
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
