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
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/axis_alias.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>
#include <nax/graph/value_axis.hpp>
#include <nax/ops/cumsum.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/random.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::NAX_ISA::graph {

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

  /// A scalar constant, broadcast wherever it is used. Of an integer type, v is truncated
  /// toward zero; nax::shape_error if that is not a value of the type (or v is not a number).
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

  /// The cumulative sum of x along `axis` (ONNX CumSum), of x's shape and element type (f32,
  /// f64, i32 or i64); `options` says which positions each element sums (ops/cumsum.hpp).
  NAX_RUNTIME_INLINE value cumsum(value x, axis_ref axis, cumsum_options options = {});

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
  /// (x - max) - log(sum(exp(x - max))) along `axis`: one node, the typed log_softmax's kernel.
  NAX_RUNTIME_INLINE value log_softmax(value x, axis_ref axis);
  NAX_RUNTIME_INLINE value layer_norm(value x, value gamma, value beta, axis_ref axis,
                                      double epsilon);

  /// A node computed by `kernel` from args, with the result shape the caller infers (nax::jit's
  /// fused expressions). Nodes with different kernel objects are never merged.
  NAX_RUNTIME_INLINE value external(std::shared_ptr<const external_kernel> kernel,
                                    std::span<const value> args, nax::shape result);

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
  /// type and rank; their other axes unify, paired by name where an operand's axes are xs[0]'s
  /// names in another order (it is transposed to xs[0]'s order, as the typed layer's concat
  /// pairs them), else by position. The joined axis must be static in each (its extent is the
  /// sum; its names unify): a dynamic one is an error, since the sum of extents would have no
  /// name to bind.
  NAX_RUNTIME_INLINE value concat(std::span<const value> xs, axis_ref axis);

  /// The same, the joined axis named `name`. Its operands' axes may also be dynamic with a bound:
  /// the joined axis is then a new axis bounded by the sum of their extents and bounds, whose
  /// extent the run computes (the sum; builder::value_axes). `name` must be new to the graph.
  NAX_RUNTIME_INLINE value concat(std::span<const value> xs, axis_ref axis, std::string_view name);

  /// x padded along its static `axis` with `low` entries before and `high` after, all `value`
  /// (x's element type; the axis keeps its name). A dynamic axis is an error, as for concat:
  /// the padded extent would have no name to bind.
  NAX_RUNTIME_INLINE value pad(value x, axis_ref axis, std::int64_t low, std::int64_t high,
                               double value);

  // Places along an axis that are run-time values (StableHLO's bounded dynamism, docs/bounded.md).

  /// x's run-time extent along `axis`: a rank-0 `type` (i32 or i64) whose value is the extent
  /// the run binds (a static extent's value is that extent).
  NAX_RUNTIME_INLINE value get_dimension_size(value x, axis_ref axis,
                                              nax::dtype type = nax::dtype::i32);

  /// `size` entries of x along `axis` from the run-time `start` (a rank-0 i32 or i64), the axis
  /// keeping its name with the static extent `size`. As in XLA, the start is clamped to
  /// [0, extent - size], so the slice is always in range; a size above the extent is an error
  /// (here against a static extent or a bound, else when the executable specializes).
  NAX_RUNTIME_INLINE value dynamic_slice(value x, axis_ref axis, value start, std::int64_t size);

  /// x with `update` written along `axis` from the run-time `start` (a rank-0 i32 or i64),
  /// clamped to [0, extent - the update's extent] as XLA does. The update has x's type, rank and
  /// other axes; its extent along the axis must fit in x's.
  NAX_RUNTIME_INLINE value dynamic_update_slice(value x, value update, axis_ref axis, value start);

  /// x's entries along `axis` at the run-time `indices` (i32 or i64, any rank): x's axes with
  /// `axis` replaced, in place, by the indices' (ONNX Gather, numpy.take). The indices' named
  /// axes must not be x's other axes. An index outside [0, extent) (negative ones included)
  /// throws nax::shape_error when the executable runs, naming the index, its position and the
  /// extent.
  NAX_RUNTIME_INLINE value take(value x, axis_ref axis, value indices);

  /// x's elements converted to `type`, as static_cast (nax::cast) does: toward zero to an integer
  /// type, true for nonzero to bool. x itself if it already has that type.
  NAX_RUNTIME_INLINE value convert(value x, nax::dtype type);

  /// x with `updates` added along `axis` at the run-time `indices` (updates has the shape of
  /// take(x, axis, indices)); repeated indices add up. take's VJP.
  NAX_RUNTIME_INLINE value scatter_add(value x, axis_ref axis, value indices, value updates);

  /// x with its axis `axis` (static, or dynamic with a bound) replaced by the dynamic axis
  /// `name` whose extent is the run-time `size` (a rank-0 i32 or i64), bounded by the axis's
  /// extent or bound: StableHLO's set_dimension_size. The result's first min(size, extent)
  /// entries along the axis are x's; entries past x's extent are zeros. The run computes the
  /// size before anything runs (it is part of the binding), so `size` must be made from
  /// parameters, constants and get_dimension_size by add, sub, mul, min and max; a size outside
  /// [0, bound] is a nax::shape_error naming the axis, the size and the bound. `name` must be
  /// new to the graph.
  NAX_RUNTIME_INLINE value set_dimension_size(value x, axis_ref axis, value size,
                                              std::string_view name);

  /// x padded along its static or bounded `axis` with `low` entries before and `high` after,
  /// all `value`, the amounts run-time rank-0 integers of one type (made as set_dimension_size's
  /// size is): XLA's dynamic_pad. The padded axis is the new axis `name`, of at most `bound`
  /// entries. A negative amount, or low + extent + high above the bound, is a nax::shape_error
  /// naming the axis before anything runs.
  NAX_RUNTIME_INLINE value pad(value x, axis_ref axis, value low, value high, double value,
                               std::string_view name, std::size_t bound);

  /// The axes set_dimension_size made, in order, each with how the run computes its extent.
  std::span<const value_axis> value_axes() const noexcept { return value_axes_; }

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
  // What the builder holds, to go back to (a grad that throws leaves the builder as it was).
  struct state {
    std::size_t nodes, aliases, value_axes;
    node_id gradient_begin;
  };
  state saved() const noexcept {
    return {graph_.size(), aliases_.size(), value_axes_.size(), gradient_begin_};
  }
  void restore(const state& s) {
    graph_.truncate(s.nodes);
    aliases_.erase(aliases_.begin() + static_cast<std::ptrdiff_t>(s.aliases), aliases_.end());
    value_axes_.erase(value_axes_.begin() + static_cast<std::ptrdiff_t>(s.value_axes),
                      value_axes_.end());
    gradient_begin_ = s.gradient_begin;
  }
  value reshape_unchecked(value x, nax::shape target) {
    if (graph_[x.id_].shape == target) return x;
    node n;
    n.op = reshape_op{};
    n.inputs.push_back(x.id_);
    n.shape = std::move(target);
    return push(std::move(n));
  }

  // The postfix program computing the rank-0 integer `size` (graph/value_axis.hpp) for op `op`.
  NAX_RUNTIME_INLINE std::vector<size_term> size_program(node_id size, std::string_view op) const;
  // The size term of d's extent: a constant if static, else the extent of the axis it is bound as
  // (a renamed axis: its source).
  size_term extent_term(const dim& d) const {
    size_term t;
    if (d.is_static()) {
      t.value = static_cast<std::int64_t>(d.extent());
      return t;
    }
    t.k = size_term::kind::extent;
    t.axis = d.name();
    for (const axis_alias& a : aliases_)
      if (a.alias == t.axis) t.axis = a.source;
    return t;
  }
  // The nodes of concat's operands, each in xs[0]'s axis order when its axes are xs[0]'s names
  // in another order (a transpose before it).
  NAX_RUNTIME_INLINE std::vector<node_id> concat_operands(std::span<const value> xs);
  // nax::shape_error unless `name` is new to the graph (op's operand: s).
  NAX_RUNTIME_INLINE void check_new_axis_name(std::string_view op, const nax::shape& s,
                                              std::string_view name) const;
  // True if made.name already names the axis `made` describes (a value axis with the same size
  // program and bound): an op repeated per layer over the same extents may give its axis one
  // name. Otherwise check_new_axis_name, false (the caller records `made`).
  NAX_RUNTIME_INLINE bool names_same_value_axis(std::string_view op, const nax::shape& s,
                                                const value_axis& made) const;
  // True if d's name already names static axes of d's extent only (a concat per layer whose
  // joined axis is static gives it one name); false if it names none or another.
  NAX_RUNTIME_INLINE bool names_static_extent(const dim& d) const;

  ir graph_;
  std::uint32_t parameters_ = 0;
  std::vector<axis_alias> aliases_;
  std::vector<value_axis> value_axes_;
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
#include <nax/graph/infer/convert.hpp>
#include <nax/graph/infer/cumsum.hpp>
#include <nax/graph/infer/dot_general.hpp>
#include <nax/graph/infer/dynamic_slice.hpp>
#include <nax/graph/infer/elementwise.hpp>
#include <nax/graph/infer/generate.hpp>
#include <nax/graph/infer/reduce.hpp>
#include <nax/graph/infer/rename.hpp>
#include <nax/graph/infer/reshape.hpp>
#include <nax/graph/infer/rows.hpp>
#include <nax/graph/infer/slice.hpp>
#include <nax/graph/infer/take.hpp>
#include <nax/graph/infer/transpose.hpp>

