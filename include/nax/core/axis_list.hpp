#pragma once
// Axis lists and their set operations, by name, with Boost.Mp11. Every operation that meets two
// axes of one name checks that they agree (`unify_axes`); a disagreement is a compile error whose
// first line names the axis and both extents (see diagnostics.hpp).

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/utility.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/diagnostics.hpp>

namespace nax {

/// A list of axis types, e.g. `nax::axes<batch, seq, hidden>`. Names must be unique
/// (`check_unique_axes<L>` enforces it where a list is used).
template <class... Axes>
struct axes {};

namespace core_detail {

namespace mp = boost::mp11;

template <class A>
struct named_like {
  template <class B>
  using fn = mp::mp_bool<A::name == B::name>;
};

template <class A>
using axis_diagnostic_name = diagnostic_name<A::fixed_name>;

// The unified axis is always one of the two, the one with the tighter constraint: static beats
// bounded beats dynamic; of two bounds, the smaller.
template <class A, class B>
consteval auto unify_axes_impl() {
  static_assert(A::name == B::name, "unify_axes: the axes must share a name");
  if constexpr (A::is_static && B::is_static) {
    // An error here means two axes of one name have different static extents.
    static_assert(require<A::static_extent == B::static_extent,
                          error::axis_static_extents_differ<axis_diagnostic_name<A>,
                                                            A::static_extent, B::static_extent>>);
    return std::type_identity<A>{};
  } else if constexpr (A::is_static || B::is_static) {
    using S = std::conditional_t<A::is_static, A, B>;
    using D = std::conditional_t<A::is_static, B, A>;
    // An error here means a static extent is larger than the bound of an axis of the same name.
    static_assert(require<S::static_extent <= D::bound,
                          error::axis_static_extent_exceeds_bound<axis_diagnostic_name<A>,
                                                                  S::static_extent, D::bound>>);
    return std::type_identity<S>{};
  } else if constexpr (B::bound < A::bound) {
    return std::type_identity<B>{};
  } else {
    return std::type_identity<A>{};
  }
}

template <class L>
struct in_list;

template <class L, class A>
using find_axis = mp::mp_find_if_q<L, named_like<A>>;

template <class L, class A>
inline constexpr bool contains_axis = find_axis<L, A>::value < mp::mp_size<L>::value;

template <class L, class A>
struct axis_not_found_error {
  static_assert(raise<error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using type = mp::mp_size<L>;
};

template <class L>
struct has_duplicate_in {
  template <class A>
  using fn = mp::mp_bool<(mp::mp_count_if_q<L, named_like<A>>::value > 1)>;
};

template <class L>
consteval bool check_unique_axes_impl() {
  using dup = mp::mp_find_if_q<L, has_duplicate_in<L>>;
  if constexpr (dup::value < mp::mp_size<L>::value) {
    // An error here means an axis list names one axis twice.
    static_assert(
        raise<error::axis_named_twice_in_one_list<axis_diagnostic_name<mp::mp_at<L, dup>>>>);
    return false;
  }
  return true;
}

}  // namespace core_detail

/// The axis of two same-named axes that satisfies both (static beats bounded beats dynamic; two
/// bounds give the smaller). Different static extents, or a static extent above a bound, fail to
/// compile with the axis name and both numbers in the first error line.
template <class A, class B>
using unify_axes = typename decltype(core_detail::unify_axes_impl<A, B>())::type;

/// Fails to compile, naming the axis, if list L names an axis twice; otherwise true.
template <class L>
inline constexpr bool check_unique_axes = core_detail::check_unique_axes_impl<L>();

/// Whether list L has an axis named like A.
template <class L, class A>
inline constexpr bool axes_contains_v = core_detail::contains_axis<L, A>;
template <class L, class A>
using axes_contains = boost::mp11::mp_bool<axes_contains_v<L, A>>;

/// Position of the axis named like A in list L; a compile error naming A if L has none.
template <class L, class A>
using axes_index_of =
    typename boost::mp11::mp_eval_if_c<core_detail::contains_axis<L, A>,
                                       boost::mp11::mp_identity<core_detail::find_axis<L, A>>,
                                       core_detail::axis_not_found_error, L, A>::type;
template <class L, class A>
inline constexpr std::size_t axes_index_of_v = axes_index_of<L, A>::value;

/// The axis type in L named like A (L's own type, which may differ from A in its extent).
template <class L, class A>
using axes_get = boost::mp11::mp_at<L, axes_index_of<L, A>>;

namespace core_detail {

template <class L>
struct in_list {
  template <class A>
  using fn = mp::mp_bool<contains_axis<L, A>>;
};

template <class L, class A>
using unify_with_found = unify_axes<A, mp::mp_at<L, find_axis<L, A>>>;

// Maps an axis of one list to its unification with the same-named axis of L, if L has one.
template <class L>
struct unify_with_match {
  template <class A>
  using fn = mp::mp_eval_if_c<!contains_axis<L, A>, A, unify_with_found, L, A>;
};

}  // namespace core_detail

/// Left axes in order, then the right-only axes in right order. Shared axes are unified
/// (`unify_axes`) and appear where the left list has them.
template <class L, class R>
using axes_union =
    boost::mp11::mp_append<boost::mp11::mp_transform_q<core_detail::unify_with_match<R>, L>,
                           boost::mp11::mp_remove_if_q<R, core_detail::in_list<L>>>;

/// The axes of L whose names R does not have, in L's order. Shared axes must agree.
template <class L, class R>
using axes_difference =
    boost::mp11::mp_remove_if_q<boost::mp11::mp_transform_q<core_detail::unify_with_match<R>, L>,
                                core_detail::in_list<R>>;

/// The axes of L but the one named like A, in L's order.
template <class L, class A>
using axes_without = boost::mp11::mp_remove_if_q<L, core_detail::named_like<A>>;

/// The axes of L whose names R also has, in L's order, unified with R's.
template <class L, class R>
using axes_intersection =
    boost::mp11::mp_copy_if_q<boost::mp11::mp_transform_q<core_detail::unify_with_match<R>, L>,
                              core_detail::in_list<R>>;

/// Whether L and R name the same axes, in any order (R is a permutation of L). Shared axes must
/// agree.
template <class L, class R>
inline constexpr bool axes_same_set_v =
    boost::mp11::mp_size<L>::value ==
    boost::mp11::mp_size<R>::value&& boost::mp11::mp_size<axes_union<L, R>>::value ==
    boost::mp11::mp_size<L>::value;
template <class L, class R>
using axes_same_set = boost::mp11::mp_bool<axes_same_set_v<L, R>>;

namespace core_detail {

// The facts of a list's axes that decide whether two of one name agree, as a constexpr array:
// the outcomes below loop over it in constant evaluation instead of instantiating templates.
struct axis_facts {
  std::string_view name;
  bool is_static;
  std::size_t static_extent, bound;
};
template <class L>
inline constexpr std::array<axis_facts, 0> list_facts{};
template <template <class...> class List, class... A>
inline constexpr std::array<axis_facts, sizeof...(A)> list_facts<List<A...>>{
    axis_facts{A::name, A::is_static, A::static_extent, A::bound}...};

constexpr bool facts_agree(const axis_facts& a, const axis_facts& b) {
  if (a.is_static && b.is_static) return a.static_extent == b.static_extent;
  if (a.is_static) return a.static_extent <= b.bound;
  if (b.is_static) return b.static_extent <= a.bound;
  return true;
}

struct axis_pair {
  std::size_t lhs, rhs;
};
inline constexpr std::size_t no_axis = static_cast<std::size_t>(-1);

/// The positions in L and R of the first two axes of one name that disagree, or no_axis.
template <class L, class R>
consteval axis_pair find_disagreement() {
  constexpr const auto& l = list_facts<L>;
  constexpr const auto& r = list_facts<R>;
  for (std::size_t i = 0; i < l.size(); ++i)
    for (std::size_t j = 0; j < r.size(); ++j)
      if (l[i].name == r[j].name && !facts_agree(l[i], r[j])) return {i, j};
  return {no_axis, no_axis};
}

/// The error of two same-named axes that disagree (the one unify_axes raises).
template <class A, class B>
using disagreement_error = std::conditional_t<
    A::is_static && B::is_static,
    error::axis_static_extents_differ<axis_diagnostic_name<A>, A::static_extent, B::static_extent>,
    error::axis_static_extent_exceeds_bound<axis_diagnostic_name<A>,
                                            (A::is_static ? A::static_extent : B::static_extent),
                                            (A::is_static ? B::bound : A::bound)>>;

template <class L, class R, axis_pair P = find_disagreement<L, R>()>
struct disagreement_at {
  using type = disagreement_error<mp::mp_at_c<L, P.lhs>, mp::mp_at_c<R, P.rhs>>;
};
template <class L, class R>
struct disagreement_at<L, R, axis_pair{no_axis, no_axis}> {
  using type = passed;
};
// A list agrees with itself and with no axes (a scalar's): the common cases skip the search.
template <class L, class R>
struct disagreement_of : disagreement_at<L, R> {};
template <class L>
struct disagreement_of<L, L> {
  using type = passed;
};
template <class L>
requires(!std::is_same_v<L, axes<>>) struct disagreement_of<L, axes<>> {
  using type = passed;
};
template <class R>
requires(!std::is_same_v<R, axes<>>) struct disagreement_of<axes<>, R> {
  using type = passed;
};

}  // namespace core_detail

/// The outcome (diagnostics.hpp) of meeting lists L and R: `passed`, or the error of their first
/// two axes of one name that disagree, as unify_axes would raise it.
template <class L, class R>
using axes_disagreement = typename core_detail::disagreement_of<L, R>::type;

/// The outcome of looking up A in list L: `passed`, or error::axis_not_in_list naming A.
template <class L, class A>
using axis_missing = std::conditional_t<core_detail::contains_axis<L, A>, core_detail::passed,
                                        error::axis_not_in_list<core_detail::axis_diagnostic_name<A>>>;

namespace core_detail {
template <class X>
concept has_axes_type = requires {
  typename std::remove_cvref_t<X>::axes_type;
};
template <class X, class... A>
struct axes_missing_from {
  using outcome = passed;
};
template <has_axes_type X, class... A>
struct axes_missing_from<X, A...> {
  using outcome = first_failure<axis_missing<typename std::remove_cvref_t<X>::axes_type, A>...>;
};
}  // namespace core_detail

/// The outcome of looking up each of A... in the axes of X (an expression, possibly a reference
/// to one): the first A it lacks, as axis_missing. `passed` for a type without axes.
template <class X, class... A>
using axes_missing_from = typename core_detail::axes_missing_from<X, A...>::outcome;

/// The names of a list's axes, in order.
template <class L>
inline constexpr auto axes_names = []<template <class...> class List, class... A>(List<A...>*) {
  return std::array<std::string_view, sizeof...(A)>{A::name...};
}(static_cast<L*>(nullptr));

}  // namespace nax
