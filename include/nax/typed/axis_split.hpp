#pragma once
// nax::split and nax::merge: one axis as two (model = 64 as heads = 4 × hd = 16) and two as one.
// Splitting an axis in place keeps every element where it is in memory (the outer part strides
// over the inner), so split is a view of a tensor or a view. merge is a view of a tensor whose
// two axes are adjacent and in that order; anything else is gathered into a new tensor, as is
// either op on an expression.

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class Whole, class A, class B>
struct split_one {
  template <class X>
  using fn = boost::mp11::mp_if_c<same_axis_name_v<X, Whole>, axes<A, B>, axes<X>>;
};
template <class A, class B, class To>
struct merge_one {
  template <class X>
  using fn = boost::mp11::mp_if_c<same_axis_name_v<X, A>, axes<To>,
                                  boost::mp11::mp_if_c<same_axis_name_v<X, B>, axes<>, axes<X>>>;
};

/// Axis list L with its axis named like Whole replaced, in place, by A then B: the result of
/// nax::split, typed or traced. check_split<L, Whole, A, B>() raises the errors.
template <class L, class Whole, class A, class B>
using split_axes = boost::mp11::mp_apply<boost::mp11::mp_append,
                                         boost::mp11::mp_transform_q<split_one<Whole, A, B>, L>>;

/// Axis list L with its axes named like A and B replaced by To where A was: the result of
/// nax::merge, typed or traced. check_merge<L, A, B, To>() raises the errors.
template <class L, class A, class B, class To>
using merged_axes = boost::mp11::mp_apply<boost::mp11::mp_append,
                                          boost::mp11::mp_transform_q<merge_one<A, B, To>, L>>;

/// The static checks of Whole = A × B (Whole's extent is the product of its parts').
template <class Whole, class A, class B>
constexpr bool check_product() {
  using error::axis_extent_is_not_a_multiple_of_part;
  using error::axis_extent_is_not_the_product_of_its_parts;
  // An error here means both parts are dynamic: nothing says how to divide the extent.
  static_assert(require < A::is_static || B::is_static,
                error::axis_split_needs_one_static_part < axis_diagnostic_name<A>,
                axis_diagnostic_name < B >>>);
  if constexpr (Whole::is_static && A::is_static && B::is_static) {
    // An error here means Whole's static extent is not A's times B's.
    static_assert(
        require<Whole::static_extent == A::static_extent * B::static_extent,
                axis_extent_is_not_the_product_of_its_parts<
                    axis_diagnostic_name<Whole>, Whole::static_extent, axis_diagnostic_name<A>,
                    A::static_extent, axis_diagnostic_name<B>, B::static_extent>>);
  } else if constexpr (Whole::is_static && (A::is_static || B::is_static)) {
    using part = std::conditional_t<A::is_static, A, B>;
    // An error here means Whole's static extent cannot be divided into parts of that extent.
    static_assert(require<Whole::static_extent % part::static_extent == 0,
                          axis_extent_is_not_a_multiple_of_part<
                              axis_diagnostic_name<Whole>, Whole::static_extent,
                              axis_diagnostic_name<part>, part::static_extent>>);
  }
  return true;
}

template <class L, class Whole, class A, class B>
constexpr bool check_split() {
  static_assert(axis_type<A> && axis_type<B>,
                "nax::split<Whole, A, B>: A and B must be nax::axis types");
  // An error here means x has no axis named like Whole.
  static_assert(
      require<axes_contains_v<L, Whole>, error::axis_not_in_list<axis_diagnostic_name<Whole>>>);
  if constexpr (axes_contains_v<L, Whole>) {
    // An error here means a part is named like another axis of x (or like the other part).
    static_assert(check_unique_axes<split_axes<L, Whole, A, B>>);
    static_assert(check_product<axes_get<L, Whole>, A, B>());
  }
  return true;
}

