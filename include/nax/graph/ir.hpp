#pragma once
// nax::graph::ir: the one representation of a runtime graph that the builder appends to and the
// passes (graph/passes/) read and rewrite. Nodes are kept in a topological order: a node's
// inputs have smaller ids. A pass may break that while it rewrites (a fused node put where its
// result was computed may now be read by a node before it); it then calls sort_and_prune(),
// which restores the order, keeping every node as early as its inputs allow, and drops what the
// outputs no longer need.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/node.hpp>

namespace nax::NAX_ISA::graph {

/// For each node, the nodes that read it, ascending (a node reading another twice is listed
/// once): users[i] is a span. Two arrays for the whole graph (offsets and ids), so computing it
/// costs two allocations whatever the graph's size.
class user_lists {
 public:
  user_lists() = default;
  std::span<const node_id> operator[](node_id i) const noexcept {
    return {ids_.data() + begin_[i], ids_.data() + begin_[i + 1]};
  }
  std::size_t size() const noexcept { return begin_.empty() ? 0 : begin_.size() - 1; }

 private:
  friend class ir;
  std::vector<std::uint32_t> begin_;  // node i's users are ids_[begin_[i], begin_[i + 1])
  std::vector<node_id> ids_;
};

class ir {
 public:
  /// The nodes, inputs before users.
  std::span<const node> nodes() const noexcept { return nodes_; }
  std::size_t size() const noexcept { return nodes_.size(); }
  const node& operator[](node_id i) const noexcept { return nodes_[i]; }
  /// Node i, to rewrite in place (its inputs must still precede it, or the pass must call
  /// sort_and_prune() before it returns).
  node& at(node_id i) noexcept { return nodes_[i]; }

  /// The nodes the graph computes for its caller (a node may be listed more than once).
  std::span<const node_id> outputs() const noexcept { return outputs_; }
  void set_outputs(std::vector<node_id> outputs) { outputs_ = std::move(outputs); }
  /// Whether node i is one of the outputs.
  NAX_RUNTIME_INLINE bool is_output(node_id i) const noexcept;

  /// Appends n (its inputs must be nodes of this graph) and returns its id. Its origin is set
  /// to that id unless `keep_origin`.
  NAX_RUNTIME_INLINE node_id add(node n, bool keep_origin = false);

  /// Drops the nodes from id n on (no node before n reads them).
  void truncate(std::size_t n) {
    if (n >= nodes_.size()) return;
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(n), nodes_.end());
  }

  /// Who reads each node.
  NAX_RUNTIME_INLINE user_lists users() const;

  /// Every read of node `from` (as an input or as an output) reads `to` instead.
  NAX_RUNTIME_INLINE void replace_uses(node_id from, node_id to);

  /// Restores the topological order after a rewrite and drops the nodes no output needs
  /// (parameters stay: they are the graph's inputs, used or not). Among the nodes whose inputs
  /// are placed, the one with the smallest old id goes first, so an order that was already
  /// topological is kept. nax::shape_error if the nodes form a cycle (a pass's mistake).
  /// Returns each old id's new id (or no_node for a dropped node).
  NAX_RUNTIME_INLINE std::vector<node_id> sort_and_prune();

  static constexpr node_id no_node = static_cast<node_id>(-1);

 private:
  std::vector<node> nodes_;
  std::vector<node_id> outputs_;
};

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <functional>
#include <queue>

#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::graph {

NAX_RUNTIME_INLINE bool ir::is_output(node_id i) const noexcept {
  return std::find(outputs_.begin(), outputs_.end(), i) != outputs_.end();
}

NAX_RUNTIME_INLINE node_id ir::add(node n, bool keep_origin) {
  const auto id = static_cast<node_id>(nodes_.size());
  if (!keep_origin) n.origin = id;
  nodes_.push_back(std::move(n));
  return id;
}

