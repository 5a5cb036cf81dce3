#pragma once
// nax::graph::builder: the runtime graph (level 1 of the two-level JIT, seed 000) as it is
// built, one node per op. Shape inference runs as each node is added, over symbolic shapes with
// named axes (names unify; errors name the op, its operands and the axis), and nodes with the
// same op, inputs, attributes and shape are one node (common subexpressions are built once).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/unify.hpp>
#include <nax/graph/op.hpp>
#include <nax/graph/external_kernel.hpp>

namespace nax::graph {

using node_id = std::uint32_t;

/// One op of the graph with its inferred symbolic shape.
struct node {
  op_kind kind = op_kind::constant;
  std::uint8_t code = 0;  // elementwise op index or reduce_kind
  nax::detail::small_vector<node_id, 3> inputs;
  nax::detail::small_vector<std::int32_t, 6> ints;  // axis attributes (see op_kind)
  double scalar = 0;                                // a constant's value, layer_norm's epsilon
  std::string name;                                 // a parameter's
  nax::shape shape;
  std::shared_ptr<const graph::external_kernel> kernel;  // op_kind::external's
};

/// An axis of an operand, by position or by name.
struct axis_ref {
  static constexpr std::size_t by_name = static_cast<std::size_t>(-1);
  std::size_t index = by_name;
  std::string_view name;
  axis_ref(std::size_t i) : index(i) {}  // NOLINT: implicit by design
  axis_ref(int i) : index(static_cast<std::size_t>(i)) {}
  axis_ref(std::string_view n) : name(n) {}  // NOLINT
  axis_ref(const char* n) : name(n) {}       // NOLINT
};

/// A pair of axes, one of each operand of dot_general: `{1, 0}` or `{"hidden", "hidden"}`.
struct axis_pair {
  axis_ref lhs, rhs;
};

/// slice's `stop` for "to the end of the axis".
inline constexpr std::int64_t slice_end = std::numeric_limits<std::int64_t>::max();

class builder;

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
  builder() : cse_(64, node_hash{this}, node_equal{this}) {}
  builder(const builder&) = delete;  // values point at their builder
  builder& operator=(const builder&) = delete;

  /// An input. Names are unique within a graph.
  value parameter(std::string name, nax::shape s) {
    for (const node& n : nodes_)
      if (n.kind == op_kind::parameter && n.name == name)
        nax::detail::throw_shape_error("nax::graph::parameter: '", name,
                                       "' is already a parameter (", n.shape.to_string(), ")");
    node n;
    n.kind = op_kind::parameter;
    n.name = std::move(name);
    n.shape = std::move(s);
    check_unique_names(n);
    return push(std::move(n));
  }

  /// A scalar constant, broadcast wherever it is used.
  value constant(double v, nax::dtype type = nax::dtype::f32) {
    node n;
    n.kind = op_kind::constant;
    n.scalar = v;
    n.shape = nax::shape(type, {});
    return add(std::move(n));
  }

  /// Elementwise op `index` of elementwise_ops over args (arity checked), broadcast by name.
  value elementwise(std::size_t index, std::span<const value> args);

  /// A reduction over the given axes of x (the others are kept, in order).
  value reduce(reduce_kind kind, value x, std::span<const axis_ref> axes);

  /// The contraction of a and b over `contract` pairs, with `batch` pairs matched (not summed):
  /// the result has the batch axes (a's order of the pairs), then a's free axes, then b's.
  value dot_general(value a, value b, std::span<const axis_pair> contract,
                    std::span<const axis_pair> batch = {});

  /// x with its axes in the order `perm` (output axis i is x's axis perm[i]).
  value transpose(value x, std::span<const axis_ref> perm);

  value softmax(value x, axis_ref axis);
  value layer_norm(value x, value gamma, value beta, axis_ref axis, double epsilon);

  /// A node computed by `kernel` from args, with the result shape the caller infers (nax::jit's
  /// fused expressions). Nodes with different kernel objects never merge.
  value external(std::shared_ptr<const graph::external_kernel> kernel,
                 std::span<const value> args, nax::shape result);

