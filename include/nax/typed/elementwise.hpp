#pragma once
// The elementwise surface: operators and functions that build lazy expression nodes over
// tensors, views, expressions and scalars, broadcasting by axis name. Each wraps one op of
// nax/ops/elementwise.hpp; nothing is computed until the expression is assigned.

#include <type_traits>
#include <utility>

#include <nax/ops/elementwise.hpp>
#include <nax/typed/expression.hpp>

namespace nax {
namespace detail {

template <class A, class B>
concept has_expression = is_expression_v<A> || is_expression_v<B>;

// The element type of a binary op: the expression operand's (a scalar converts to it).
template <class A, class B>
struct binary_value {
  using type = typename std::conditional_t<is_expression_v<A>, std::remove_cvref_t<A>,
                                           std::remove_cvref_t<B>>::value_type;
};
template <class A, class B>
using binary_value_t = typename binary_value<A, B>::type;

template <class Op, class T, class... X>
auto make_node(X&&... x) {
  return op_node<Op, decltype(as_expression<T>(std::forward<X>(x)))...>(
      as_expression<T>(std::forward<X>(x))...);
}

template <class Op, class A, class B>
auto binary(A&& a, B&& b) {
  using T = binary_value_t<A, B>;
  if constexpr (Op::floating_only)
    // An error here means a floating-point op was applied to integer or bool elements.
    static_assert(std::is_floating_point_v<T>,
                  "nax: this op needs floating-point elements; convert with nax::cast<float>(e)");
  return make_node<Op, T>(std::forward<A>(a), std::forward<B>(b));
}

template <class Op, class E>
auto unary(E&& e) {
  using T = typename std::remove_cvref_t<E>::value_type;
  if constexpr (Op::floating_only)
    // An error here means a floating-point op was applied to integer or bool elements.
    static_assert(std::is_floating_point_v<T>,
                  "nax: this op needs floating-point elements; convert with nax::cast<float>(e)");
  return make_node<Op, T>(std::forward<E>(e));
}

}  // namespace detail

// --- arithmetic: + - * / with tensors, expressions and scalars; unary - -----------------------
template <class A, class B>
requires detail::has_expression<A, B>
auto operator+(A&& a, B&& b) {
  return detail::binary<ops::add>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator-(A&& a, B&& b) {
  return detail::binary<ops::sub>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator*(A&& a, B&& b) {
  return detail::binary<ops::mul>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator/(A&& a, B&& b) {
  return detail::binary<ops::div>(std::forward<A>(a), std::forward<B>(b));
}
template <expression E>
auto operator-(E&& e) {
  return detail::unary<ops::neg>(std::forward<E>(e));
}

// --- comparisons give bool expressions ---------------------------------------------------------
template <class A, class B>
requires detail::has_expression<A, B>
auto operator==(A&& a, B&& b) {
  return detail::binary<ops::equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator!=(A&& a, B&& b) {
  return detail::binary<ops::not_equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator<(A&& a, B&& b) {
  return detail::binary<ops::less>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator<=(A&& a, B&& b) {
  return detail::binary<ops::less_equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator>(A&& a, B&& b) {
  return detail::binary<ops::greater>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator>=(A&& a, B&& b) {
  return detail::binary<ops::greater_equal>(std::forward<A>(a), std::forward<B>(b));
}

/// Elementwise logic on bool expressions.
template <class A, class B>
requires detail::has_expression<A, B>
auto logical_and(A&& a, B&& b) {
  return detail::binary<ops::logical_and>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto logical_or(A&& a, B&& b) {
  return detail::binary<ops::logical_or>(std::forward<A>(a), std::forward<B>(b));
}
template <expression E>
auto operator!(E&& e) {
  static_assert(std::is_same_v<typename std::remove_cvref_t<E>::value_type, bool>,
                "nax: ! needs a bool expression (a comparison or a bool tensor)");
  return detail::unary<ops::logical_not>(std::forward<E>(e));
}

// --- functions ------------------------------------------------------------------------------
#define NAX_UNARY_FUNCTION(fn)                         \
  template <expression E>                              \
  auto fn(E&& e) {                                     \
    return detail::unary<ops::fn>(std::forward<E>(e)); \
  }
NAX_UNARY_FUNCTION(abs)
NAX_UNARY_FUNCTION(exp)
NAX_UNARY_FUNCTION(log)
NAX_UNARY_FUNCTION(sqrt)
NAX_UNARY_FUNCTION(rsqrt)
NAX_UNARY_FUNCTION(tanh)
NAX_UNARY_FUNCTION(sigmoid)
NAX_UNARY_FUNCTION(relu)
NAX_UNARY_FUNCTION(gelu)
NAX_UNARY_FUNCTION(gelu_tanh)
NAX_UNARY_FUNCTION(silu)
#undef NAX_UNARY_FUNCTION

/// x where x > 0, alpha * x elsewhere.
template <expression E, class S = double>
auto leaky_relu(E&& e, S alpha = 0.01) {
  using T = typename std::remove_cvref_t<E>::value_type;
  return detail::binary<ops::leaky_relu>(std::forward<E>(e), static_cast<T>(alpha));
}
/// x to the power s (s a scalar or an expression).
template <class A, class B>
requires detail::has_expression<A, B>
auto pow(A&& a, B&& b) { return detail::binary<ops::pow>(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
requires detail::has_expression<A, B>
auto min(A&& a, B&& b) { return detail::binary<ops::min>(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
requires detail::has_expression<A, B>
auto max(A&& a, B&& b) { return detail::binary<ops::max>(std::forward<A>(a), std::forward<B>(b)); }

/// a where the mask holds, b elsewhere; a and b may be scalars (both scalars: their common type).
template <expression M, class A, class B>
auto where(M&& mask, A&& a, B&& b) {
  // An error here means the condition is not a bool expression (a comparison or bool tensor).
  static_assert(std::is_same_v<typename std::remove_cvref_t<M>::value_type, bool>,
                "nax::where: the condition must be a bool expression");
  using T = typename std::conditional_t<
      detail::has_expression<A, B>, detail::binary_value<A, B>,
      std::common_type<std::remove_cvref_t<A>, std::remove_cvref_t<B>>>::type;
  return detail::make_node<ops::where, T>(std::forward<M>(mask), std::forward<A>(a),
                                          std::forward<B>(b));
}

/// e's elements converted to U (a bool converts to 0 or 1).
template <class U, expression E>
auto cast(E&& e) {
  using T = typename std::remove_cvref_t<E>::value_type;
  using X = decltype(detail::as_expression<T>(std::forward<E>(e)));
  return detail::cast_node<U, X>(detail::as_expression<T>(std::forward<E>(e)));
}

}  // namespace nax
