#pragma once
// nax::graph::ir: the one representation of a runtime graph that the builder appends to and the
// passes (graph/passes/) read and rewrite. Nodes are kept in a topological order: a node's
// inputs have smaller ids. A pass may break that while it rewrites (a fused node put where its
// result was computed may now be read by a node before it); it then calls sort_and_prune(),
// which restores the order, keeping every node as early as its inputs allow, and drops what the
// outputs no longer need.

#include <cstddef>
#include <span>
#include <vector>

#include <nax/core/linkage.hpp>
#include <nax/graph/node.hpp>

namespace nax::graph {

/// For each node, the nodes that read it, ascending (a node reading another twice is listed
/// once).
using user_lists = std::vector<std::vector<node_id>>;

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

namespace nax::graph {

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
  user_lists u(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    for (node_id in : nodes_[i].inputs)
      if (u[in].empty() || u[in].back() != i) u[in].push_back(static_cast<node_id>(i));
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