  // Shape ops. Every dynamic extent of a result must be the extent of a named axis, so that the
  // runtime can resolve it from an axis binding: these ops never make a dynamic axis that is
  // unnamed or derived (`seq - 1`, `past + seq`). An op that changes nothing returns x itself.

  /// x's elements, in row-major order, in the shape `target` (x's element type). The target's
  /// dynamic axes are exactly x's: named, each as often in both (an unbounded one takes x's
  /// bound, a bounded one must have it); the static extents of both have one product.
  value reshape(value x, nax::shape target);

  /// x repeated to the shape `target` (x's element type). Each axis of x goes to the target axis
  /// of its name when every axis of both is named, else to its position counted from the right
  /// (numpy's rule); there it must have the target's extent (the same static extent, or the same
  /// named dynamic axis) or be a static 1.
  value broadcast(value x, nax::shape target);

  /// The entries start, start + step, ... below stop of x along `axis`. On a static axis,
  /// 0 <= start <= stop <= extent (`stop = slice_end`: the extent). On a dynamic axis, `stop`
  /// must be given (the result's extent is then static; the runtime checks stop against the
  /// bound extent, and here against the axis's bound), unless the slice is all of it
  /// (start 0, slice_end, step 1). The axis keeps its name.
  value slice(value x, axis_ref axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1);

  /// xs joined along `axis` (by position, or by name in xs[0]), in order. They have one element
  /// type and rank; their other axes unify. The joined axis must be static in each (its extent
  /// is the sum; its names unify): a dynamic one is an error, since the sum of extents would
  /// have no name to bind.
  value concat(std::span<const value> xs, axis_ref axis);

  std::size_t size() const { return nodes_.size(); }
  std::span<const node> nodes() const { return nodes_; }
  const node& at(node_id id) const { return nodes_.at(id); }

 private:
  struct node_hash {
    const builder* b;
    std::size_t operator()(node_id id) const noexcept;
  };
  struct node_equal {
    const builder* b;
    bool operator()(node_id x, node_id y) const noexcept;
  };

  value push(node n) {
    nodes_.push_back(std::move(n));
    return value(this, static_cast<node_id>(nodes_.size() - 1));
  }
  // Adds n, or returns the node equal to it.
  value add(node n) {
    check_unique_names(n);
    nodes_.push_back(std::move(n));
    const node_id id = static_cast<node_id>(nodes_.size() - 1);
    const auto [it, inserted] = cse_.insert(id);
    if (!inserted) {
      nodes_.pop_back();
      return value(this, *it);
    }
    return value(this, id);
  }
  // Axes are told apart by name (broadcasting, reductions, bindings): a name appears once.
  static void check_unique_names(const node& n) {
    const nax::shape& s = n.shape;
    for (std::size_t i = 0; i < s.rank(); ++i)
      for (std::size_t j = i + 1; j < s.rank(); ++j)
        if (s[i].has_name() && s[i].name() == s[j].name()) {
          if (n.kind == op_kind::parameter)
            nax::detail::throw_shape_error("nax::graph::parameter: '", n.name, "' (", s.to_string(),
                                           ") has axis '", s[i].name().view(), "' twice");
          nax::detail::throw_shape_error(
              "nax::graph::",
              n.kind == op_kind::elementwise ? elementwise_name(n.code) : name(n.kind),
              ": the result would have axis '", s[i].name().view(), "' twice (dimensions ", i,
              " and ", j, ")");
        }
  }
  const node& operand(std::string_view op, const value& v) const {
    if (v.builder_ != this)
      nax::detail::throw_shape_error("nax::graph::", op, ": an operand belongs to another builder");
    return nodes_[v.id_];
  }
  std::size_t resolve_axis(std::string_view op, std::size_t operand_index, const nax::shape& s,
                           const axis_ref& a) const;

  std::vector<node> nodes_;
  std::unordered_set<node_id, node_hash, node_equal> cse_;
};

inline const nax::shape& value::shape() const { return builder_->at(id_).shape; }

// --- implementation -----------------------------------------------------------------------------

