#pragma once
// What level 2 needs from a program that no binding changes, worked out once per program (an
// executable makes it with the program, at level 1): which values have the same symbolic shape
// (resolved once per binding, then copied), which steps are the same function of their operands
// under every binding (one kernel planned, the others copy it with their own operands), and the
// values each pipeline chain tiles.

#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::runtime {

struct specialization_recipe {
  /// Per value: the first value whose symbolic shape equals its own (itself if none before it),
  /// so that every binding gives both the same concrete shape.
  std::vector<graph::value_index> shape_like;
  /// Per step: the first earlier step of the same kind and attributes whose result and operands
  /// have, one by one, the symbolic shapes of its own (itself if none, or if its kind's kernel
  /// is not copied: runtime/step_factory.hpp, copy_step_kernel).
  std::vector<std::uint32_t> kernel_like;
  /// The steps that may move no data, their result their operand's buffer: reshapes, and
  /// set_dimension_size (when it keeps a prefix, which depends on the binding), into an
  /// intermediate, of an intermediate or (outside pipeline chains) of an input or a result, whose
  /// memory the run's caller gives: a view of it then (specialization::views).
  std::vector<std::uint32_t> may_alias;
  /// Per value: the first and the last step that reads or writes it (`untouched` if none).
  std::vector<std::uint32_t> first_touch, last_touch;
  static constexpr std::uint32_t untouched = ~std::uint32_t{0};
  /// A value of a pipeline chain that has the chain's axis first.
  struct chain_value {
    graph::value_index value;
    bool ring;  // an intermediate the chain computes and only the chain reads
  };
  /// Per pipeline chain: its values with the tile axis first, each once, in step order.
  std::vector<std::vector<chain_value>> chain_values;
  /// Per pipeline chain: its products (dot_general, fused_dense steps).
  std::vector<std::vector<std::uint32_t>> chain_products;
};

/// The recipe of p.
NAX_RUNTIME_INLINE specialization_recipe make_specialization_recipe(const graph::program& p);

/// Whether level 2 copies a kernel of this kind from a step with the same attributes and
/// symbolic shapes (runtime/step_factory.hpp, copy_step_kernel).
inline bool kernel_is_copied(graph::op_kind k) noexcept {
  return graph::record_of(k).kernel == graph::kernel_rule::shared;
}

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <bit>
#include <utility>

