#pragma once
// nax::one_hot<A, T = float>(indices, n): over indices' axes and then A (extent n), T(1) where
// the position along A is the index, else T(0). An index outside [0, n) gives a row of zeros
// (no error: padding ids such as -1 encode to nothing). For a static A, n may be left out; given,
// it must be A's extent (nax::shape_error naming the axis otherwise).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// A static axis (a concept, so that the traced one_hot's constraint subsumes the typed one's).
template <class A>
concept static_axis = axis_type<A> && A::is_static;

template <class X, class A>
using one_hot_axes = boost::mp11::mp_push_back<typename X::axes_type, A>;

template <class A, class T, class X>
auto one_hot_impl(const X& indices, std::size_t n) {
  using V = typename X::value_type;
  // An error here means the indices are not integers.
  static_assert(std::is_integral_v<V> && !std::is_same_v<V, bool>,
                "nax::one_hot: the indices must be integers");
  static_assert(check_unique_axes<one_hot_axes<X, A>>);
  const auto idx = nax::eval(indices);
  auto out = [&]<class... K>(axes<K...>) {
    std::array<std::size_t, sizeof...(K) + 1> values{idx.template extent<K>()..., n};
    return tensor<T, K..., A>(nax::extents<K..., A>(
        std::span<const std::size_t, sizeof...(K) + 1>(values.data(), values.size())));
  }(typename X::axes_type{});
  out.fill(T(0));
  for (std::size_t r = 0; r < idx.size(); ++r) {
    const V i = idx.data()[r];
    if constexpr (std::is_signed_v<V>)
      if (i < 0) continue;
    if (static_cast<std::make_unsigned_t<V>>(i) < n)
      out.data()[r * n + static_cast<std::size_t>(i)] = T(1);
  }
  return out;
}

}  // namespace detail

/// One-hot of integer indices along the new axis A of extent n (see the file comment).
template <axis_type A, class T = float, class X>
requires expression<X>
auto one_hot(const X& indices, std::size_t n) { return detail::one_hot_impl<A, T>(indices, n); }

/// The same for a static A: its extent.
template <detail::static_axis A, class T = float, class X>
requires expression<X>
auto one_hot(const X& indices) { return detail::one_hot_impl<A, T>(indices, A::static_extent); }

}  // namespace nax