inline std::size_t builder::node_hash::operator()(node_id id) const noexcept {
  const node& n = b->nodes_[id];
  std::size_t h = static_cast<std::size_t>(n.kind) * 31 + n.code;
  auto mix = [&](std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (node_id i : n.inputs) mix(i);
  for (std::int32_t x : n.ints) mix(static_cast<std::size_t>(x));
  std::uint64_t bits;
  std::memcpy(&bits, &n.scalar, sizeof bits);
  mix(static_cast<std::size_t>(bits));
  mix(static_cast<std::size_t>(n.shape.dtype()));
  for (const dim& d : n.shape.dims()) mix(d.extent() ^ (d.name().hash() << 1) ^ (d.bound() << 3));
  return h;
}

inline bool builder::node_equal::operator()(node_id x, node_id y) const noexcept {
  const node& a = b->nodes_[x];
  const node& c = b->nodes_[y];
  return a.kind == c.kind && a.code == c.code && a.kind != op_kind::parameter &&
         std::equal(a.inputs.begin(), a.inputs.end(), c.inputs.begin(), c.inputs.end()) &&
         std::equal(a.ints.begin(), a.ints.end(), c.ints.begin(), c.ints.end()) &&
         std::memcmp(&a.scalar, &c.scalar, sizeof a.scalar) == 0 && a.shape == c.shape &&
         a.kernel == c.kernel;
}

inline std::size_t builder::resolve_axis(std::string_view op, std::size_t operand_index,
                                         const nax::shape& s, const axis_ref& a) const {
  if (a.index == axis_ref::by_name) {
    if (auto i = s.index_of(a.name)) return *i;
    nax::detail::throw_shape_error("nax::graph::", op, ": operand ", operand_index, " (",
                                   s.to_string(), ") has no axis '", a.name, "'");
  }
  if (a.index >= s.rank())
    nax::detail::throw_shape_error("nax::graph::", op, ": axis ", a.index,
                                   " is out of range for operand ", operand_index, " (",
                                   s.to_string(), ", rank ", s.rank(), ")");
  return a.index;
}

namespace detail {

inline bool all_named(const nax::shape& s) {
  for (const dim& d : s.dims())
    if (!d.has_name()) return false;
  return true;
}

// The shape of an elementwise result over operands a and b: rank 0 broadcasts; when every axis
// of both is named, by name (a's axes, then b's others, in b's order); else position by position.
inline nax::shape broadcast_shapes(const nax::shape& a, const nax::shape& b, nax::dtype type) {
  if (b.rank() == 0) return nax::shape(type, a.dims());
  if (a.rank() == 0) return nax::shape(type, b.dims());
  nax::detail::small_vector<dim, 6> out;
  if (all_named(a) && all_named(b)) {
    for (const dim& d : a.dims()) {
      const auto j = b.index_of(d.name().view());
      out.push_back(j ? unify_dims(d, b[*j]) : d);
    }
    for (const dim& d : b.dims())
      if (!a.index_of(d.name().view())) out.push_back(d);
  } else {
    if (a.rank() != b.rank())
      nax::detail::throw_shape_error("rank mismatch: ", a.rank(), " vs ", b.rank(),
                                     " (operands with unnamed axes broadcast only by position)");
    for (std::size_t i = 0; i < a.rank(); ++i) out.push_back(unify_dims(a[i], b[i]));
  }
  return nax::shape(type, std::span<const dim>(out.data(), out.size()));
}

inline bool is_floating(nax::dtype t) { return t == nax::dtype::f32 || t == nax::dtype::f64; }

}  // namespace detail

inline value builder::elementwise(std::size_t index, std::span<const value> args) {
  const std::string_view op = elementwise_name(index);
  const std::size_t arity = elementwise_arity(index);
  if (args.size() != arity)
    nax::detail::throw_shape_error("nax::graph::", op, ": takes ", arity, " operand",
                                   arity == 1 ? "" : "s", ", given ", args.size());
  node n;
  n.kind = op_kind::elementwise;
  n.code = static_cast<std::uint8_t>(index);
  for (const value& v : args) {
    (void)operand(op, v);
    n.inputs.push_back(v.id_);
  }
  auto operands = [&] {
    std::string s;
    for (std::size_t i = 0; i < args.size(); ++i)
      s += nax::detail::message(i ? ", " : "", nodes_[args[i].id_].shape.to_string());
    return s;
  };
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::", op, "(", operands(), "): ", why...);
  };
  const auto traits = with_elementwise_op(index, [](auto o) {
    using Op = decltype(o);
    return std::pair<bool, bool>{Op::floating_only, Op::yields_bool};
  });
  const bool is_where = index == elementwise_index<ops::where>;
  const bool logical = index == elementwise_index<ops::logical_and> ||
                       index == elementwise_index<ops::logical_or> ||
                       index == elementwise_index<ops::logical_not>;
  // Element types: the value operands agree; where's mask and logical operands are boolean.
  const std::size_t first_value = is_where ? 1 : 0;
  const nax::dtype type = nodes_[args[first_value].id_].shape.dtype();
  if (is_where && nodes_[args[0].id_].shape.dtype() != nax::dtype::boolean)
    fail("the mask (operand 0) is ", name(nodes_[args[0].id_].shape.dtype()), ", not bool");
  for (std::size_t i = first_value; i < args.size(); ++i) {
    const nax::dtype t = nodes_[args[i].id_].shape.dtype();
    if (t != type)
      fail("element types differ: operand ", first_value, " is ", name(type), ", operand ", i,
           " is ", name(t));
  }
  if (logical && type != nax::dtype::boolean) fail("operands must be bool, not ", name(type));
  if (!logical && !is_where && type == nax::dtype::boolean) fail("operands must not be bool");
  if (traits.first && !detail::is_floating(type))
    fail("needs floating-point operands (f32 or f64), not ", name(type));
  const nax::dtype result = traits.second && !logical ? nax::dtype::boolean : type;
  nax::shape s(result, {});
  try {
    for (std::size_t i = 0; i < args.size(); ++i)
      s = detail::broadcast_shapes(s, nodes_[args[i].id_].shape, result);
  } catch (const shape_error& e) {
    fail(e.what());
  }
  n.shape = std::move(s);
  return add(std::move(n));
}

