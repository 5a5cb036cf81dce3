#pragma once
// Compile-time errors that read as sentences. Each type in nax::error is declared and never
// defined; nax raises a static mistake by naming one, so the compiler's first error line spells
// the problem, the axis and the extents, e.g. with g++ 12:
//   error: invalid application of 'sizeof' to incomplete type
//   'nax::error::axis_static_extents_differ<nax::error::name<nax::fixed_string<6>{"hidden"}>, 768,
//   512>'
// clang 14 says "implicit instantiation of undefined template" and prints class-type template
// arguments as numbers, so there the name is spelled as a list of characters instead:
//   'nax::error::axis_static_extents_differ<nax::error::name<'h', 'i', 'd', 'd', 'e', 'n'>, 768,
//   512>'

#include <cstddef>
#include <type_traits>
#include <utility>

#include <nax/core/fixed_string.hpp>

namespace nax::error {

#if defined(__clang__)
template <char... Chars>
struct name {};
#else
template <fixed_string Text>
struct name {};
#endif

/// Two axes of one name met in one operation with different static extents.
template <class Axis, std::size_t Lhs, std::size_t Rhs>
struct axis_static_extents_differ;
/// A static extent met a bounded axis of the same name whose bound is smaller.
template <class Axis, std::size_t Extent, std::size_t Bound>
struct axis_static_extent_exceeds_bound;
/// An axis list names the same axis twice.
template <class Axis>
struct axis_named_twice_in_one_list;
/// An axis was asked for in a list that does not have it.
template <class Axis>
struct axis_not_in_list;
/// A dynamic axis needs its extent and none was given.
template <class Axis>
struct missing_extent_of_dynamic_axis;
/// An extent known at compile time differs from the axis's static extent.
template <class Axis, std::size_t Static, std::size_t Given>
struct static_axis_given_other_extent;
/// An expression has an axis that the tensor it is assigned to lacks.
template <class Axis>
struct expression_axis_missing_from_destination;
/// A tensor is assigned an expression that lacks one of its axes.
template <class Axis>
struct destination_axis_missing_from_expression;
/// An extent value that is not a positive integer, nax::dynamic or nax::upto(N > 0).
template <class Axis>
struct axis_extent_must_be_positive_integer_or_dynamic_or_upto;
/// An elementwise op met operands of different element types; convert one with nax::cast<U>(e)
/// (scalars convert by themselves). Op is the op (nax::ops::add for +), then the element types.
template <class Op, class... ElementTypes>
struct operands_have_different_element_types_use_nax_cast;
/// A floating-point op (exp, tanh, ...) met elements of another type; convert them with
/// nax::cast<float>(e).
template <class Op, class... ElementTypes>
struct op_needs_floating_point_elements;
/// A list of axis names, as errors show one.
template <class... Names>
struct axis_names {};
/// Argument `Index` (from 0) of a nax::jit function is not a nax::tensor or nax::tensor_view.
template <std::size_t Index>
struct jit_argument_is_not_a_tensor;
/// Argument `Index` of a nax::jit function has element type Given, its nax::input Input.
template <std::size_t Index, class Input, class Given>
struct jit_argument_element_type_differs_from_input;
/// Argument `Index` of a nax::jit function has other axis names than its nax::input (in any
/// order): the input's, then the argument's.
template <std::size_t Index, class InputAxes, class ArgumentAxes>
struct jit_argument_axes_differ_from_input;
/// An axis of argument `Index` of a nax::jit function has its input's name, another extent.
template <std::size_t Index, class Axis>
struct jit_argument_axis_extent_differs_from_input;
/// nax::split / nax::merge: axis Whole's static extent is not its parts' product A × B.
template <class Whole, std::size_t WholeExtent, class A, std::size_t AExtent, class B,
          std::size_t BExtent>
struct axis_extent_is_not_the_product_of_its_parts;
/// nax::split: axis Whole's static extent cannot be split into parts of Part's static extent.
template <class Whole, std::size_t WholeExtent, class Part, std::size_t PartExtent>
struct axis_extent_is_not_a_multiple_of_part;
/// nax::split into two dynamic parts: one must be static for the other's extent to follow.
template <class A, class B>
struct axis_split_needs_one_static_part;

}  // namespace nax::error

namespace nax::core_detail {

#if defined(__clang__)
template <fixed_string Text, class Indices = std::make_index_sequence<Text.size()>>
struct spell_name;
template <fixed_string Text, std::size_t... I>
struct spell_name<Text, std::index_sequence<I...>> {
  using type = error::name<Text.data[I]...>;
};
template <fixed_string Text>
using diagnostic_name = typename spell_name<Text>::type;
#else
template <fixed_string Text>
using diagnostic_name = error::name<Text>;
#endif

/// `static_assert(raise<E>)`: E is incomplete, so this is an error whose first line names E.
template <class Error>
inline constexpr bool raise = sizeof(Error) == 0;

/// `static_assert(require<Ok, E>)` raises E only when Ok is false (E is never instantiated
/// otherwise, which `Ok || raise<E>` would not guarantee).
template <bool Ok, class Error>
inline constexpr bool require = true;
template <class Error>
inline constexpr bool require<false, Error> = raise<Error>;

// Errors at the user's line. A `static_assert` fails where it is written, inside nax, after the
// backtrace of instantiations (g++) or before it (clang); the user's line comes ~10-40 lines later.
// So a public function (nax::dot, the elementwise ops, the reductions, softmax, operator=)
// computes the outcome of its static checks as a type, in a defaulted template parameter:
// `passed`, or the nax::error type of the first mistake. A twin of the function, with the same
// template parameters and its constraints plus `fails<Outcome>`, is declared and never defined,
// its return type the error:
//
//     template <class A, class X, class Outcome = axes_missing_from<X, A>>
//     requires expression<X> auto softmax(X&& x) { ... }
//     template <class A, class X, class Outcome = axes_missing_from<X, A>>
//     requires(expression<X> && core_detail::fails<Outcome>) Outcome softmax(X&& x);
//
// On a mistake the twin's constraints subsume the function's (their parameter lists must be the
// same for that, and a shared constraint must be a concept), so overload resolution picks it, and
// a call of a function whose return type is incomplete is an error at the call. g++ 12 says
// "user.cpp:12:26: error: invalid use of incomplete type 'struct nax::error::...'" on its second
// line (the first is "In function ..."), clang 14 "user.cpp:12:10: error: implicit instantiation
// of undefined template 'nax::error::...'" on its first: once, without a backtrace. The outcome
// is computed only for operands it applies to (a default template argument is substituted before
// constraints are checked, for every call of the name in nax), and with constant evaluation over
// arrays of axis facts rather than instantiations (axis_list.hpp), to keep compile time.

/// The outcome of a check that found no mistake.
struct passed {};

/// Whether a check's outcome is a mistake (an nax::error type).
template <class Outcome>
concept fails = !std::is_same_v<Outcome, passed>;

template <class... Outcomes>
struct first_failure_of {
  using type = passed;
};
template <class... Rest>
struct first_failure_of<passed, Rest...> : first_failure_of<Rest...> {};
template <class Error, class... Rest>
struct first_failure_of<Error, Rest...> {
  using type = Error;
};
/// The first outcome that is a mistake, or `passed`.
template <class... Outcomes>
using first_failure = typename first_failure_of<Outcomes...>::type;

}  // namespace nax::core_detail
