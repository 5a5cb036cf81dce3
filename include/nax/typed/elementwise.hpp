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

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/ops/list.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {
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

template <class X>
struct operand_axes_of {
  using type = axes<>;
};
template <class X>
requires is_expression_v<X>
struct operand_axes_of<X> {
  using type = typename std::remove_cvref_t<X>::axes_type;
};

/// The element type operand I (of type X) of Op gives: its own, or for a scalar the one it
/// converts to (T, or bool for a select op's mask).
template <class Op, class T, std::size_t I, class X>
struct operand_element_of {
  using type = operand_value_t<Op, T, I>;
};
template <class Op, class T, std::size_t I, class X>
requires is_expression_v<X>
struct operand_element_of<Op, T, I, X> {
  using type = typename std::remove_cvref_t<X>::value_type;
};

/// The outcome of the dtype rule of Op over operand element types Ts: the mistakes that have an
/// nax::error type (the others are static_asserts of op_node).
template <class Op, class... Ts>
using op_dtype_outcome = std::conditional_t<
    op_dtypes<Op, Ts...>.error == ops::dtype_error::mixed,
    error::operands_have_different_element_types_use_nax_cast<Op, Ts...>,
    std::conditional_t<op_dtypes<Op, Ts...>.error == ops::dtype_error::not_floating,
                       error::op_needs_floating_point_elements<Op, Ts...>, passed>>;

template <class Op, class T, class Indices, class... X>
struct op_outcome_of;
template <class Op, class T, class X0>
struct op_outcome_of<Op, T, std::index_sequence<0>, X0> {
  using type = op_dtype_outcome<Op, typename operand_element_of<Op, T, 0, X0>::type>;
};
template <class Op, class T, class X0, class X1>
struct op_outcome_of<Op, T, std::index_sequence<0, 1>, X0, X1> {
  using type = first_failure<
      axes_disagreement<typename operand_axes_of<X0>::type, typename operand_axes_of<X1>::type>,
      op_dtype_outcome<Op, typename operand_element_of<Op, T, 0, X0>::type,
                       typename operand_element_of<Op, T, 1, X1>::type>>;
};
template <class Op, class T, class X0, class X1, class X2>
struct op_outcome_of<Op, T, std::index_sequence<0, 1, 2>, X0, X1, X2> {
  using L0 = typename operand_axes_of<X0>::type;
  using L1 = typename operand_axes_of<X1>::type;
  using L2 = typename operand_axes_of<X2>::type;
  using type =
      first_failure<axes_disagreement<L0, L1>, axes_disagreement<L0, L2>, axes_disagreement<L1, L2>,
                    op_dtype_outcome<Op, typename operand_element_of<Op, T, 0, X0>::type,
                                     typename operand_element_of<Op, T, 1, X1>::type,
                                     typename operand_element_of<Op, T, 2, X2>::type>>;
};

/// The outcome (core/diagnostics.hpp) of applying Op to operands X...: the first two
/// same-named axes of two operands that disagree, then the element types the op does not take.
template <class Op, class... X>
using op_outcome = typename op_outcome_of<Op, scalar_target_t<Op, X...>,
                                          std::index_sequence_for<X...>, X...>::type;

// The outcome computed only for operands of which one is an expression: a default template
// argument is substituted before the constraints are checked, for any call of the name in nax.
template <bool HasExpression, class Op, class... X>
struct checked_op {
  using outcome = passed;
};
template <class Op, class... X>
struct checked_op<true, Op, X...> {
  using outcome = op_outcome<Op, X...>;
};

}  // namespace detail

// Each function and operator below has a twin of the same signature that is declared and never
// defined, selected when op_outcome finds a mistake; it returns the nax::error type, so the call
// is the compile error, at the caller's line (core/diagnostics.hpp).

// --- one function per op of the list --------------------------------------------------------
#define NAX_TYPED_FUNCTION_1(op)                                                                 \
  template <expression E, class Outcome = typename detail::checked_op<detail::has_expression<E>, \
                                                                      ops::op, E>::outcome>      \
  auto op(E&& e) {                                                                               \
    return detail::apply_op<ops::op>(std::forward<E>(e));                                        \
  }                                                                                              \
  template <expression E, class Outcome = typename detail::checked_op<detail::has_expression<E>, \
                                                                      ops::op, E>::outcome>      \
  requires detail::fails<Outcome> Outcome op(E&& e);