inline value builder::reduce(reduce_kind kind, value x, std::span<const axis_ref> axes) {
  const std::string op = nax::detail::message("reduce_", name(kind));
  const node& in = operand(op, x);
  const nax::shape xs = in.shape;
  std::vector<bool> reduced(xs.rank(), false);
  node n;
  n.kind = op_kind::reduce;
  n.code = static_cast<std::uint8_t>(kind);
  n.inputs.push_back(x.id_);
  for (const axis_ref& a : axes) {
    const std::size_t i = resolve_axis(op, 0, xs, a);
    if (reduced[i])
      nax::detail::throw_shape_error("nax::graph::", op, ": axis ", i, " (", xs[i].to_string(),
                                     ") of ", xs.to_string(), " is listed twice");
    reduced[i] = true;
  }
  if (xs.dtype() == nax::dtype::boolean)
    nax::detail::throw_shape_error("nax::graph::", op, ": cannot reduce bool elements (",
                                   xs.to_string(), ")");
  nax::detail::small_vector<dim, 6> kept;
  for (std::size_t i = 0; i < xs.rank(); ++i) {
    if (reduced[i])
      n.ints.push_back(static_cast<std::int32_t>(i));
    else
      kept.push_back(xs[i]);
  }
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(kept.data(), kept.size()));
  return add(std::move(n));
}

