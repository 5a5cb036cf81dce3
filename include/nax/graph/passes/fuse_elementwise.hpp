#pragma once
// The elementwise fusion pass: maximal connected sets of elementwise nodes over one iteration
// shape become one fused_elementwise node (one elementwise program: each element is read once
// and written once, with the intermediates in registers or L1). Operands of other shapes are
// read broadcast, and so are broadcast nodes to the iteration shape that only the group reads.
// Groups grow from the last node back through operands. A member read outside the group becomes
// an extra result of the fused node (one write, where splitting the group there would cost the
// same write and a read back); a member whose joining would make a path leave the group and
// come back (a cycle between fused nodes) is left out.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void fuse_elementwise(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <nax/graph/passes/fusion_group.hpp>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

class elementwise_grouper {
 public:
  explicit elementwise_grouper(const ir& g)
      : g_(g),
        users_(g.users()),
        output_(g.size(), false),
        group_of_(g.size(), unassigned),
        in_group_(g.size(), 0),
        seen_(g.size(), 0) {
    for (node_id o : g.outputs()) output_[o] = true;
  }

  std::vector<fusion_group> run() {
    for (node_id i = static_cast<node_id>(g_.size()); i-- > 0;)
      if (group_of_[i] == unassigned) grow(i);
    for (fusion_group& gr : groups_) finish_group(g_, users_, gr);
    return std::move(groups_);
  }

 private:
  static constexpr std::int32_t unassigned = -1;

  static bool same_dims(const nax::shape& a, const nax::shape& b) {
    return a.rank() == b.rank() && std::equal(a.dims().begin(), a.dims().end(), b.dims().begin());
  }

  // Whether a walk from `starts` (readers outside the group being grown, whose members are
  // flagged in in_group_ and are at most `root`) comes back into it: a path leaving the group
  // and re-entering, a cycle once fused nodes are single nodes. Groups made earlier are crossed
  // as whole units. Ids grow along edges, so past `root` the walk can only come back by entering
  // a group with a member at most `root`; without such a group it stops there.
  bool comes_back(const std::vector<node_id>& starts, node_id root) {
    const bool bounded = lowest_member_ > root;
    ++generation_;
    stack_.assign(starts.begin(), starts.end());
    while (!stack_.empty()) {
      const node_id x = stack_.back();
      stack_.pop_back();
      if (in_group_[x]) return true;
      if ((bounded && x > root) || seen_[x] == generation_) continue;
      seen_[x] = generation_;
      for (node_id u : users_[x]) stack_.push_back(u);
      const std::int32_t h = group_of_[x];
      if (h != unassigned && group_seen_[static_cast<std::size_t>(h)] != generation_) {
        group_seen_[static_cast<std::size_t>(h)] = generation_;
        for (node_id m : groups_[static_cast<std::size_t>(h)].members) stack_.push_back(m);
      }
    }
    return false;
  }

  // Whether node u may join the group being grown over iteration shape `iter`: an elementwise
  // node of that shape, or a broadcast to it that only members read.
  bool may_join(node_id u, const nax::shape& iter) const {
    if (group_of_[u] != unassigned || in_group_[u] || !same_dims(g_[u].shape, iter)) return false;
    if (g_[u].is<broadcast_op>()) {
      if (output_[u]) return false;
      for (node_id e : users_[u])
        if (!in_group_[e]) return false;
      return true;
    }
    return g_[u].is<elementwise_op>();
  }

  void grow(node_id root) {
    if (!g_[root].is<elementwise_op>()) return;
    const nax::shape& iter = g_[root].shape;
    group_seen_.resize(groups_.size() + 1, 0);
    std::vector<node_id> members{root};
    in_group_[root] = 1;
    // The readers of members outside the group: where a path leaving it starts.
    std::vector<node_id> exits(users_[root].begin(), users_[root].end()), trial;
    std::vector<node_id> work(g_[root].inputs.begin(), g_[root].inputs.end());
    while (!work.empty()) {
      const node_id u = work.back();
      work.pop_back();
      if (!may_join(u, iter)) continue;
      in_group_[u] = 1;
      trial.clear();
      for (node_id e : exits)
        if (e != u) trial.push_back(e);
      for (node_id e : users_[u])
        if (!in_group_[e]) trial.push_back(e);
      if (comes_back(trial, root)) {
        in_group_[u] = 0;
        continue;
      }
      exits.swap(trial);
      members.insert(std::upper_bound(members.begin(), members.end(), u), u);
      if (!g_[u].is<broadcast_op>())  // (a broadcast's operand has another shape: never a member)
        for (node_id in : g_[u].inputs) work.push_back(in);
    }
    for (node_id m : members) in_group_[m] = 0;
    if (members.size() < 2) return;
    fusion_group gr;
    gr.kind = fusion_kind::elementwise;
    gr.op = fused_elementwise_op{};
    gr.members = std::move(members);
    gr.root = root;
    for (node_id m : gr.members) group_of_[m] = static_cast<std::int32_t>(groups_.size());
    lowest_member_ = std::min(lowest_member_, gr.members.front());
    groups_.push_back(std::move(gr));
  }

  const ir& g_;
  user_lists users_;
  std::vector<bool> output_;
  std::vector<std::int32_t> group_of_;
  std::vector<fusion_group> groups_;
  // Scratch of the walks (generation marks: no clearing between walks).
  std::vector<char> in_group_;
  std::vector<std::uint32_t> seen_, group_seen_;
  std::vector<node_id> stack_;
  std::uint32_t generation_ = 0;
  node_id lowest_member_ = std::numeric_limits<node_id>::max();  // over every group made
};

}  // namespace detail

NAX_RUNTIME_INLINE void fuse_elementwise(ir& g) {
  std::vector<fusion_group> groups = detail::elementwise_grouper(g).run();
  replace_groups(g, groups);
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
