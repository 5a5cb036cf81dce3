#pragma once
// nax::graph::builder: how a runtime graph is built, one op at a time. Each op's shape is
// inferred as it is added (graph/infer/: over symbolic shapes with named axes, names unify,
// errors name the op, its operands and the axis); the node is appended to the builder's graph
// (graph/ir.hpp), which graph::compile hands to the passes. The builder itself never rewrites:
// equal nodes built twice are two nodes until the CSE pass merges them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nax/core/dtype.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/axis_alias.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/random.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::graph {

class builder;
namespace detail {
struct grad_access;
}

/// A node of a builder, as the ops take and give it (a handle: the builder owns the node).
class value {
 public:
  value() = default;
  builder& owner() const { return *builder_; }
  node_id id() const { return id_; }
  const nax::shape& shape() const;

 private:
  friend class builder;
  value(builder* b, node_id id) : builder_(b), id_(id) {}
  builder* builder_ = nullptr;
  node_id id_ = 0;
};

class builder {
 public:
  NAX_RUNTIME_INLINE builder();
  builder(const builder&) = delete;  // values point at their builder
  builder& operator=(const builder&) = delete;
  NAX_RUNTIME_INLINE ~builder();

  /// An input. Names are unique within a graph; parameters are the compiled graph's inputs, in
  /// the order they are made.
  NAX_RUNTIME_INLINE value parameter(std::string name, nax::shape s);

  /// A scalar constant, broadcast wherever it is used.
  NAX_RUNTIME_INLINE value constant(double v, nax::dtype type = nax::dtype::f32);

  /// Elementwise op `op` over args (arity and element types checked), broadcast by the one
  /// broadcast rule (core/broadcast.hpp).
  NAX_RUNTIME_INLINE value elementwise(ops::id op, std::span<const value> args);

  /// A reduction over the given axes of x (the others are kept, in order).
  NAX_RUNTIME_INLINE value reduce(ops::reduce_kind kind, value x, std::span<const axis_ref> axes);

  /// The position (i64) of the first largest (argmax) or smallest (argmin) element of x along
  /// `axis`, over x's other axes in order. A NaN wins over every number (the first NaN's
  /// position). x has numeric elements; an empty axis is an error (here if static, else when the
  /// executable specializes).
  NAX_RUNTIME_INLINE value arg_reduce(arg_kind kind, value x, axis_ref axis);

  // Tensors made from their shape alone (no inputs). Every dynamic axis of s is named, and bound
  // when the graph runs: an input's axis, or one renamed from it (builder::rename).

  /// The positions along `axis` of shape s: element (..., j, ...) is j (f32, f64, i32 or i64).
  NAX_RUNTIME_INLINE value iota(nax::shape s, axis_ref axis);

  /// A random tensor of shape s (f32 or f64), the stream `key` of distribution d with parameters
  /// a and b ((lo, hi) or (mean, stddev)): element i in row-major order is
  /// ops::random_sample(random_key(key), d, a, b, i), the typed nax::uniform's bits.
  NAX_RUNTIME_INLINE value random(nax::shape s, ops::distribution d, nax::rng key, double a,
                                  double b);

  /// The contraction of a and b over `contract` pairs, with `batch` pairs matched (not summed):
  /// the result has the batch axes (a's order of the pairs), then a's free axes, then b's.
  NAX_RUNTIME_INLINE value dot_general(value a, value b, std::span<const axis_pair> contract,
                                       std::span<const axis_pair> batch = {});

  /// x with its axes in the order `perm` (output axis i is x's axis perm[i]).
  NAX_RUNTIME_INLINE value transpose(value x, std::span<const axis_ref> perm);

  NAX_RUNTIME_INLINE value softmax(value x, axis_ref axis);
  NAX_RUNTIME_INLINE value layer_norm(value x, value gamma, value beta, axis_ref axis,
                                      double epsilon);

  /// A node computed by `kernel` from args, with the result shape the caller infers (nax::jit's
  /// fused expressions). Nodes with different kernel objects are never merged.
  NAX_RUNTIME_INLINE value external(std::shared_ptr<const external_kernel> kernel,
                                    std::span<const value> args, nax::shape result);

  /// Offers `kernel`, which computes the value of `root` from `operands` alone as a result of
  /// shape `result` (root's, its axes in the order the kernel writes), for the case where fusion
  /// makes root's elementwise ops a group of their own (graph/kernel_offer.hpp; nax::jit's
  /// typed loops). The nodes made for root are those from `first` to root.
  NAX_RUNTIME_INLINE void offer_kernel(value root, std::shared_ptr<const external_kernel> kernel,
                                       std::span<const value> operands, nax::shape result,
                                       node_id first);