inline value builder::dot_general(value a, value b, std::span<const axis_pair> contract,
                                  std::span<const axis_pair> batch) {
  constexpr std::string_view op = "dot_general";
  const nax::shape as = operand(op, a).shape, bs = operand(op, b).shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::dot_general(", as.to_string(), ", ", bs.to_string(),
                                   "): ", why...);
  };
  if (as.dtype() != bs.dtype())
    fail("element types differ: ", name(as.dtype()), " vs ", name(bs.dtype()));
  if (!detail::is_floating(as.dtype())) fail("needs f32 or f64 operands, not ", name(as.dtype()));
  std::vector<int> a_role(as.rank(), 0), b_role(bs.rank(), 0);  // 0 free, 1 contracted, 2 batch
  node n;
  n.kind = op_kind::dot_general;
  n.inputs.push_back(a.id_);
  n.inputs.push_back(b.id_);
  nax::detail::small_vector<dim, 6> out;
  auto pairs = [&](std::span<const axis_pair> ps, int role) {
    n.ints.push_back(static_cast<std::int32_t>(ps.size()));
    for (const axis_pair& p : ps) {
      const std::size_t i = resolve_axis(op, 0, as, p.lhs), j = resolve_axis(op, 1, bs, p.rhs);
      if (a_role[i] || b_role[j])
        fail("axis ", a_role[i] ? i : j, " of operand ", a_role[i] ? 0 : 1, " is paired twice");
      a_role[i] = b_role[j] = role;
      dim d;
      try {
        d = unify_dims(as[i], bs[j]);
      } catch (const shape_error& e) {
        fail(role == 1 ? "contracting" : "batch", " axes ", i, " and ", j, ": ", e.what());
      }
      if (role == 2) out.push_back(d);
      n.ints.push_back(static_cast<std::int32_t>(i));
      n.ints.push_back(static_cast<std::int32_t>(j));
    }
  };
  pairs(contract, 1);
  pairs(batch, 2);
  for (std::size_t i = 0; i < as.rank(); ++i)
    if (!a_role[i]) out.push_back(as[i]);
  for (std::size_t j = 0; j < bs.rank(); ++j)
    if (!b_role[j]) out.push_back(bs[j]);
  n.shape = nax::shape(as.dtype(), std::span<const dim>(out.data(), out.size()));
  return add(std::move(n));
}

inline value builder::transpose(value x, std::span<const axis_ref> perm) {
  constexpr std::string_view op = "transpose";
  const nax::shape xs = operand(op, x).shape;
  if (perm.size() != xs.rank())
    nax::detail::throw_shape_error("nax::graph::transpose: ", perm.size(),
                                   " axes given for the rank-", xs.rank(), " operand ",
                                   xs.to_string());
  std::vector<bool> used(xs.rank(), false);
  node n;
  n.kind = op_kind::transpose;
  n.inputs.push_back(x.id_);
  nax::detail::small_vector<dim, 6> out;
  for (const axis_ref& a : perm) {
    const std::size_t i = resolve_axis(op, 0, xs, a);
    if (used[i])
      nax::detail::throw_shape_error("nax::graph::transpose: axis ", i, " (", xs[i].to_string(),
                                     ") of ", xs.to_string(), " is listed twice");
    used[i] = true;
    n.ints.push_back(static_cast<std::int32_t>(i));
    out.push_back(xs[i]);
  }
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  return add(std::move(n));
}

inline value builder::softmax(value x, axis_ref axis) {
  const nax::shape xs = operand("softmax", x).shape;
  if (!detail::is_floating(xs.dtype()))
    nax::detail::throw_shape_error("nax::graph::softmax: needs f32 or f64, not ", name(xs.dtype()));
  node n;
  n.kind = op_kind::softmax;
  n.inputs.push_back(x.id_);
  n.ints.push_back(static_cast<std::int32_t>(resolve_axis("softmax", 0, xs, axis)));
  n.shape = xs;
  return add(std::move(n));
}

inline value builder::layer_norm(value x, value gamma, value beta, axis_ref axis, double epsilon) {
  constexpr std::string_view op = "layer_norm";
  const nax::shape xs = operand(op, x).shape;
  if (!detail::is_floating(xs.dtype()))
    nax::detail::throw_shape_error("nax::graph::layer_norm: needs f32 or f64, not ",
                                   name(xs.dtype()));
  const std::size_t i = resolve_axis(op, 0, xs, axis);
  const value params[2] = {gamma, beta};
  for (std::size_t p = 0; p < 2; ++p) {
    const nax::shape& ps = operand(op, params[p]).shape;
    const char* what = p == 0 ? "gamma" : "beta";
    if (ps.dtype() != xs.dtype() || ps.rank() != 1)
      nax::detail::throw_shape_error("nax::graph::layer_norm: ", what, " must be ",
                                     name(xs.dtype()), "[", xs[i].to_string(), "], not ",
                                     ps.to_string());
    try {
      (void)unify_dims(xs[i], ps[0]);
    } catch (const shape_error& e) {
      nax::detail::throw_shape_error("nax::graph::layer_norm: ", what, " ", ps.to_string(),
                                     " does not match axis ", i, " of ", xs.to_string(), ": ",
                                     e.what());
    }
  }
  node n;
  n.kind = op_kind::layer_norm;
  n.inputs.push_back(x.id_);
  n.inputs.push_back(gamma.id_);
  n.inputs.push_back(beta.id_);
  n.ints.push_back(static_cast<std::int32_t>(i));
  n.scalar = epsilon;
  n.shape = xs;
  return add(std::move(n));
}