NAX_RUNTIME_INLINE user_lists ir::users() const {
  // Counting sort of the (input, reader) edges by input; readers come out ascending because
  // nodes are visited in order, and a repeated input of one reader is skipped.
  const std::size_t n = nodes_.size();
  user_lists u;
  u.begin_.assign(n + 1, 0);
  auto repeated = [&](const node& x, std::size_t k) {
    for (std::size_t j = 0; j < k; ++j)
      if (x.inputs[j] == x.inputs[k]) return true;
    return false;
  };
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < nodes_[i].inputs.size(); ++k)
      if (!repeated(nodes_[i], k)) ++u.begin_[nodes_[i].inputs[k] + 1];
  for (std::size_t i = 0; i < n; ++i) u.begin_[i + 1] += u.begin_[i];
  u.ids_.resize(u.begin_[n]);
  std::vector<std::uint32_t> at(u.begin_.begin(), u.begin_.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < nodes_[i].inputs.size(); ++k)
      if (!repeated(nodes_[i], k)) u.ids_[at[nodes_[i].inputs[k]]++] = static_cast<node_id>(i);
  return u;
}

NAX_RUNTIME_INLINE void ir::replace_uses(node_id from, node_id to) {
  for (node& n : nodes_)
    for (node_id& in : n.inputs)
      if (in == from) in = to;
  for (node_id& o : outputs_)
    if (o == from) o = to;
}

NAX_RUNTIME_INLINE std::vector<node_id> ir::sort_and_prune() {
  const std::size_t n = nodes_.size();
  // Needed: the outputs and what they read, and every parameter.
  std::vector<char> needed(n, 0);
  std::vector<node_id> stack(outputs_.begin(), outputs_.end());
  for (std::size_t i = 0; i < n; ++i)
    if (nodes_[i].kind() == op_kind::parameter) stack.push_back(static_cast<node_id>(i));
  while (!stack.empty()) {
    const node_id i = stack.back();
    stack.pop_back();
    if (needed[i]) continue;
    needed[i] = 1;
    for (node_id in : nodes_[i].inputs) stack.push_back(in);
  }
  // Every needed node after its inputs (a pass that only merged or dropped nodes): the order
  // stands, and the needed nodes move up in place, with no copy of the graph.
  bool ordered = true;
  for (std::size_t i = 0; ordered && i < n; ++i)
    if (needed[i])
      for (node_id in : nodes_[i].inputs) ordered = ordered && in < i;
  if (ordered) {
    std::vector<node_id> new_id(n, no_node);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!needed[i]) continue;
      new_id[i] = static_cast<node_id>(kept);
      for (node_id& in : nodes_[i].inputs) in = new_id[in];
      if (kept != i) nodes_[kept] = std::move(nodes_[i]);
      ++kept;
    }
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(kept), nodes_.end());
    for (node_id& o : outputs_) o = new_id[o];
    return new_id;
  }
  // Kahn's algorithm over the needed nodes, smallest old id first.
  std::vector<std::size_t> waiting(n, 0);
  std::vector<std::vector<node_id>> next(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    for (node_id in : nodes_[i].inputs) {
      ++waiting[i];
      next[in].push_back(static_cast<node_id>(i));
    }
  }
  std::priority_queue<node_id, std::vector<node_id>, std::greater<>> ready;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (needed[i]) {
      ++count;
      if (waiting[i] == 0) ready.push(static_cast<node_id>(i));
    }
  std::vector<node_id> order;
  order.reserve(count);
  while (!ready.empty()) {
    const node_id i = ready.top();
    ready.pop();
    order.push_back(i);
    for (node_id u : next[i])
      if (--waiting[u] == 0) ready.push(u);
  }
  if (order.size() != count)
    nax::detail::throw_shape_error("nax::graph: a pass made a cycle: ", count - order.size(),
                                   " nodes can never run");
  std::vector<node_id> new_id(n, no_node);
  for (std::size_t k = 0; k < order.size(); ++k) new_id[order[k]] = static_cast<node_id>(k);
  std::vector<node> sorted;
  sorted.reserve(order.size());
  for (node_id i : order) {
    node& x = nodes_[i];
    for (node_id& in : x.inputs) in = new_id[in];
    sorted.push_back(std::move(x));
  }
  nodes_ = std::move(sorted);
  for (node_id& o : outputs_) o = new_id[o];
  return new_id;
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
