#pragma once
// nax::argmax<A>(x) and nax::argmin<A>(x): the position (std::int64_t) of the first largest
// (smallest) element along the named axis A, over x's other axes in x's order. x may be an
// expression (evaluated once). A NaN wins over every number: a row with a NaN gives the first
// NaN's position (as numpy's argmax and argmin). An empty axis throws nax::shape_error naming it.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <nax/core/around_axis.hpp>
#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/arg_reduce.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// What argmax<A> and argmin<A> ask of an expression X, typed or traced.
template <class A, class X>
constexpr bool check_arg_reduce() {
  // An error here means the axis is not an axis of the expression.
  static_assert(require<axes_contains_v<typename X::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  static_assert(!std::is_same_v<typename X::value_type, bool>,
                "nax: argmax and argmin of bools: cast to int first");
  return true;
}

template <bool Max, class A, class X>
auto arg_reduce(const X& x, std::string_view op) {
  using L = typename X::axes_type;
  static_assert(check_arg_reduce<A, X>());
  using Kept = axes_difference<L, axes<A>>;
  const auto dense = nax::eval(x);  // x's axes, x's order
  const auto [outer, n, inner] = nax::detail::split_around_tensor(dense, axes_index_of_v<L, A>);
  if (n == 0) throw_shape_error(op, ": axis '", A::name, "' is empty");
  auto out = [&]<class... K>(axes<K...>) {
    return tensor_with_extents_of<std::int64_t, K...>(dense);
  }(Kept{});
  kernels::arg_reduce<Max>(dense.data(), out.data(), outer, n, inner);
  return out;
}

}  // namespace detail

/// The position of the first largest element along A (see the file comment).
template <axis_type A, class X>
requires expression<X>
auto argmax(const X& x) { return detail::arg_reduce<true, A>(x, "nax::argmax"); }

/// The position of the first smallest element along A.
template <axis_type A, class X>
requires expression<X>
auto argmin(const X& x) { return detail::arg_reduce<false, A>(x, "nax::argmin"); }

}  // namespace nax
