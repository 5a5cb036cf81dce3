#pragma once
// The tensors made from a rule, on traced values (while nax::jit traces a function): zeros_like,
// ones_like, full_like, iota<A>(x), eye<Row, Col>(x), tril<Row, Col>(x), uniform_like,
// normal_like, truncated_normal_like add graph nodes whose shape is the traced operand's (its
// dynamic axes by name: bound when the executable specializes, a renamed axis as its source);
// the operand itself is not computed for them. argmax<A> and argmin<A> add an arg_reduce node,
// one_hot<A> an iota, an equal and a where. Each returns a traced value of the type the typed
// op returns, so the same generic lambda runs eagerly and traced.
//
// These overload the typed functions (typed/creation.hpp, random.hpp, arg_reduce.hpp,
// one_hot.hpp) with the same parameters and a constraint that subsumes theirs. This header must
// be included before such a lambda is defined (nax/jit/jit.hpp includes it).

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>
#include <nax/jit/fused_expression.hpp>
#include <nax/jit/traced.hpp>
#include <nax/ops/random.hpp>
#include <nax/typed/arg_reduce.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/one_hot.hpp>
#include <nax/typed/random.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// The symbolic shape of T over the axes of list L (dynamic axes by name).
template <class T, class L>
nax::shape traced_shape() {
  return traced_over<T, L>::shape();
}

template <class X>
auto traced_random(const X& x, rng key, ops::distribution d, double a, double b) {
  using V = typename X::value_type;
  using L = typename X::axes_type;
  static_assert(check_random_type<V>());
  return make_traced<V, L>(builder_of(x).random(traced_shape<V, L>(), d, key, a, b));
}

template <graph::arg_kind Kind, class A, class X>
auto traced_arg_reduce(const X& x) {
  using L = typename X::axes_type;
  static_assert(check_arg_reduce<A, X>());
  const graph::value v = lower(x);
  return make_traced<std::int64_t, axes_difference<L, axes<A>>>(
      v.owner().arg_reduce(Kind, v, graph::axis_ref(A::name)));
}

template <class A, class T, class X>
auto traced_one_hot(const X& indices, std::size_t n) {
  using V = typename X::value_type;
  // An error here means the indices are not i32 or i64, the element types the graph compares.
  static_assert(std::is_same_v<V, std::int32_t> || std::is_same_v<V, std::int64_t>,
                "nax::jit: one_hot's indices must be std::int32_t or std::int64_t");
  // An error here means the new axis is dynamic: under nax::jit no input binds its extent.
  static_assert(A::is_static, "nax::jit: one_hot's axis must be static under nax::jit");
  static_assert(check_unique_axes<one_hot_axes<X, A>>);
  check_axis_extent(A::name, A::static_extent, A::bound, n);
  const graph::value v = lower(indices);
  return make_traced<T, one_hot_axes<X, A>>(
      graph::one_hot(v, nax::dim::named(A::name, n), dtype_of<T>));
}

}  // namespace detail

/// full_like, zeros_like, ones_like on a traced operand: a constant broadcast to its shape.
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto full_like(const X& x,
                                                                typename X::value_type value) {
  using V = typename X::value_type;
  using L = typename X::axes_type;
  return detail::make_traced<V, L>(
      graph::full(detail::builder_of(x), detail::traced_shape<V, L>(), static_cast<double>(value)));
}
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto zeros_like(const X& x) {
  return full_like(x, typename X::value_type{});
}
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto ones_like(const X& x) {
  return full_like(x, typename X::value_type(1));
}

/// iota<A, T>(x) on a traced operand: an iota node over x's axis A.
template <axis_type A, class T = std::int64_t, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto iota(const X& x) {
  using B = axes_get<typename X::axes_type, A>;
  static_assert(
      std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, std::uint8_t>,
      "nax::jit: iota's elements must be float, double, std::int32_t or std::int64_t");
  return detail::make_traced<T, axes<B>>(
      detail::builder_of(x).iota(detail::traced_shape<T, axes<B>>(), 0));
}

/// eye<Row, Col, T>(x) on a traced operand: iota over each axis, equal, where.
template <axis_type Row, axis_type Col, class T = void, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto eye(const X& x) {
  using L = typename X::axes_type;
  using R = axes_get<L, Row>;
  using C = axes_get<L, Col>;
  using V = detail::like_value_t<T, X>;
  const nax::shape s = detail::traced_shape<V, axes<R, C>>();
  return detail::make_traced<V, axes<R, C>>(
      graph::eye(detail::builder_of(x), s[0], s[1], dtype_of<V>));
}

/// tril<Row, Col, T>(x) on a traced operand: iota over each axis, less_equal (and where unless
/// T is bool).
template <axis_type Row, axis_type Col, class T = bool, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto tril(const X& x) {
  using L = typename X::axes_type;
  using R = axes_get<L, Row>;
  using C = axes_get<L, Col>;
  const nax::shape s = detail::traced_shape<T, axes<R, C>>();
  return detail::make_traced<T, axes<R, C>>(
      graph::tril(detail::builder_of(x), s[0], s[1], dtype_of<T>));
}

/// uniform_like, normal_like, truncated_normal_like on a traced operand: a random node of its
/// shape, the typed functions' bits.
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto uniform_like(const X& x, rng key,
                                                                   double lo = 0, double hi = 1) {
  return detail::traced_random(x, key, ops::distribution::uniform, lo, hi);
}
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto normal_like(const X& x, rng key,
                                                                  double mean = 0,
                                                                  double stddev = 1) {
  return detail::traced_random(x, key, ops::distribution::normal, mean, stddev);
}
template <class X>
requires(expression<X>&& detail::is_traced_v<X>) auto truncated_normal_like(const X& x, rng key,
                                                                            double mean = 0,
                                                                            double stddev = 1) {
  return detail::traced_random(x, key, ops::distribution::truncated_normal, mean, stddev);
}

/// argmax<A>, argmin<A> on a traced operand: an arg_reduce node.
template <axis_type A, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto argmax(const X& x) {
  return detail::traced_arg_reduce<graph::arg_kind::argmax, A>(x);
}
template <axis_type A, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto argmin(const X& x) {
  return detail::traced_arg_reduce<graph::arg_kind::argmin, A>(x);
}

/// one_hot<A, T> on traced indices (std::int32_t or std::int64_t; A static): iota, equal, where.
template <axis_type A, class T = float, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto one_hot(const X& indices, std::size_t n) {
  return detail::traced_one_hot<A, T>(indices, n);
}
template <detail::static_axis A, class T = float, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto one_hot(const X& indices) {
  return detail::traced_one_hot<A, T>(indices, A::static_extent);
}

}  // namespace nax