  // Shape ops. Every dynamic extent of a result must be the extent of a named axis, so that the
  // runtime can resolve it from an axis binding: these ops never make a dynamic axis that is
  // unnamed or derived (`seq - 1`, `past + seq`). An op that changes nothing returns x itself.

  /// x's elements, in row-major order, in the shape `target` (x's element type). The target's
  /// dynamic axes are exactly x's: named, each as often in both (an unbounded one takes x's
  /// bound, a bounded one must have it); the static extents of both have one product.
  NAX_RUNTIME_INLINE value reshape(value x, nax::shape target);

  /// x repeated to the shape `target` (x's element type). Each axis of x goes to the target axis
  /// of its name when every axis of both is named, else to its position counted from the right
  /// (numpy's rule); there it must have the target's extent (the same static extent, or the same
  /// named dynamic axis) or be a static 1.
  NAX_RUNTIME_INLINE value broadcast(value x, nax::shape target);

  /// The entries start, start + step, ... below stop of x along `axis`. On a static axis,
  /// 0 <= start <= stop <= extent (`stop = slice_end`: the extent). On a dynamic axis, `stop`
  /// must be given (the result's extent is then static; the runtime checks stop against the
  /// bound extent, and here against the axis's bound), unless the slice is all of it
  /// (start 0, slice_end, step 1). The axis keeps its name.
  NAX_RUNTIME_INLINE value slice(value x, axis_ref axis, std::int64_t start, std::int64_t stop,
                                 std::int64_t step = 1);

  /// xs joined along `axis` (by position, or by name in xs[0]), in order. They have one element
  /// type and rank; their other axes unify. The joined axis must be static in each (its extent
  /// is the sum; its names unify): a dynamic one is an error, since the sum of extents would
  /// have no name to bind.
  NAX_RUNTIME_INLINE value concat(std::span<const value> xs, axis_ref axis);

  /// x with its axis `from` named `to` (no data moves). A dynamic axis renamed is an alias of
  /// its source: bound to the same value, never a separate axis of the binding (queries over
  /// `seq`, keys over `kseq`: the executable is specialized per `seq` alone). nax::shape_error if
  /// x has no axis `from`, already has one named `to`, or `to` already names another axis's
  /// alias.
  NAX_RUNTIME_INLINE value rename(value x, axis_ref from, std::string_view to);

  /// x with its static axis `whole` split, in place, into the named axes `outer` then `inner`
  /// (element (o, i) is element o × extent(inner) + i of whole; no data moves). One part may be
  /// dynamic: its extent follows from the other's. nax::shape_error if the extents do not
  /// divide, or whole is dynamic (its parts' extents could not be bound by name).
  NAX_RUNTIME_INLINE value split(value x, axis_ref whole, dim outer, dim inner);

  /// x with its static axes a and b merged into one axis named `to`, where a was (element
  /// (i, j) is element i × extent(b) + j of `to`). A transpose first if b does not directly
  /// follow a. nax::shape_error if a or b is dynamic.
  NAX_RUNTIME_INLINE value merge(value x, axis_ref a, axis_ref b, std::string_view to);

  /// The first node graph::grad made (the backward graph's nodes follow it), or ir::no_node if
  /// grad was not called: the memory plan's figure of the activations the backward keeps.
  node_id gradient_begin() const noexcept { return gradient_begin_; }

  /// The dynamic axes made by rename, each with the input axis it is bound as, e.g. {kseq, seq}.
  std::span<const axis_alias> axis_aliases() const noexcept { return aliases_; }

  /// The value of node `id` of this builder (std::out_of_range if there is none).
  value value_of(node_id id) {
    if (id >= graph_.size())
      throw std::out_of_range("nax::graph::builder::value_of: no node " + std::to_string(id));
    return value(this, id);
  }

  /// The graph built so far.
  const ir& graph() const noexcept { return graph_; }
  std::size_t size() const noexcept { return graph_.size(); }
  std::span<const node> nodes() const noexcept { return graph_.nodes(); }
  const node& at(node_id id) const { return graph_[id]; }

 private:
  node_id operand(std::string_view op, const value& v) const;
  NAX_RUNTIME_INLINE value push(node n);

  // Autodiff (graph/grad.hpp) reshapes a cotangent back to the exact shape of the value it is
  // for, names and aliases included (the backward of a rename, split or merge), which reshape's
  // checks would refuse for a renamed dynamic axis.
  friend struct detail::grad_access;
  void mark_gradient_begin(node_id first) {
    if (gradient_begin_ == ir::no_node || first < gradient_begin_) gradient_begin_ = first;
  }
  value reshape_unchecked(value x, nax::shape target) {
    if (graph_[x.id_].shape == target) return x;
    node n;
    n.op = reshape_op{};
    n.inputs.push_back(x.id_);
    n.shape = std::move(target);
    return push(std::move(n));
  }

