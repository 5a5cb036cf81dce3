#pragma once
// The compile-time check that an expression's axes can be assigned to a destination's: every
// axis of the expression is the destination's (the destination's others broadcast it).

#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/expression/base.hpp>

namespace nax::NAX_ISA::detail {

template <class In, class Of>
struct missing_axis {
  template <class A>
  using fn = boost::mp11::mp_bool<!axes_contains_v<Of, A>>;
};

/// Compile-time check that expression axes E can be assigned to destination axes D: every axis
/// of E is in D (D's other axes broadcast E) and, when `Exact`, every axis of D is in E too.
/// Names the first axis that is not.
template <class D, class E, bool Exact>
consteval bool check_assignable() {
  using extra = boost::mp11::mp_find_if_q<E, missing_axis<E, D>>;
  using lacking = boost::mp11::mp_find_if_q<D, missing_axis<D, E>>;
  if constexpr (extra::value < boost::mp11::mp_size<E>::value) {
    // An error here means the expression has an axis the destination does not.
    static_assert(raise<error::expression_axis_missing_from_destination<
                      axis_diagnostic_name<boost::mp11::mp_at<E, extra>>>>);
    return false;
  } else if constexpr (Exact && lacking::value < boost::mp11::mp_size<D>::value) {
    // An error here means the destination has an axis the expression does not.
    static_assert(raise<error::destination_axis_missing_from_expression<
                      axis_diagnostic_name<boost::mp11::mp_at<D, lacking>>>>);
    return false;
  } else {
    // Shared axes must agree (different static extents fail here, naming the axis).
    return boost::mp11::mp_size<axes_union<D, E>>::value == boost::mp11::mp_size<D>::value;
  }
}

/// The position of the first axis of In whose name Of lacks, or no_axis.
template <class In, class Of>
consteval std::size_t first_axis_missing() {
  constexpr const auto& in = list_facts<In>;
  constexpr const auto& of = list_facts<Of>;
  for (std::size_t i = 0; i < in.size(); ++i) {
    bool found = false;
    for (const axis_facts& f : of) found = found || f.name == in[i].name;
    if (!found) return i;
  }
  return no_axis;
}

/// The outcome (core/diagnostics.hpp) of check_assignable<D, E, Exact>: the first axis of E
/// that D lacks, then (when Exact) the first axis of D that E lacks, then the first shared axis
/// whose extents disagree.
template <class D, class E, bool Exact>
consteval auto assign_outcome_impl() {
  constexpr std::size_t extra = first_axis_missing<E, D>();
  constexpr std::size_t lacking = Exact ? first_axis_missing<D, E>() : no_axis;
  if constexpr (extra != no_axis)
    return std::type_identity<error::expression_axis_missing_from_destination<
        axis_diagnostic_name<boost::mp11::mp_at_c<E, extra>>>>{};
  else if constexpr (lacking != no_axis)
    return std::type_identity<error::destination_axis_missing_from_expression<
        axis_diagnostic_name<boost::mp11::mp_at_c<D, lacking>>>>{};
  else
    return std::type_identity<axes_disagreement<D, E>>{};
}
template <class D, class E, bool Exact>
using assign_outcome = typename decltype(assign_outcome_impl<D, E, Exact>())::type;

/// The outcome of assigning a value of type X to a destination over axes D: assign_outcome for
/// an expression, `passed` for a scalar (broadcast).
template <class D, class X>
struct checked_assign {
  using outcome = passed;
};
template <class D, class X>
requires is_expression_v<X>
struct checked_assign<D, X> {
  using outcome = assign_outcome<D, typename std::remove_cvref_t<X>::axes_type, false>;
};

/// Whether X is not (a reference to) T. A concept, so that a twin's constraints subsume it.
template <class X, class T>
concept not_same_as = !std::is_same_v<std::remove_cvref_t<X>, T>;

/// Whether elements of type T can be written (T is not const). A concept, as not_same_as.
template <class T>
concept writable = !std::is_const_v<T>;

}  // namespace nax::detail