template <class L, class A, class B, class To>
constexpr bool check_merge() {
  static_assert(axis_type<To>, "nax::merge<A, B, To>: To must be a nax::axis type");
  // An error here means x has no axis named like A, or none named like B.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  static_assert(require<axes_contains_v<L, B>, error::axis_not_in_list<axis_diagnostic_name<B>>>);
  if constexpr (axes_contains_v<L, A> && axes_contains_v<L, B>) {
    // An error here means A and B are one axis, or To is named like another axis of x.
    static_assert(check_unique_axes<axes<A, B>>);
    static_assert(check_unique_axes<merged_axes<L, A, B, To>>);
    using own_a = axes_get<L, A>;
    using own_b = axes_get<L, B>;
    if constexpr (To::is_static && own_a::is_static && own_b::is_static)
      static_assert(check_product<To, own_a, own_b>());
  }
  return true;
}

/// The extents of A and B splitting an extent n of axis Whole (nax::shape_error if they cannot).
template <class Whole, class A, class B>
std::array<std::size_t, 2> split_extents(std::size_t n) {
  if constexpr (A::is_static && B::is_static) {
    if (n != A::static_extent * B::static_extent)
      throw_shape_error("nax::split: axis '", Whole::name, "' has extent ", n, ", not ", A::name,
                        " × ", B::name, " = ", A::static_extent, " × ", B::static_extent);
    return {A::static_extent, B::static_extent};
  } else {
    using part = std::conditional_t<A::is_static, A, B>;
    if (n % part::static_extent != 0)
      throw_shape_error("nax::split: axis '", Whole::name, "' has extent ", n,
                        ", not a multiple of ", part::name, " = ", part::static_extent);
    const std::size_t other = n / part::static_extent;
    if constexpr (A::is_static)
      return {A::static_extent, other};
    else
      return {other, B::static_extent};
  }
}

/// View v with its axis Whole (v's own axis type) as A (outer) × B (inner) with the given
/// extents, whose product is Whole's extent: A strides over B.
template <class Whole, class A, class B, class V>
auto split_view(const V& v, const std::array<std::size_t, 2>& parts) {
  using L = typename V::axes_type;
  constexpr std::size_t k = axes_index_of_v<L, Whole>, n = V::rank;
  std::array<std::size_t, n + 1> ext{};
  std::array<std::ptrdiff_t, n + 1> strides{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i < k ? i : i + 1;
    ext[j] = v.extent(i);
    strides[j] = v.strides()[i];
  }
  ext[k] = parts[0];
  ext[k + 1] = parts[1];
  strides[k] = static_cast<std::ptrdiff_t>(parts[1]) * v.strides()[k];
  strides[k + 1] = v.strides()[k];
  return make_view<split_axes<L, Whole, A, B>>(v.data(), ext, strides);
}

/// The extent of To merging extents a × b (nax::shape_error if To is static with another).
template <class A, class B, class To>
std::size_t merged_extent(std::size_t a, std::size_t b) {
  if constexpr (To::is_static) {
    if (a * b != To::static_extent)
      throw_shape_error("nax::merge: axis '", To::name, "' is static with extent ",
                        To::static_extent, ", not ", A::name, " × ", B::name, " = ", a, " × ", b);
  }
  return a * b;
}

/// View v with its adjacent axes A then B (v's own axis types) as one axis To, where A was. v's
/// layout must allow it: A's stride is B's extent times B's stride (true of a dense tensor).
template <class A, class B, class To, class V>
auto merge_view(const V& v) {
  using L = typename V::axes_type;
  constexpr std::size_t k = axes_index_of_v<L, A>, n = V::rank;
  static_assert(axes_index_of_v<L, B> == k + 1);
  std::array<std::size_t, n - 1> ext{};
  std::array<std::ptrdiff_t, n - 1> strides{};
  for (std::size_t i = 0; i < n; ++i) {
    if (i == k + 1) continue;
    const std::size_t j = i <= k ? i : i - 1;
    ext[j] = v.extent(i);
    strides[j] = v.strides()[i];
  }
  ext[k] = merged_extent<A, B, To>(v.extent(k), v.extent(k + 1));
  strides[k] = v.strides()[k + 1];
  return make_view<merged_axes<L, A, B, To>>(v.data(), ext, strides);
}