inline value builder::external(std::shared_ptr<const graph::external_kernel> kernel,
                               std::span<const value> args, nax::shape result) {
  if (!kernel) nax::detail::throw_shape_error("nax::graph::external: no kernel");
  node n;
  n.kind = op_kind::external;
  for (const value& v : args) {
    (void)operand("external", v);
    n.inputs.push_back(v.id_);
  }
  n.shape = std::move(result);
  n.kernel = std::move(kernel);
  return add(std::move(n));
}

namespace detail {

// How often a dynamic axis named `n` occurs in s, and where first.
inline std::size_t count_dynamic(const nax::shape& s, axis_name n) {
  std::size_t c = 0;
  for (const dim& d : s.dims()) c += d.is_dynamic() && d.name() == n;
  return c;
}
inline const dim& first_dynamic(const nax::shape& s, axis_name n) {
  for (const dim& d : s.dims())
    if (d.is_dynamic() && d.name() == n) return d;
  return s[0];  // not reached: callers count first
}

// The product of the static extents of s.
inline std::size_t static_elements(const nax::shape& s) {
  std::size_t n = 1;
  for (const dim& d : s.dims())
    if (d.is_static()) n *= d.extent();
  return n;
}

// "axis 'seq'" for a named axis, else "axis 2".
inline std::string axis_subject(const dim& d, std::size_t i) {
  return d.has_name() ? nax::detail::message("axis '", d.name().view(), "'")
                      : nax::detail::message("axis ", i);
}

// The checks reshape and broadcast share on their target: x's element type, named dynamic axes.
template <class Fail>
void check_target(const nax::shape& xs, const nax::shape& target, const Fail& fail) {
  if (target.dtype() != xs.dtype())
    fail("element types differ: the target ", target.to_string(), " is ", name(target.dtype()),
         ", the operand is ", name(xs.dtype()));
  for (std::size_t i = 0; i < target.rank(); ++i)
    if (target[i].is_dynamic() && !target[i].has_name())
      fail("the target ", target.to_string(), " has an unnamed dynamic axis (", i,
           "): its extent could not be bound by name");
}

}  // namespace detail

inline value builder::reshape(value x, nax::shape target) {
  const nax::shape xs = operand("reshape", x).shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::reshape(", xs.to_string(), "): ", why...);
  };
  const std::string ts = target.to_string();
  for (std::size_t i = 0; i < xs.rank(); ++i)
    if (xs[i].is_dynamic() && !xs[i].has_name())
      fail("the operand's axis ", i, " is dynamic and unnamed: reshape carries only named ",
           "dynamic axes");
  detail::check_target(xs, target, fail);
  nax::detail::small_vector<dim, 6> out;
  for (const dim& t : target.dims()) {
    out.push_back(t);
    if (t.is_static()) continue;
    const std::string_view n = t.name().view();
    const std::size_t in_x = detail::count_dynamic(xs, t.name());
    const std::size_t in_target = detail::count_dynamic(target, t.name());
    if (in_x == 0) fail("the target ", ts, " has dynamic axis '", n, "', the operand does not");
    if (in_x != in_target)
      fail("dynamic axis '", n, "' occurs ", in_target, in_target == 1 ? " time" : " times",
           " in the target ", ts, ", ", in_x, " in the operand");
    const dim& d = detail::first_dynamic(xs, t.name());
    if (t.has_bound() && t.bound() != d.bound())
      fail("the target ", ts, " bounds axis '", n, "' by ", t.bound(), ", the operand ",
           d.has_bound() ? nax::detail::message("by ", d.bound()) : std::string("does not"),
           " (a bound cannot change)");
    out.back() = d;
  }
  for (const dim& d : xs.dims())
    if (d.is_dynamic() && detail::count_dynamic(target, d.name()) == 0)
      fail("the target ", ts, " has no dynamic axis '", d.name().view(),
           "' (every dynamic axis of the operand must be one of the target's)");
  const std::size_t have = detail::static_elements(xs), want = detail::static_elements(target);
  if (have != want) {
    std::string per;
    for (const dim& d : xs.dims())
      if (d.is_dynamic()) per += nax::detail::message(per.empty() ? " per " : "*", d.name().view());
    fail("the target ", ts, " has ", want, want == 1 ? " element" : " elements", per,
         ", the operand ", have);
  }
  nax::shape result(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  if (result == xs) return x;
  node n;
  n.kind = op_kind::reshape;
  n.inputs.push_back(x.id_);
  n.shape = std::move(result);
  return add(std::move(n));
}

