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

namespace nax::detail {

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

}  // namespace nax::detail
