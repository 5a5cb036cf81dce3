#pragma once
// The compile-time check that an expression's axes can be assigned to a destination's: every
// axis of the expression is the destination's (the destination's others broadcast it).

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>

namespace nax::detail {

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

}  // namespace nax::detail