  ir graph_;
  std::uint32_t parameters_ = 0;
  std::vector<axis_alias> aliases_;
  node_id gradient_begin_ = ir::no_node;
};

inline const nax::shape& value::shape() const { return builder_->at(id_).shape; }

inline node_id builder::operand(std::string_view op, const value& v) const {
  if (v.builder_ != this)
    nax::detail::throw_shape_error("nax::graph::", op, ": an operand belongs to another builder");
  return v.id_;
}

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <optional>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/graph/infer/arg_reduce.hpp>
#include <nax/graph/infer/axis_split.hpp>
#include <nax/graph/infer/broadcast.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/graph/infer/concat.hpp>
#include <nax/graph/infer/dot_general.hpp>
#include <nax/graph/infer/elementwise.hpp>
#include <nax/graph/infer/generate.hpp>
#include <nax/graph/infer/reduce.hpp>
#include <nax/graph/infer/rename.hpp>
#include <nax/graph/infer/reshape.hpp>
#include <nax/graph/infer/rows.hpp>
#include <nax/graph/infer/slice.hpp>
#include <nax/graph/infer/transpose.hpp>

namespace nax::graph {

NAX_RUNTIME_INLINE builder::builder() = default;
NAX_RUNTIME_INLINE builder::~builder() = default;

NAX_RUNTIME_INLINE value builder::push(node n) { return value(this, graph_.add(std::move(n))); }

NAX_RUNTIME_INLINE value builder::parameter(std::string name, nax::shape s) {
  for (const node& n : graph_.nodes())
    if (n.kind() == op_kind::parameter && n.as<parameter_op>().name == name)
      nax::detail::throw_shape_error("nax::graph::parameter: '", name, "' is already a parameter (",
                                     n.shape.to_string(), ")");
  node n;
  n.op = parameter_op{std::move(name), parameters_};
  n.shape = std::move(s);
  detail::check_unique_names(n, "parameter");
  ++parameters_;
  return push(std::move(n));
}

NAX_RUNTIME_INLINE value builder::constant(double v, nax::dtype type) {
  node n;
  n.op = constant_op{v};
  n.shape = nax::shape(type, {});
  return push(std::move(n));
}

NAX_RUNTIME_INLINE value builder::elementwise(ops::id op, std::span<const value> args) {
  nax::detail::small_vector<node_id, 3> ids;
  for (const value& v : args) ids.push_back(operand(ops::name(op), v));
  return push(detail::infer_elementwise(graph_, op, std::span(ids.data(), ids.size())));
}

NAX_RUNTIME_INLINE value builder::reduce(ops::reduce_kind kind, value x,
                                         std::span<const axis_ref> axes) {
  const node_id xi = operand(nax::detail::message("reduce_", ops::name(kind)), x);
  return push(detail::infer_reduce(graph_, kind, xi, axes));
}

NAX_RUNTIME_INLINE value builder::arg_reduce(arg_kind kind, value x, axis_ref axis) {
  const node_id xi = operand(kind == arg_kind::argmax ? "argmax" : "argmin", x);
  return push(detail::infer_arg_reduce(graph_, kind, xi, axis));
}

NAX_RUNTIME_INLINE value builder::iota(nax::shape s, axis_ref axis) {
  return push(detail::infer_iota(s, axis));
}

NAX_RUNTIME_INLINE value builder::random(nax::shape s, ops::distribution d, nax::rng key, double a,
                                         double b) {
  return push(detail::infer_random(s, d, key, a, b));
}

NAX_RUNTIME_INLINE value builder::dot_general(value a, value b, std::span<const axis_pair> contract,
                                              std::span<const axis_pair> batch) {
  const node_id ai = operand("dot_general", a), bi = operand("dot_general", b);
  return push(detail::infer_dot_general(graph_, ai, bi, contract, batch));
}

NAX_RUNTIME_INLINE value builder::transpose(value x, std::span<const axis_ref> perm) {
  return push(detail::infer_transpose(graph_, operand("transpose", x), perm));
}

NAX_RUNTIME_INLINE value builder::softmax(value x, axis_ref axis) {
  return push(detail::infer_softmax(graph_, operand("softmax", x), axis));
}

NAX_RUNTIME_INLINE value builder::layer_norm(value x, value gamma, value beta, axis_ref axis,
                                             double epsilon) {
  constexpr std::string_view op = "layer_norm";
  const node_id xi = operand(op, x), gi = operand(op, gamma), bi = operand(op, beta);
  return push(detail::infer_layer_norm(graph_, xi, gi, bi, axis, epsilon));
}

NAX_RUNTIME_INLINE value builder::external(std::shared_ptr<const external_kernel> kernel,
                                           std::span<const value> args, nax::shape result) {
  if (!kernel) nax::detail::throw_shape_error("nax::graph::external: no kernel");
  node n;
  for (const value& v : args) n.inputs.push_back(operand("external", v));
  n.op = external_op{std::move(kernel)};
  n.shape = std::move(result);
  return push(std::move(n));
}

NAX_RUNTIME_INLINE void builder::offer_kernel(value root,
                                              std::shared_ptr<const external_kernel> kernel,
                                              std::span<const value> operands, nax::shape result,
                                              node_id first) {
  if (!kernel) nax::detail::throw_shape_error("nax::graph::offer_kernel: no kernel");
  kernel_offer o;
  o.root = operand("offer_kernel", root);
  if (first > o.root)
    nax::detail::throw_shape_error("nax::graph::offer_kernel: the first node is after the root");
  o.interior_begin = first;
  o.kernel = std::move(kernel);
  for (const value& v : operands) o.operands.push_back(operand("offer_kernel", v));
  o.result = std::move(result);
  graph_.offer(std::move(o));
}

NAX_RUNTIME_INLINE value builder::reshape(value x, nax::shape target) {
  std::optional<node> n = detail::infer_reshape(graph_, operand("reshape", x), target);
  return n ? push(std::move(*n)) : x;
}

NAX_RUNTIME_INLINE value builder::rename(value x, axis_ref from, std::string_view to) {
  const node_id id = operand("rename", x);
  std::optional<node> n = detail::infer_rename(graph_, id, from, to);
  if (!n) return x;
  // The renamed axis is the one dim whose name changed.
  const nax::shape& before = graph_[id].shape;
  std::size_t i = 0;
  while (before[i].name() == n->shape[i].name()) ++i;
  if (before[i].is_dynamic()) {
    // Bound as the input axis the source stands for (a source may itself be an alias).
    axis_name root = before[i].name();
    for (const axis_alias& a : aliases_)
      if (a.alias == root) root = a.source;
    const axis_name alias(to);
    const auto known = std::find_if(aliases_.begin(), aliases_.end(),
                                    [&](const axis_alias& a) { return a.alias == alias; });
    if (known != aliases_.end() && known->source != root)
      nax::detail::throw_shape_error("nax::graph::rename: '", to, "' already names axis '",
                                     known->source.view(), "' renamed; it cannot also be '",
                                     root.view(), "'");
    if (known == aliases_.end() && alias != root) aliases_.push_back({alias, root});
  }
  return push(std::move(*n));
}

NAX_RUNTIME_INLINE value builder::split(value x, axis_ref whole, dim outer, dim inner) {
  return push(detail::infer_split(graph_, operand("split", x), whole, outer, inner));
}

NAX_RUNTIME_INLINE value builder::merge(value x, axis_ref a, axis_ref b, std::string_view to) {
  const nax::shape& xs = graph_[operand("merge", x)].shape;
  const std::size_t i = detail::resolve_axis("merge", 0, xs, a);
  const std::size_t j = detail::resolve_axis("merge", 0, xs, b);
  if (i != j && j != i + 1) {  // b moves to just after a; the other axes keep their order
    std::vector<axis_ref> perm;
    for (std::size_t k = 0; k < xs.rank(); ++k) {
      if (k == j) continue;
      perm.push_back(k);
      if (k == i) perm.push_back(j);
    }
    x = transpose(x, perm);
    const std::size_t a_at = i < j ? i : i - 1;
    return push(detail::infer_merge(graph_, x.id(), a_at, a_at + 1, to));
  }
  return push(detail::infer_merge(graph_, x.id(), i, j, to));
}

NAX_RUNTIME_INLINE value builder::broadcast(value x, nax::shape target) {
  std::optional<node> n = detail::infer_broadcast(graph_, operand("broadcast", x), target);
  return n ? push(std::move(*n)) : x;
}

NAX_RUNTIME_INLINE value builder::slice(value x, axis_ref axis, std::int64_t start,
                                        std::int64_t stop, std::int64_t step) {
  std::optional<node> n = detail::infer_slice(graph_, operand("slice", x), axis, start, stop, step);
  return n ? push(std::move(*n)) : x;
}

NAX_RUNTIME_INLINE value builder::concat(std::span<const value> xs, axis_ref axis) {
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  std::vector<node_id> ids;
  for (const value& v : xs) ids.push_back(operand("concat", v));
  std::optional<node> n = detail::infer_concat(graph_, ids, axis);
  return n ? push(std::move(*n)) : xs[0];
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