namespace nax::NAX_ISA::graph {

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
  // An integer constant is v truncated toward zero: it must be a number the type holds (a
  // conversion of any other double to it is undefined).
  const bool ok = type == nax::dtype::i32   ? v > -2147483649.0 && v < 2147483648.0
                  : type == nax::dtype::i64 ? v >= -0x1p63 && v < 0x1p63
                  : type == nax::dtype::u8  ? v > -1.0 && v < 256.0
                                            : true;
  if (!ok)
    nax::detail::throw_shape_error("nax::graph::constant: ", v, " is not a value of type ",
                                   nax::name(type));
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

NAX_RUNTIME_INLINE value builder::cumsum(value x, axis_ref axis, cumsum_options options) {
  return push(detail::infer_cumsum(graph_, operand("cumsum", x), axis, options));
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

NAX_RUNTIME_INLINE value builder::log_softmax(value x, axis_ref axis) {
  return push(detail::infer_softmax(graph_, operand("log_softmax", x), axis, true));
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

NAX_RUNTIME_INLINE value builder::pad(value x, axis_ref axis, std::int64_t low, std::int64_t high,
                                      double v) {
  const nax::shape xs = graph_[operand("pad", x)].shape;
  const std::size_t i = detail::resolve_axis("pad", 0, xs, axis);
  const dim& d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::pad(", xs.to_string(), "): ", why...);
  };
  if (low < 0 || high < 0) fail("the padding ", low < 0 ? low : high, " is negative");
  if (d.is_dynamic())
    fail("padding along dynamic ", detail::axis_subject(d, i),
         " is not supported: the padded extent would have no name to bind");
  if (low == 0 && high == 0) return x;
  const value fill = constant(v, xs.dtype());
  auto filler = [&](std::int64_t n) {
    std::vector<dim> dims(xs.dims().begin(), xs.dims().end());
    dims[i] = d.has_name() ? dim::named(d.name(), static_cast<std::size_t>(n))
                           : dim(static_cast<std::size_t>(n));
    return broadcast(fill, nax::shape(xs.dtype(), std::span<const dim>(dims)));
  };
  std::vector<value> parts;
  if (low > 0) parts.push_back(filler(low));
  parts.push_back(x);
  if (high > 0) parts.push_back(filler(high));
  return concat(parts, i);
}

NAX_RUNTIME_INLINE value builder::get_dimension_size(value x, axis_ref axis, nax::dtype type) {
  return push(detail::infer_dimension_size(graph_, operand("get_dimension_size", x), axis, type));
}

NAX_RUNTIME_INLINE value builder::dynamic_slice(value x, axis_ref axis, value start,
                                                std::int64_t size) {
  const node_id xi = operand("dynamic_slice", x), si = operand("dynamic_slice", start);
  return push(detail::infer_dynamic_slice(graph_, xi, axis, si, size));
}

NAX_RUNTIME_INLINE value builder::dynamic_update_slice(value x, value update, axis_ref axis,
                                                       value start) {
  constexpr std::string_view op = "dynamic_update_slice";
  const node_id xi = operand(op, x), ui = operand(op, update), si = operand(op, start);
  return push(detail::infer_dynamic_update_slice(graph_, xi, ui, axis, si));
}

NAX_RUNTIME_INLINE value builder::take(value x, axis_ref axis, value indices) {
  const node_id xi = operand("take", x), ii = operand("take", indices);
  return push(detail::infer_take(graph_, xi, axis, ii));
}

NAX_RUNTIME_INLINE value builder::convert(value x, nax::dtype type) {
  const node_id xi = operand("convert", x);
  if (graph_[xi].shape.dtype() == type) return x;
  return push(detail::infer_convert(graph_, xi, type));
}

NAX_RUNTIME_INLINE value builder::scatter_add(value x, axis_ref axis, value indices,
                                              value updates) {
  constexpr std::string_view op = "scatter_add";
  const node_id xi = operand(op, x), ii = operand(op, indices), ui = operand(op, updates);
  return push(detail::infer_scatter_add(graph_, xi, axis, ii, ui));
}

NAX_RUNTIME_INLINE std::vector<size_term> builder::size_program(node_id size,
                                                                std::string_view op) const {
  std::vector<size_term> out;
  auto walk = [&](auto& self, node_id id) -> void {
    const node& n = graph_[id];
    auto refuse = [&](std::string_view why) {
      nax::detail::throw_shape_error(
          "nax::graph::", op, ": the size must be made from parameters, constants and ",
          "get_dimension_size by add, sub, mul, min and max (the run computes it before any step ",
          "runs); node ", id, " (", op_label(n.op), ", ", n.shape.to_string(), ") ", why);
    };
    if (n.shape.rank() != 0 ||
        (n.shape.dtype() != nax::dtype::i32 && n.shape.dtype() != nax::dtype::i64))
      refuse("is not a rank-0 i32 or i64");
    size_term t;
    switch (n.kind()) {
      case op_kind::parameter:
        t.k = size_term::kind::parameter;
        t.parameter = n.as<parameter_op>().index;
        break;
      case op_kind::constant:
        t.k = size_term::kind::constant;
        t.value = static_cast<std::int64_t>(n.as<constant_op>().value);
        break;
      case op_kind::dimension_size: {
        const dim& d = graph_[n.inputs[0]].shape[n.as<dimension_size_op>().axis];
        t = extent_term(d);
        break;
      }
      case op_kind::elementwise: {
        using ops::id;
        const id e = n.as<elementwise_op>().op;
        if (e != id::add && e != id::sub && e != id::mul && e != id::min && e != id::max)
          refuse("is not one of them");
        self(self, n.inputs[0]);
        self(self, n.inputs[1]);
        t.k = e == id::add   ? size_term::kind::add
              : e == id::sub ? size_term::kind::sub
              : e == id::mul ? size_term::kind::mul
              : e == id::min ? size_term::kind::min
                             : size_term::kind::max;
        break;
      }
      default: refuse("is not one of them");
    }
    out.push_back(t);
  };
  walk(walk, size);
  return out;
}

NAX_RUNTIME_INLINE void builder::check_new_axis_name(std::string_view op, const nax::shape& s,
                                                     std::string_view name) const {
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::", op, "(", s.to_string(), "): ", why...);
  };
  if (name.empty()) fail("the new axis needs a name, to bind its extent by");
  const axis_name new_name(name);
  for (const node& n : graph_.nodes())
    for (const dim& e : n.shape.dims())
      if (e.has_name() && e.name() == new_name)
        fail("'", name, "' already names an axis of the graph (", n.shape.to_string(),
             "); the new axis needs a name of its own");
  for (const axis_alias& a : aliases_)
    if (a.alias == new_name)
      fail("'", name, "' already names axis '", a.source.view(), "' renamed");
}

NAX_RUNTIME_INLINE bool builder::names_same_value_axis(std::string_view op, const nax::shape& s,
                                                       const value_axis& made) const {
  for (const value_axis& a : value_axes_)
    if (a == made) return true;
  check_new_axis_name(op, s, made.name.view());
  return false;
}

NAX_RUNTIME_INLINE bool builder::names_static_extent(const dim& d) const {
  bool named = false;
  for (const node& n : graph_.nodes())
    for (const dim& e : n.shape.dims())
      if (e.has_name() && e.name() == d.name()) {
        if (!(e.is_static() && e.extent() == d.extent())) return false;
        named = true;
      }
  for (const axis_alias& a : aliases_)
    if (a.alias == d.name()) return false;
  return named;
}

NAX_RUNTIME_INLINE std::vector<node_id> builder::concat_operands(std::span<const value> xs) {
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  std::vector<node_id> ids{operand("concat", xs[0])};
  std::vector<axis_name> names;  // xs[0]'s, if every axis has one and no two the same
  for (const dim& d : graph_[ids[0]].shape.dims()) {
    if (d.name().empty() || std::find(names.begin(), names.end(), d.name()) != names.end()) {
      names.clear();
      break;
    }
    names.push_back(d.name());
  }
  for (std::size_t p = 1; p < xs.size(); ++p) {
    const node_id id = operand("concat", xs[p]);
    std::vector<axis_name> its;
    for (const dim& d : graph_[id].shape.dims()) its.push_back(d.name());
    if (names.empty() || its == names ||
        !std::is_permutation(its.begin(), its.end(), names.begin(), names.end())) {
      ids.push_back(id);
      continue;
    }
    std::vector<axis_ref> order;
    for (const axis_name& n : names) order.push_back(axis_ref(n.view()));
    ids.push_back(transpose(xs[p], order).id());
  }
  return ids;
}

NAX_RUNTIME_INLINE value builder::concat(std::span<const value> xs, axis_ref axis,
                                         std::string_view name) {
  const std::vector<node_id> ids = concat_operands(xs);
  const nax::shape& first = graph_[ids[0]].shape;
  if (name.empty()) check_new_axis_name("concat", first, name);
  node n = *detail::infer_concat(graph_, ids, axis, name);
  const std::size_t k = n.as<concat_op>().axis;
  const dim& joined = n.shape[k];
  if (joined.is_dynamic()) {  // its extent: the sum of the operands'
    value_axis made{joined.name(), joined.bound(), {}, "concat"};
    for (std::size_t p = 0; p < ids.size(); ++p) {
      made.size.push_back(extent_term(graph_[ids[p]].shape[k]));
      if (p > 0) made.size.push_back({size_term::kind::add, 0, 0, {}});
    }
    if (!names_same_value_axis("concat", first, made)) value_axes_.push_back(std::move(made));
  } else if (!names_static_extent(joined)) {
    check_new_axis_name("concat", first, name);
  }
  return push(std::move(n));
}

NAX_RUNTIME_INLINE value builder::set_dimension_size(value x, axis_ref axis, value size,
                                                     std::string_view name) {
  constexpr std::string_view op = "set_dimension_size";
  const node_id xi = operand(op, x), si = operand(op, size);
  const nax::shape xs = graph_[xi].shape;
  const std::size_t i = detail::resolve_axis(op, 0, xs, axis);
  const dim& d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::set_dimension_size(", xs.to_string(),
                                   "): ", why...);
  };
  if (d.is_dynamic() && !d.has_bound())
    fail(detail::axis_subject(d, i), " has no bound: the size needs one (declare it '",
         d.name().view(), "<=N')");
  if (name.empty()) check_new_axis_name(op, xs, name);
  const axis_name new_name(name);
  const std::size_t bound = d.is_static() ? d.extent() : d.bound();
  if (bound == 0) fail(detail::axis_subject(d, i), " is empty: no size above 0 fits");
  value_axis made{new_name, bound, size_program(si, op), std::string(op)};
  const bool known = names_same_value_axis(op, xs, made);
  node n;
  n.op = set_dimension_size_op{static_cast<std::uint32_t>(i)};
  n.inputs.push_back(xi);
  n.inputs.push_back(si);
  std::vector<dim> dims(xs.dims().begin(), xs.dims().end());
  dims[i] = dim::bounded(new_name, bound);
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(dims));
  if (!known) value_axes_.push_back(std::move(made));
  return push(std::move(n));
}

