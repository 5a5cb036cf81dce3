#pragma once
// nax::graph::builder: the runtime graph (level 1 of the two-level JIT, seed 000) as it is
// built, one node per op. Shape inference runs as each node is added, over symbolic shapes with
// named axes (names unify; errors name the op, its operands and the axis), and nodes with the
// same op, inputs, attributes and shape are one node (common subexpressions are built once).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
    nodes_.push_back(std::move(n));
    const node_id id = static_cast<node_id>(nodes_.size() - 1);
    const auto [it, inserted] = cse_.insert(id);
    if (!inserted) {
      nodes_.pop_back();
      return value(this, *it);
    }
    return value(this, id);
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
         std::memcmp(&a.scalar, &c.scalar, sizeof a.scalar) == 0 && a.shape == c.shape;
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

}  // namespace nax::graph