inline value builder::broadcast(value x, nax::shape target) {
  const nax::shape xs = operand("broadcast", x).shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::broadcast(", xs.to_string(), "): ", why...);
  };
  const std::string ts = target.to_string();
  detail::check_target(xs, target, fail);
  const bool by_name = detail::all_named(xs) && detail::all_named(target);
  if (!by_name && xs.rank() > target.rank())
    fail("the target ", ts, " has rank ", target.rank(), ", less than the operand's ", xs.rank(),
         " (axes are matched by position from the right, as not all are named)");
  if (target == xs) return x;
  node n;
  n.kind = op_kind::broadcast;
  n.inputs.push_back(x.id_);
  std::vector<std::size_t> source(target.rank(), xs.rank());  // the axis of x at each target axis
  for (std::size_t i = 0; i < xs.rank(); ++i) {
    const dim& d = xs[i];
    std::size_t j = target.rank() - xs.rank() + i;
    if (by_name) {
      const auto k = target.index_of(d.name().view());
      if (!k) fail("axis '", d.name().view(), "' is not in the target ", ts);
      j = *k;
      if (source[j] != xs.rank())
        fail("axes ", source[j], " and ", i, " of the operand both go to axis '", d.name().view(),
             "' of the target ", ts);
    }
    source[j] = i;
    const dim& t = target[j];
    if (d.has_name() && t.has_name() && d.name() != t.name())
      fail("axis ", i, " of the operand and axis ", j, " of the target ", ts,
           ": incompatible axis names: '", d.name().view(), "' vs '", t.name().view(), "'");
    const bool equal = d.is_static() ? t.is_static() && t.extent() == d.extent()
                                     : t.is_dynamic() && d.has_name() && d.name() == t.name();
    if (!equal && !(d.is_static() && d.extent() == 1))
      fail(detail::axis_subject(d, i), " (to axis ", j, " of the target ", ts, "): extent ",
           d.to_string(), " does not broadcast to ", t.to_string(),
           " (only the same extent or a static 1 does)");
    n.ints.push_back(static_cast<std::int32_t>(j));
  }
  n.shape = std::move(target);
  return add(std::move(n));
}