/// The extents over axis list L of expression e by name; `own(axis)` gives those e lacks.
template <class L, class E, class F>
auto extents_by_name(const E& e, const F& own) {
  constexpr std::size_t n = boost::mp11::mp_size<L>::value;
  std::array<std::size_t, n> ext{};
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<n>>([&](auto i) {
    using X = boost::mp11::mp_at_c<L, decltype(i)::value>;
    if constexpr (axes_contains_v<typename E::axes_type, X>)
      ext[i] = e.template extent<X>();
    else
      ext[i] = own(X{});
  });
  return ext;
}

}  // namespace detail

/// x with its axis Whole split, in place, into A (outer) then B (inner): element (a, b) of the
/// result is element a × extent(B) + b of Whole. At least one part is static; a static Whole must
/// be the product of static parts (a compile error naming the three axes otherwise), a dynamic
/// one is checked when the extent is known (nax::shape_error). A view of a tensor or a view,
/// else a new tensor.
template <class Whole, class A, class B, class X>
requires expression<X>
auto split(X&& x) {
  using E = detail::expression_of<X>;
  using L = typename E::axes_type;
  static_assert(detail::check_split<L, Whole, A, B>());
  using own = axes_get<L, Whole>;
  if constexpr (detail::is_view_like_v<X&&>) {
    auto v = detail::view_of(std::forward<X>(x));
    return detail::split_view<own, A, B>(
        v, detail::split_extents<own, A, B>(v.template extent<own>()));
  } else {
    using V = typename E::value_type;
    using out_axes = detail::split_axes<L, own, A, B>;
    const E e = detail::as_expression<V>(std::forward<X>(x));
    const std::array<std::size_t, 2> parts =
        detail::split_extents<own, A, B>(e.template extent<own>());
    const auto ext = detail::extents_by_name<out_axes>(
        e, [&]<class P>(P) { return same_axis_name_v<P, A> ? parts[0] : parts[1]; });
    using out_t = tensor_of<V, out_axes>;
    out_t out{typename out_t::extents_type(std::span<const std::size_t, ext.size()>(ext))};
    detail::merge_view<A, B, own>(out.view()) = e;
    return out;
  }
}

/// x with its axes A and B merged into one axis To, where A was: element a × extent(B) + b of To
/// is element (a, b). A static To must be the product of A's and B's extents (checked at compile
/// time when both are static). A view of a tensor in which B directly follows A; otherwise (other
/// layouts, views, expressions) a new tensor.
template <class A, class B, class To, class X>
requires expression<X>
auto merge(X&& x) {
  using E = detail::expression_of<X>;
  using L = typename E::axes_type;
  static_assert(detail::check_merge<L, A, B, To>());
  using own_a = axes_get<L, A>;
  using own_b = axes_get<L, B>;
  if constexpr (detail::is_owning_tensor_v<std::remove_cvref_t<X>> &&
                std::is_lvalue_reference_v<X> &&
                axes_index_of_v<L, B> == axes_index_of_v<L, A> + 1) {
    return detail::merge_view<own_a, own_b, To>(x.view());
  } else {
    using V = typename E::value_type;
    using out_axes = detail::merged_axes<L, own_a, own_b, To>;
    const E e = detail::as_expression<V>(std::forward<X>(x));
    const std::size_t n =
        detail::merged_extent<own_a, own_b, To>(e.template extent<A>(), e.template extent<B>());
    const auto ext = detail::extents_by_name<out_axes>(e, [n](auto) { return n; });
    using out_t = tensor_of<V, out_axes>;
    out_t out{typename out_t::extents_type(std::span<const std::size_t, ext.size()>(ext))};
    // The new tensor seen as A × B: assigning e to it goes by name.
    detail::split_view<To, own_a, own_b>(out.view(),
                                         {e.template extent<A>(), e.template extent<B>()}) = e;
    return out;
  }
}

}  // namespace nax