#include <nax/runtime/plan_memo.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE specialization_recipe make_specialization_recipe(const graph::program& p) {
  specialization_recipe r;
  const std::size_t n = p.values.size();
  // Hash -> the first value (then step) with it, in an open-addressed table (one allocation); a
  // collision of unequal ones keeps the first, and the later one stands for itself (correct,
  // merely not shared).
  constexpr std::uint32_t empty = ~std::uint32_t{0};
  std::vector<std::pair<std::uint64_t, std::uint32_t>> table(
      std::bit_ceil(2 * std::max(n, p.steps.size()) + 2));
  const std::size_t mask = table.size() - 1;
  auto first_with = [&](std::uint64_t hash, std::uint32_t i) {
    for (std::size_t slot = hash & mask;; slot = (slot + 1) & mask) {
      if (table[slot].second == empty) {
        table[slot] = {hash, i};
        return i;
      }
      if (table[slot].first == hash) return table[slot].second;
    }
  };
  std::fill(table.begin(), table.end(), std::pair{std::uint64_t{0}, empty});
  r.shape_like.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    const nax::shape& x = p.values[v].shape;
    const auto i = static_cast<std::uint32_t>(v);
    const std::uint32_t like = first_with(detail::mix_shape(0x9e3779b97f4a7c15ull, x), i);
    r.shape_like[v] = like != i && p.values[like].shape == x ? like : i;
  }

  std::fill(table.begin(), table.end(), std::pair{std::uint64_t{0}, empty});
  r.kernel_like.resize(p.steps.size());
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const graph::program_step& s = p.steps[k];
    r.kernel_like[k] = static_cast<std::uint32_t>(k);
    if (!kernel_is_copied(s.kind()) || !s.extra_results.empty()) continue;
    // Shapes by their classes: equal classes are equal symbolic shapes.
    std::uint64_t key = 0xcbf29ce484222325ull ^ (static_cast<std::uint64_t>(s.kind()) << 40);
    auto mix = [&key](std::uint64_t x) { key = (key ^ x) * 0x100000001b3ull + (key >> 29); };
    mix(s.args.size());
    mix(r.shape_like[s.result]);
    for (graph::value_index a : s.args) mix(r.shape_like[a]);
    const std::uint32_t at = first_with(key, static_cast<std::uint32_t>(k));
    if (at == k) continue;
    const graph::program_step& like = p.steps[at];
    bool same = like.op == s.op && like.args.size() == s.args.size() &&
                like.extra_results.empty() && r.shape_like[like.result] == r.shape_like[s.result];
    for (std::size_t i = 0; same && i < s.args.size(); ++i)
      same = r.shape_like[like.args[i]] == r.shape_like[s.args[i]];
    if (same) r.kernel_like[k] = at;
  }

  // (A pipeline chain's steps run by tiles of their values: a view of a caller's buffer there
  // would need its own tile addresses.)
  std::vector<char> in_chain(p.steps.size(), 0);
  for (const graph::pipeline_chain& chain : p.pipelines)
    for (std::uint32_t k : chain.steps) in_chain[k] = 1;
  for (std::uint32_t k = 0; k < p.steps.size(); ++k) {
    const graph::program_step& s = p.steps[k];
    // (Not a reshape to a run-time size: one with that size as operands after the first.)
    if (!graph::record_of(s.kind()).may_alias ||
        (s.kind() == graph::op_kind::reshape && s.args.size() != 1) ||
        p.values[s.result].role != graph::value_role::intermediate)
      continue;
    const graph::value_role from = p.values[s.args[0]].role;
    if (from == graph::value_role::intermediate ||
        (!in_chain[k] && (from == graph::value_role::input || from == graph::value_role::output)))
      r.may_alias.push_back(k);
  }

  r.first_touch.assign(n, specialization_recipe::untouched);
  r.last_touch.assign(n, 0);
  for (std::uint32_t k = 0; k < p.steps.size(); ++k) {
    auto touch = [&](graph::value_index v) {
      if (r.first_touch[v] == specialization_recipe::untouched) r.first_touch[v] = k;
      r.last_touch[v] = k;
    };
    const graph::program_step& s = p.steps[k];
    touch(s.result);
    for (graph::value_index e : s.extra_results) touch(e);
    for (graph::value_index a : s.args) touch(a);
  }

  r.chain_values.resize(p.pipelines.size());
  r.chain_products.resize(p.pipelines.size());
  std::vector<char> seen(n, 0);
  for (std::size_t c = 0; c < p.pipelines.size(); ++c) {
    const graph::pipeline_chain& chain = p.pipelines[c];
    std::vector<specialization_recipe::chain_value>& out = r.chain_values[c];
    auto visit = [&](graph::value_index v) {
      if (seen[v]) return;
      seen[v] = 1;
      const nax::shape& x = p.values[v].shape;
      if (x.rank() == 0 || !x[0].has_name() || x[0].name() != chain.axis) return;
      const graph::program_value& pv = p.values[v];
      // (Not a ring: a value nothing reads, an unread extra result: no reader would hold its
      // slots for it, and two tiles could write one slot at once.)
      const bool ring = pv.role == graph::value_role::intermediate &&
                        pv.first_step >= chain.steps.front() && pv.last_step > pv.first_step &&
                        pv.last_step <= chain.steps.back();
      out.push_back({v, ring});
    };
    for (std::uint32_t k : chain.steps) {
      if (p.steps[k].kind() == graph::op_kind::dot_general ||
          p.steps[k].kind() == graph::op_kind::fused_dense)
        r.chain_products[c].push_back(k);
      for (graph::value_index a : p.steps[k].args) visit(a);
      visit(p.steps[k].result);
      for (graph::value_index e : p.steps[k].extra_results) visit(e);
    }
    for (std::uint32_t k : chain.steps) {
      for (graph::value_index a : p.steps[k].args) seen[a] = 0;
      seen[p.steps[k].result] = 0;
      for (graph::value_index e : p.steps[k].extra_results) seen[e] = 0;
    }
  }
  return r;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
