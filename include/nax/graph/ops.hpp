#pragma once
// The ops of the runtime graph as free functions and operators on graph values:
// `nax::graph::tanh(nax::graph::dot_general(a, w, {{1, 0}}) + b)`. Each adds a node to the
// builder its operands belong to. The elementwise functions are made from the op list
// (ops/list.hpp), one per op: `f(x)`, `f(a, b)` (either may be a double: a constant of the other
// operand's element type), `f(mask, a, b)`.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include <nax/graph/builder.hpp>
#include <nax/ops/list.hpp>

namespace nax::graph {
namespace detail {

inline value apply(ops::id op, std::initializer_list<value> args) {
  return args.begin()->owner().elementwise(op, std::span(args.begin(), args.size()));
}

// A scalar operand: a constant of the other operand's element type.
inline value scalar_like(const value& like, double v) {
  return like.owner().constant(v, like.shape().dtype());
}

}  // namespace detail

// One function per elementwise op, by its arity.
#define NAX_GRAPH_OP_1(name) \
  inline value name(const value& x) { return detail::apply(ops::id::name, {x}); }
#define NAX_GRAPH_OP_2(name)                                                                 \
  inline value name(const value& a, const value& b) {                                        \
    return detail::apply(ops::id::name, {a, b});                                             \
  }                                                                                          \
  inline value name(const value& a, double b) { return name(a, detail::scalar_like(a, b)); } \
  inline value name(double a, const value& b) { return name(detail::scalar_like(b, a), b); }
#define NAX_GRAPH_OP_3(name)                                          \
  inline value name(const value& m, const value& a, const value& b) { \
    return detail::apply(ops::id::name, {m, a, b});                   \
  }                                                                   \
  inline value name(const value& m, const value& a, double b) {       \
    return name(m, a, detail::scalar_like(a, b));                     \
  }                                                                   \
  inline value name(const value& m, double a, const value& b) {       \
    return name(m, detail::scalar_like(b, a), b);                     \
  }
#define NAX_GRAPH_OP(name, arity, operands, result) NAX_GRAPH_OP_##arity(name)
NAX_ELEMENTWISE_OPS(NAX_GRAPH_OP)
#undef NAX_GRAPH_OP
#undef NAX_GRAPH_OP_1
#undef NAX_GRAPH_OP_2
#undef NAX_GRAPH_OP_3

// Operators: syntax for some of the ops above.
inline value operator-(const value& x) { return neg(x); }
inline value operator+(const value& a, const value& b) { return add(a, b); }
inline value operator-(const value& a, const value& b) { return sub(a, b); }
inline value operator*(const value& a, const value& b) { return mul(a, b); }
inline value operator/(const value& a, const value& b) { return div(a, b); }
inline value operator+(const value& a, double b) { return add(a, b); }
inline value operator-(const value& a, double b) { return sub(a, b); }
inline value operator*(const value& a, double b) { return mul(a, b); }
inline value operator/(const value& a, double b) { return div(a, b); }
inline value operator+(double a, const value& b) { return add(a, b); }
inline value operator-(double a, const value& b) { return sub(a, b); }
inline value operator*(double a, const value& b) { return mul(a, b); }
inline value operator/(double a, const value& b) { return div(a, b); }

/// Reductions over the listed axes (by name or position); the other axes are kept in order.
inline value sum(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::sum, x, std::span(axes.begin(), axes.size()));
}
inline value mean(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::mean, x, std::span(axes.begin(), axes.size()));
}
inline value reduce_max(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::max, x, std::span(axes.begin(), axes.size()));
}
inline value reduce_min(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::min, x, std::span(axes.begin(), axes.size()));
}

/// dot_general(a, b, {{1, 0}}): contract a's axis 1 with b's axis 0; `batch` pairs are matched.
inline value dot_general(const value& a, const value& b, std::initializer_list<axis_pair> contract,
                         std::initializer_list<axis_pair> batch = {}) {
  return a.owner().dot_general(a, b, std::span(contract.begin(), contract.size()),
                               std::span(batch.begin(), batch.size()));
}

inline value transpose(const value& x, std::initializer_list<axis_ref> perm) {
  return x.owner().transpose(x, std::span(perm.begin(), perm.size()));
}
inline value softmax(const value& x, axis_ref axis) { return x.owner().softmax(x, axis); }
inline value layer_norm(const value& x, const value& gamma, const value& beta, axis_ref axis,
                        double epsilon = 1e-5) {
  return x.owner().layer_norm(x, gamma, beta, axis, epsilon);
}

/// reshape(x, {"batch", 3, 4}): x's elements in row-major order in the given dimensions (of x's
/// element type), or in a shape. See builder::reshape for the rules on dynamic axes.
inline value reshape(const value& x, const nax::shape& target) {
  return x.owner().reshape(x, target);
}
inline value reshape(const value& x, std::initializer_list<nax::dim> dims) {
  return reshape(x, nax::shape(x.shape().dtype(), dims));
}

/// broadcast(x, {"batch", "seq", 768}): x repeated to the given dimensions (of x's element type),
/// or to a shape; axes match by name when all are named, else from the right.
inline value broadcast(const value& x, const nax::shape& target) {
  return x.owner().broadcast(x, target);
}
inline value broadcast(const value& x, std::initializer_list<nax::dim> dims) {
  return broadcast(x, nax::shape(x.shape().dtype(), dims));
}

/// x with axis `from` named `to` (builder::rename): a renamed dynamic axis is bound as its source.
inline value rename(const value& x, axis_ref from, std::string_view to) {
  return x.owner().rename(x, from, to);
}
/// x with its static axis `whole` split into `outer` then `inner` (builder::split).
inline value split(const value& x, axis_ref whole, dim outer, dim inner) {
  return x.owner().split(x, whole, outer, inner);
}
/// x with its static axes a and b merged into one axis named `to` (builder::merge).
inline value merge(const value& x, axis_ref a, axis_ref b, std::string_view to) {
  return x.owner().merge(x, a, b, to);
}

/// slice(x, "seq", 0, 128): entries [start, stop) of an axis, every step-th (slice_end: to the
/// end; on a dynamic axis only for all of it).
inline value slice(const value& x, axis_ref axis, std::int64_t start, std::int64_t stop,
                   std::int64_t step = 1) {
  return x.owner().slice(x, axis, start, stop, step);
}

/// concat({a, b}, "hidden"): the operands joined along a static axis, in order.
inline value concat(std::span<const value> xs, axis_ref axis) {
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  return xs[0].owner().concat(xs, axis);
}
inline value concat(std::initializer_list<value> xs, axis_ref axis) {
  return concat(std::span(xs.begin(), xs.size()), axis);
}

}  // namespace nax::graph
