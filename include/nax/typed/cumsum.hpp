#pragma once
// nax::cumsum<A>(x, options): the cumulative sum of x along the named axis A (numpy.cumsum with
// the axis named; ONNX CumSum with its `exclusive` and `reverse` attributes, nax::cumsum_options
// in ops/cumsum.hpp). The result has x's axes, extents and element type; the sums are taken in
// order along A (kernels/cumsum.hpp, the loop the runtime's cumsum step runs, so nax::jit gives
// the same bits), integers wrapping around on overflow as NumPy's do. x may be an expression
// (evaluated once); its element type is a number (not bool).

#include <type_traits>

#include <nax/core/around_axis.hpp>
#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/kernels/cumsum.hpp>
#include <nax/ops/cumsum.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class A, class X>
constexpr bool check_cumsum() {
  using V = typename X::value_type;
  // An error here means the axis is not an axis of the expression.
  static_assert(require<axes_contains_v<typename X::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  // An error here means the elements are bools, which have no sum.
  static_assert(!std::is_same_v<V, bool>, "nax::cumsum of bools: cast to an integer type first");
  return true;
}

}  // namespace detail

/// The cumulative sum of x along A (see the file comment).
template <axis_type A, class X>
requires expression<X>
auto cumsum(const X& x, cumsum_options options = {}) {
  static_assert(detail::check_cumsum<A, X>());
  using L = typename X::axes_type;
  const auto dense = nax::eval(x);  // x's axes, x's order
  auto out = [&]<class... K>(axes<K...>) {
    return detail::tensor_with_extents_of<typename X::value_type, K...>(dense);
  }(L{});
  const auto around = nax::detail::split_around_tensor(dense, axes_index_of_v<L, A>);
  kernels::cumsum(dense.data(), out.data(), around.outer, around.n, around.inner, options);
  return out;
}

}  // namespace nax::NAX_ISA
