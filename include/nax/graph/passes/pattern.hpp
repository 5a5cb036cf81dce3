#pragma once
// What the pattern fusion passes (softmax, layer_norm, dense) share: questions about nodes
// ("is this exp?", "is this a mean over axis 2?") and taking a matched set of nodes as a group
// when nothing outside it reads an intermediate.

#include <algorithm>
#include <optional>
#include <vector>

#include <nax/core/broadcast.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/ir.hpp>
#include <nax/graph/passes/fusion_group.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::NAX_ISA::graph::passes {

class pattern_matcher {
 public:
  explicit pattern_matcher(const ir& g)
      : g_(g), users_(g.users()), taken_(g.size(), false), output_(g.size(), false) {
    for (node_id o : g.outputs()) output_[o] = true;
  }

  const node& at(node_id i) const { return g_[i]; }
  std::size_t size() const { return g_.size(); }
  const user_lists& users() const { return users_; }
  bool is_output(node_id i) const { return output_[i]; }
  /// Not yet in a group.
  bool free(node_id i) const { return !taken_[i]; }

  /// Whether node i is elementwise op `op`.
  bool is(node_id i, ops::id op) const {
    const auto* e = g_[i].op.get_if<elementwise_op>();
    return e != nullptr && e->op == op;
  }
  /// Whether node i is a reduction `kind` over the one axis `axis`.
  bool is_reduce(node_id i, ops::reduce_kind kind, std::uint32_t axis) const {
    const auto* r = g_[i].op.get_if<reduce_op>();
    return r != nullptr && r->kind == kind && r->axes.size() == 1 && r->axes[0] == axis;
  }
  /// Whether node i is a reduction `kind` over one axis (which it returns).
  std::optional<std::uint32_t> single_axis_reduce(node_id i, ops::reduce_kind kind) const {
    const auto* r = g_[i].op.get_if<reduce_op>();
    if (r == nullptr || r->kind != kind || r->axes.size() != 1) return std::nullopt;
    return r->axes[0];
  }
  /// Whether node i is the constant v.
  bool is_constant(node_id i, double v) const {
    const auto* c = g_[i].op.get_if<constant_op>();
    return c != nullptr && c->value == v;
  }
  /// The node's only reader, if it has exactly one and is not an output.
  std::optional<node_id> only_user(node_id i) const {
    if (output_[i] || users_[i].size() != 1) return std::nullopt;
    return users_[i][0];
  }

  static bool same_dims(const nax::shape& a, const nax::shape& b) {
    return a.rank() == b.rank() && std::equal(a.dims().begin(), a.dims().end(), b.dims().begin());
  }

  /// Whether node r, of a reduction's shape over axis `axis` of a value of shape `full`, read by
  /// an elementwise op of shape `full`, goes back where it was reduced from: its axis j to axis
  /// j of `full` before `axis`, to j + 1 after it. By name that is so; by position (an axis
  /// without a name) only when the reduced axis is the first, since operands then align from
  /// the right: a mean over axis 1 of [2, 2, 3], subtracted, would pair its axis 0 with axis 1.
  bool broadcasts_back(node_id r, const nax::shape& full, std::uint32_t axis) const {
    const nax::shape& rs = g_[r].shape;
    if (rs.rank() + 1 != full.rank()) return false;
    std::vector<std::size_t> map(rs.rank());
    try {
      nax::broadcast_axis_map(rs, full, map);
    } catch (const nax::shape_error&) {
      return false;
    }
    for (std::size_t j = 0; j < rs.rank(); ++j)
      if (map[j] != (j < axis ? j : j + 1)) return false;
    return true;
  }

  /// Takes `members` as group gr with root `root` if they are all free and none but the root is
  /// read outside them or is an output (a pattern's kernel computes its root alone).
  bool take(fusion_group gr, std::vector<node_id> members, node_id root) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    for (node_id m : members) {
      if (!free(m)) return false;
      if (m == root) continue;
      if (output_[m]) return false;
      for (node_id u : users_[m])
        if (!std::binary_search(members.begin(), members.end(), u)) return false;
    }
    gr.members = std::move(members);
    gr.root = root;
    for (node_id m : gr.members) taken_[m] = true;
    groups_.push_back(std::move(gr));
    return true;
  }

  /// The groups taken, finished (graph/passes/fusion_group.hpp).
  std::vector<fusion_group> finish() {
    for (fusion_group& gr : groups_) finish_group(g_, users_, gr);
    return std::move(groups_);
  }

 private:
  const ir& g_;
  user_lists users_;
  std::vector<bool> taken_, output_;
  std::vector<fusion_group> groups_;
};

}  // namespace nax::graph::passes
