#pragma once
// The ops of the runtime graph as free functions and operators on graph values:
// `nax::graph::tanh(nax::graph::dot_general(a, w, {{1, 0}}) + b)`. Each adds a node to the
// builder its operands belong to (or finds the equal node already there).

#include <cstdint>
#include <initializer_list>
#include <span>

#include <nax/graph/builder.hpp>

namespace nax::graph {
namespace detail {

template <class Op, class... V>
value apply(const V&... args) {
  const value vs[] = {args...};
  return vs[0].owner().elementwise(elementwise_index<Op>, vs);
}

// A scalar operand: a constant of the other operand's element type.
inline value scalar_like(const value& like, double v) {
  return like.owner().constant(v, like.shape().dtype());
}

}  // namespace detail

// clang-format off
inline value neg(const value& x) { return detail::apply<ops::neg>(x); }
inline value abs(const value& x) { return detail::apply<ops::abs>(x); }
inline value relu(const value& x) { return detail::apply<ops::relu>(x); }
inline value exp(const value& x) { return detail::apply<ops::exp>(x); }
inline value log(const value& x) { return detail::apply<ops::log>(x); }
inline value sqrt(const value& x) { return detail::apply<ops::sqrt>(x); }
inline value rsqrt(const value& x) { return detail::apply<ops::rsqrt>(x); }
inline value tanh(const value& x) { return detail::apply<ops::tanh>(x); }
inline value sigmoid(const value& x) { return detail::apply<ops::sigmoid>(x); }
inline value gelu(const value& x) { return detail::apply<ops::gelu>(x); }
inline value gelu_tanh(const value& x) { return detail::apply<ops::gelu_tanh>(x); }
inline value silu(const value& x) { return detail::apply<ops::silu>(x); }
inline value logical_not(const value& x) { return detail::apply<ops::logical_not>(x); }

inline value add(const value& a, const value& b) { return detail::apply<ops::add>(a, b); }
inline value sub(const value& a, const value& b) { return detail::apply<ops::sub>(a, b); }
inline value mul(const value& a, const value& b) { return detail::apply<ops::mul>(a, b); }
inline value div(const value& a, const value& b) { return detail::apply<ops::div>(a, b); }
inline value min(const value& a, const value& b) { return detail::apply<ops::min>(a, b); }
inline value max(const value& a, const value& b) { return detail::apply<ops::max>(a, b); }
inline value pow(const value& a, const value& b) { return detail::apply<ops::pow>(a, b); }
inline value pow(const value& a, double b) { return pow(a, detail::scalar_like(a, b)); }
inline value leaky_relu(const value& x, double alpha) {
  return detail::apply<ops::leaky_relu>(x, detail::scalar_like(x, alpha));
}
inline value equal(const value& a, const value& b) { return detail::apply<ops::equal>(a, b); }
inline value not_equal(const value& a, const value& b) { return detail::apply<ops::not_equal>(a, b); }
inline value less(const value& a, const value& b) { return detail::apply<ops::less>(a, b); }
inline value less_equal(const value& a, const value& b) { return detail::apply<ops::less_equal>(a, b); }
inline value greater(const value& a, const value& b) { return detail::apply<ops::greater>(a, b); }
inline value greater_equal(const value& a, const value& b) { return detail::apply<ops::greater_equal>(a, b); }
inline value logical_and(const value& a, const value& b) { return detail::apply<ops::logical_and>(a, b); }
inline value logical_or(const value& a, const value& b) { return detail::apply<ops::logical_or>(a, b); }
inline value where(const value& m, const value& a, const value& b) { return detail::apply<ops::where>(m, a, b); }

inline value operator-(const value& x) { return neg(x); }
inline value operator+(const value& a, const value& b) { return add(a, b); }
inline value operator-(const value& a, const value& b) { return sub(a, b); }
inline value operator*(const value& a, const value& b) { return mul(a, b); }
inline value operator/(const value& a, const value& b) { return div(a, b); }
inline value operator+(const value& a, double b) { return add(a, detail::scalar_like(a, b)); }
inline value operator-(const value& a, double b) { return sub(a, detail::scalar_like(a, b)); }
inline value operator*(const value& a, double b) { return mul(a, detail::scalar_like(a, b)); }
inline value operator/(const value& a, double b) { return div(a, detail::scalar_like(a, b)); }
inline value operator+(double a, const value& b) { return add(detail::scalar_like(b, a), b); }
inline value operator-(double a, const value& b) { return sub(detail::scalar_like(b, a), b); }
inline value operator*(double a, const value& b) { return mul(detail::scalar_like(b, a), b); }
inline value operator/(double a, const value& b) { return div(detail::scalar_like(b, a), b); }
// clang-format on

/// Reductions over the listed axes (by name or position); the other axes are kept in order.
inline value sum(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(reduce_kind::sum, x, std::span(axes.begin(), axes.size()));
}
inline value mean(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(reduce_kind::mean, x, std::span(axes.begin(), axes.size()));
}
inline value reduce_max(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(reduce_kind::max, x, std::span(axes.begin(), axes.size()));
}
inline value reduce_min(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(reduce_kind::min, x, std::span(axes.begin(), axes.size()));
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