NAX_RUNTIME_INLINE value builder::pad(value x, axis_ref axis, value low, value high, double v,
                                      std::string_view name, std::size_t bound) {
  constexpr std::string_view op = "pad";
  const node_id xi = operand(op, x), li = operand(op, low), hi = operand(op, high);
  const nax::shape xs = graph_[xi].shape;
  const std::size_t i = detail::resolve_axis(op, 0, xs, axis);
  const dim d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::pad(", xs.to_string(), "): ", why...);
  };
  if (d.is_dynamic() && !d.has_bound())
    fail(detail::axis_subject(d, i), " has no bound: the padded axis needs one (declare it '",
         d.name().view(), "<=N')");
  const std::size_t most = d.is_static() ? d.extent() : d.bound();
  if (bound == 0 || bound < most)
    fail("the bound ", bound, " of the padded axis is below the ",
         d.is_static() ? "extent " : "bound ", most, " of ", detail::axis_subject(d, i));
  const nax::dtype type = graph_[li].shape.dtype();
  if (graph_[hi].shape.dtype() != type)
    fail("the amounts have two types: low is ", graph_[li].shape.to_string(), ", high is ",
         graph_[hi].shape.to_string());
  check_new_axis_name(op, xs, name);
  // The size: low + the extent + high, each amount checked not negative.
  std::vector<size_term> program = size_program(li, op);
  program.push_back({size_term::kind::nonnegative, 0, 0, {}});
  program.push_back(extent_term(d));
  program.push_back({size_term::kind::add, 0, 0, {}});
  for (const size_term& t : size_program(hi, op)) program.push_back(t);
  program.push_back({size_term::kind::nonnegative, 0, 0, {}});
  program.push_back({size_term::kind::add, 0, 0, {}});
  // `value` over `bound` entries (an unnamed static axis), x written at low, cut at the size.
  std::vector<dim> dims(xs.dims().begin(), xs.dims().end());
  dims[i] = dim(bound);
  const value canvas =
      broadcast(constant(v, xs.dtype()), nax::shape(xs.dtype(), std::span<const dim>(dims)));
  const value placed = dynamic_update_slice(canvas, x, i, low);
  const value first[2] = {low, get_dimension_size(x, i, type)};
  const value both[2] = {elementwise(ops::id::add, first), high};
  const value size = elementwise(ops::id::add, both);
  node n;
  n.op = set_dimension_size_op{static_cast<std::uint32_t>(i)};
  n.inputs.push_back(placed.id());
  n.inputs.push_back(size.id());
  dims[i] = dim::bounded(axis_name(name), bound);
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(dims));
  value_axes_.push_back({axis_name(name), bound, std::move(program), std::string(op)});
  return push(std::move(n));
}

NAX_RUNTIME_INLINE value builder::concat(std::span<const value> xs, axis_ref axis) {
  const std::vector<node_id> ids = concat_operands(xs);
  std::optional<node> n = detail::infer_concat(graph_, ids, axis);
  return n ? push(std::move(*n)) : xs[0];
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
