#pragma once
// take<A> and take_along<A> on traced values (while nax::jit or nax::value_and_grad traces a
// function). take<A>(data, indices) adds a graph take node (graph/infer/take.hpp): its VJP is a
// scatter_add into zeros of data's shape, so gradients reach an embedding through the rows it
// read, repeated ids adding up; an index outside A's extent throws nax::shape_error when the
// executable runs. take_along<A>(x, indices) is x where iota along A equals the index, zeros
// elsewhere, summed over A: its gradient is the incoming one written into zeros at the index;
// traced, an index outside A's extent picks nothing (0), where the typed op throws.
//
// These overload the typed functions (typed/take.hpp) with the same parameters and a
// constraint that subsumes theirs. This header must be included before such a lambda is
// defined (nax/jit/jit.hpp includes it).

#include <cstdint>
#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>
#include <nax/jit/fused_expression.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/traced_creation.hpp>
#include <nax/jit/traced_ops.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/take.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class V>
constexpr void check_traced_index_type() {
  // An error here means the indices are not i32 or i64, the index types the graph reads.
  static_assert(std::is_same_v<V, std::int32_t> || std::is_same_v<V, std::int64_t>,
                "nax::jit: take's and take_along's indices must be std::int32_t or std::int64_t");
}

template <class A, class X, class Y>
auto traced_take(const X& data, const Y& indices) {
  using L = typename X::axes_type;
  check_traced_index_type<typename Y::value_type>();
  // An error here means the axis is not an axis of the data.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using R = take_axes<L, A, typename Y::axes_type>;
  static_assert(check_unique_axes<R>);  // an error here: the indices share an axis with the data
  const graph::value v = lower(data), i = lower(indices);
  return make_traced<typename X::value_type, R>(
      v.owner().take(v, graph::axis_ref(A::name), i));
}

template <class A, class X, class Y>
auto traced_take_along(const X& x, const Y& indices) {
  using L = typename X::axes_type;
  using T = typename X::value_type;
  using V = typename Y::value_type;
  check_traced_index_type<V>();
  // An error here means the axis is not an axis of x.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using Kept = axes_difference<L, axes<A>>;
  // An error here means the indices' axes are not x's axes but A.
  static_assert(axes_same_set_v<Kept, typename Y::axes_type>,
                "nax::take_along<A>(x, indices): the indices' axes must be x's axes but A");
  const auto picked = nax::sum<A>(nax::where(nax::iota<A, V>(x) == indices, x, T(0)));
  return make_traced<T, Kept>(lower(picked));
}

}  // namespace detail

/// take<A> on traced operands: a take node (see the file comment).
template <axis_type A, class X, class Y>
requires(expression<X>&& expression<Y>&& detail::is_traced_v<X>&& detail::is_traced_v<Y>) auto take(
    const X& data, const Y& indices) {
  return detail::traced_take<A>(data, indices);
}

/// take_along<A> on traced operands: where, iota and a sum over A (see the file comment).
template <axis_type A, class X, class Y>
requires(expression<X>&& expression<Y>&& detail::is_traced_v<X>&& detail::is_traced_v<
         Y>) auto take_along(const X& x, const Y& indices) {
  return detail::traced_take_along<A>(x, indices);
}

}  // namespace nax