#define NAX_TYPED_FUNCTION_2(op)                                                                   \
  template <class A, class B,                                                                      \
            class Outcome =                                                                        \
                typename detail::checked_op<detail::has_expression<A, B>, ops::op, A, B>::outcome> \
  requires detail::has_expression<A, B>                                                            \
  auto op(A&& a, B&& b) {                                                                          \
    return detail::apply_op<ops::op>(std::forward<A>(a), std::forward<B>(b));                      \
  }                                                                                                \
  template <class A, class B,                                                                      \
            class Outcome =                                                                        \
                typename detail::checked_op<detail::has_expression<A, B>, ops::op, A, B>::outcome> \
  requires(detail::has_expression<A, B> && detail::fails<Outcome>) Outcome op(A&& a, B&& b);
#define NAX_TYPED_FUNCTION_3(op)                                                                  \
  template <class A, class B, class C,                                                            \
            class Outcome = typename detail::checked_op<detail::has_expression<A, B, C>, ops::op, \
                                                        A, B, C>::outcome>                        \
  requires detail::has_expression<A, B, C>                                                        \
  auto op(A&& a, B&& b, C&& c) {                                                                  \
    return detail::apply_op<ops::op>(std::forward<A>(a), std::forward<B>(b), std::forward<C>(c)); \
  }                                                                                               \
  template <class A, class B, class C,                                                            \
            class Outcome = typename detail::checked_op<detail::has_expression<A, B, C>, ops::op, \
                                                        A, B, C>::outcome>                        \
  requires(detail::has_expression<A, B, C> && detail::fails<Outcome>) Outcome op(A&& a, B&& b,    \
                                                                                 C&& c);
#define NAX_TYPED_FUNCTION(op, arity, operands, result) NAX_TYPED_FUNCTION_##arity(op)
NAX_ELEMENTWISE_OPS(NAX_TYPED_FUNCTION)
#undef NAX_TYPED_FUNCTION
#undef NAX_TYPED_FUNCTION_3
#undef NAX_TYPED_FUNCTION_2
#undef NAX_TYPED_FUNCTION_1

// --- operators: + - * / with tensors, expressions and scalars; unary -; ! -------------------
// --- comparisons give bool expressions ---------------------------------------------------------
#define NAX_TYPED_OPERATOR_1(symbol, op)                                                         \
  template <expression E, class Outcome = typename detail::checked_op<detail::has_expression<E>, \
                                                                      ops::op, E>::outcome>      \
  auto operator symbol(E&& e) {                                                                  \
    return detail::apply_op<ops::op>(std::forward<E>(e));                                        \
  }                                                                                              \
  template <expression E, class Outcome = typename detail::checked_op<detail::has_expression<E>, \
                                                                      ops::op, E>::outcome>      \
  requires detail::fails<Outcome> Outcome operator symbol(E&& e);
#define NAX_TYPED_OPERATOR_2(symbol, op)                                                           \
  template <class A, class B,                                                                      \
            class Outcome =                                                                        \
                typename detail::checked_op<detail::has_expression<A, B>, ops::op, A, B>::outcome> \
  requires detail::has_expression<A, B>                                                            \
  auto operator symbol(A&& a, B&& b) {                                                             \
    return detail::apply_op<ops::op>(std::forward<A>(a), std::forward<B>(b));                      \
  }                                                                                                \
  template <class A, class B,                                                                      \
            class Outcome =                                                                        \
                typename detail::checked_op<detail::has_expression<A, B>, ops::op, A, B>::outcome> \
  requires(detail::has_expression<A, B> && detail::fails<Outcome>) Outcome operator symbol(A&& a,  \
                                                                                           B&& b);
NAX_TYPED_OPERATOR_2(+, add)
NAX_TYPED_OPERATOR_2(-, sub)
NAX_TYPED_OPERATOR_2(*, mul)
NAX_TYPED_OPERATOR_2(/, div)
NAX_TYPED_OPERATOR_1(-, neg)
NAX_TYPED_OPERATOR_1(!, logical_not)
NAX_TYPED_OPERATOR_2(==, equal)
NAX_TYPED_OPERATOR_2(!=, not_equal)
NAX_TYPED_OPERATOR_2(<, less)
NAX_TYPED_OPERATOR_2(<=, less_equal)
NAX_TYPED_OPERATOR_2(>, greater)
NAX_TYPED_OPERATOR_2(>=, greater_equal)
#undef NAX_TYPED_OPERATOR_2
#undef NAX_TYPED_OPERATOR_1

/// e's elements converted to U (a bool converts to 0 or 1).
template <class U, expression E>
auto cast(E&& e) {
  using T = typename std::remove_cvref_t<E>::value_type;
  using X = decltype(detail::as_expression<T>(std::forward<E>(e)));
  return detail::cast_node<U, X>(detail::as_expression<T>(std::forward<E>(e)));
}

}  // namespace nax