inline value builder::slice(value x, axis_ref axis, std::int64_t start, std::int64_t stop,
                            std::int64_t step) {
  constexpr std::string_view op = "slice";
  const nax::shape xs = operand(op, x).shape;
  const std::size_t i = resolve_axis(op, 0, xs, axis);
  const dim& d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::slice(", xs.to_string(), "): ", why...);
  };
  const std::string subject = detail::axis_subject(d, i);
  if (step < 1) fail("step ", step, " is not positive");
  if (start < 0) fail("start ", start, " is negative");
  if (stop < 0) fail("stop ", stop, " is negative (nax::graph::slice_end slices to the end)");
  std::int64_t end = stop;
  if (d.is_static()) {
    const auto extent = static_cast<std::int64_t>(d.extent());
    if (start > extent)
      fail("start ", start, " is out of range for ", subject, " (extent ", extent, ")");
    if (stop == slice_end)
      end = extent;
    else if (stop > extent)
      fail("stop ", stop, " is out of range for ", subject, " (extent ", extent, ")");
    if (start == 0 && end == extent && step == 1) return x;
  } else if (stop == slice_end) {
    if (start == 0 && step == 1) return x;
    fail("a slice to the end of dynamic ", subject, " must be all of it (start 0, step 1): ",
         "its extent would have no name to bind; give stop");
  } else if (d.has_bound() && static_cast<std::uint64_t>(stop) > d.bound()) {
    fail("stop ", stop, " exceeds the bound ", d.bound(), " of ", subject);
  }
  if (start > end) fail("start ", start, " is after stop ", end);
  constexpr std::int64_t max32 = std::numeric_limits<std::int32_t>::max();
  if (end > max32) fail("stop ", end, " does not fit in int32");
  if (step > max32) fail("step ", step, " does not fit in int32");
  node n;
  n.kind = op_kind::slice;
  n.inputs.push_back(x.id_);
  for (std::int64_t v : {static_cast<std::int64_t>(i), start, end, step})
    n.ints.push_back(static_cast<std::int32_t>(v));
  nax::detail::small_vector<dim, 6> out;
  out.assign(xs.dims().begin(), xs.dims().end());
  out[i] = dim::named(d.name(), static_cast<std::size_t>((end - start + step - 1) / step));
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  return add(std::move(n));
}

inline value builder::concat(std::span<const value> xs, axis_ref axis) {
  constexpr std::string_view op = "concat";
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  for (const value& v : xs) (void)operand(op, v);
  std::vector<nax::shape> shapes;
  for (const value& v : xs) shapes.push_back(nodes_[v.id_].shape);
  auto fail = [&](const auto&... why) {
    std::string list;
    for (std::size_t p = 0; p < shapes.size(); ++p)
      list += nax::detail::message(p ? ", " : "", shapes[p].to_string());
    nax::detail::throw_shape_error("nax::graph::concat(", list, "): ", why...);
  };
  const nax::shape& first = shapes[0];
  const std::size_t k = resolve_axis(op, 0, first, axis);
  for (std::size_t p = 1; p < shapes.size(); ++p) {
    if (shapes[p].dtype() != first.dtype())
      fail("element types differ: operand 0 is ", name(first.dtype()), ", operand ", p, " is ",
           name(shapes[p].dtype()));
    if (shapes[p].rank() != first.rank())
      fail("ranks differ: operand 0 has rank ", first.rank(), ", operand ", p, " has rank ",
           shapes[p].rank());
  }
  if (xs.size() == 1) return xs[0];
  nax::detail::small_vector<dim, 6> out;
  out.assign(first.dims().begin(), first.dims().end());
  for (std::size_t p = 1; p < shapes.size(); ++p)
    for (std::size_t i = 0; i < first.rank(); ++i) {
      if (i == k) continue;
      try {
        out[i] = unify_dims(out[i], shapes[p][i]);
      } catch (const shape_error& e) {
        fail("operand ", p, ", axis ", i, ": ", e.what());
      }
    }
  axis_name joined;
  std::size_t extent = 0;
  for (std::size_t p = 0; p < shapes.size(); ++p) {
    const dim& d = shapes[p][k];
    if (d.is_dynamic())
      fail("concat along dynamic ", detail::axis_subject(d, k), " (operand ", p,
           ") is not supported: the sum of extents would have no name to bind");
    try {
      joined = axis_name(unify_axis_name(joined.view(), d.name().view()));
    } catch (const shape_error& e) {
      fail("axis ", k, ": ", e.what());
    }
    extent += d.extent();
  }
  out[k] = dim::named(joined, extent);
  node n;
  n.kind = op_kind::concat;
  for (const value& v : xs) n.inputs.push_back(v.id_);
  n.ints.push_back(static_cast<std::int32_t>(k));
  n.shape = nax::shape(first.dtype(), std::span<const dim>(out.data(), out.size()));
  return add(std::move(n));
}

}  // namespace nax::graph
