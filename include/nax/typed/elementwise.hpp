#pragma once
// The elementwise surface: functions and operators that build lazy expression nodes over
// tensors, views, expressions and scalars, broadcasting by axis name; nothing is computed until
// the expression is assigned.
//
// The functions come from the op list (NAX_ELEMENTWISE_OPS, ops/list.hpp), one per op, by its
// arity: `nax::tanh(x)`, `nax::pow(a, b)`, `nax::where(mask, a, b)`. Any operand may be a
// scalar as long as one is an expression; a scalar converts to the element type of the op's
// expression operands. A new op in the list is a new function here, with no line of its own.
// The operators (+ - * / unary - ! and comparisons) are syntax over the same ops.

#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/ops/elementwise.hpp>
#include <nax/ops/list.hpp>
#include <nax/typed/expression.hpp>

namespace nax {
namespace detail {

/// At least one operand is an expression (the others may be scalars).
template <class... X>
concept has_expression = (is_expression_v<X> || ...);

template <class X>
using is_expression_q = boost::mp11::mp_bool<is_expression_v<X>>;

/// The element type a scalar operand of Op converts to: that of Op's first expression operand
/// (a select op's mask aside), or, if all of them are scalars, their common type.
template <class Op, class... X>
auto scalar_target() {
  using values =
      boost::mp11::mp_drop_c<boost::mp11::mp_list<std::remove_cvref_t<X>...>, Op::selects ? 1 : 0>;
  using expressions = boost::mp11::mp_copy_if<values, is_expression_q>;
  if constexpr (boost::mp11::mp_empty<expressions>::value)
    return std::type_identity<boost::mp11::mp_apply<std::common_type_t, values>>{};
  else
    return std::type_identity<typename boost::mp11::mp_front<expressions>::value_type>{};
}
template <class Op, class... X>
using scalar_target_t = typename decltype(scalar_target<Op, X...>())::type;

/// The element type operand I of Op takes as a scalar: bool for a select op's mask, else T.
template <class Op, class T, std::size_t I>
using operand_value_t = std::conditional_t<Op::selects && I == 0, bool, T>;

template <class Op, class T, std::size_t... I, class... X>
auto make_op_node(std::index_sequence<I...>, X&&... x) {
  return op_node<Op, decltype(as_expression<operand_value_t<Op, T, I>>(std::forward<X>(x)))...>(
      as_expression<operand_value_t<Op, T, I>>(std::forward<X>(x))...);
}

/// The node of Op over operands x..., each made an expression (operand.hpp).
template <class Op, class... X>
auto apply_op(X&&... x) {
  return make_op_node<Op, scalar_target_t<Op, X...>>(std::index_sequence_for<X...>{},
                                                     std::forward<X>(x)...);
}

}  // namespace detail

// --- one function per op of the list --------------------------------------------------------
#define NAX_TYPED_FUNCTION_1(op)                          \
  template <expression E>                                 \
  auto op(E&& e) {                                        \
    return detail::apply_op<ops::op>(std::forward<E>(e)); \
  }
#define NAX_TYPED_FUNCTION_2(op)                                              \
  template <class A, class B>                                                 \
  requires detail::has_expression<A, B>                                       \
  auto op(A&& a, B&& b) {                                                     \
    return detail::apply_op<ops::op>(std::forward<A>(a), std::forward<B>(b)); \
  }
#define NAX_TYPED_FUNCTION_3(op)                                                                  \
  template <class A, class B, class C>                                                            \
  requires detail::has_expression<A, B, C>                                                        \
  auto op(A&& a, B&& b, C&& c) {                                                                  \
    return detail::apply_op<ops::op>(std::forward<A>(a), std::forward<B>(b), std::forward<C>(c)); \
  }
#define NAX_TYPED_FUNCTION(op, arity, operands, result) NAX_TYPED_FUNCTION_##arity(op)
NAX_ELEMENTWISE_OPS(NAX_TYPED_FUNCTION)
#undef NAX_TYPED_FUNCTION
#undef NAX_TYPED_FUNCTION_3
#undef NAX_TYPED_FUNCTION_2
#undef NAX_TYPED_FUNCTION_1

// --- operators: + - * / with tensors, expressions and scalars; unary -; ! -------------------
template <class A, class B>
requires detail::has_expression<A, B>
auto operator+(A&& a, B&& b) {
  return detail::apply_op<ops::add>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator-(A&& a, B&& b) {
  return detail::apply_op<ops::sub>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator*(A&& a, B&& b) {
  return detail::apply_op<ops::mul>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator/(A&& a, B&& b) {
  return detail::apply_op<ops::div>(std::forward<A>(a), std::forward<B>(b));
}
template <expression E>
auto operator-(E&& e) {
  return detail::apply_op<ops::neg>(std::forward<E>(e));
}
template <expression E>
auto operator!(E&& e) {
  return detail::apply_op<ops::logical_not>(std::forward<E>(e));
}

// --- comparisons give bool expressions ---------------------------------------------------------
template <class A, class B>
requires detail::has_expression<A, B>
auto operator==(A&& a, B&& b) {
  return detail::apply_op<ops::equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator!=(A&& a, B&& b) {
  return detail::apply_op<ops::not_equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator<(A&& a, B&& b) {
  return detail::apply_op<ops::less>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator<=(A&& a, B&& b) {
  return detail::apply_op<ops::less_equal>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator>(A&& a, B&& b) {
  return detail::apply_op<ops::greater>(std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires detail::has_expression<A, B>
auto operator>=(A&& a, B&& b) {
  return detail::apply_op<ops::greater_equal>(std::forward<A>(a), std::forward<B>(b));
}

/// e's elements converted to U (a bool converts to 0 or 1).
template <class U, expression E>
auto cast(E&& e) {
  using T = typename std::remove_cvref_t<E>::value_type;
  using X = decltype(detail::as_expression<T>(std::forward<E>(e)));
  return detail::cast_node<U, X>(detail::as_expression<T>(std::forward<E>(e)));
}

}  // namespace nax
