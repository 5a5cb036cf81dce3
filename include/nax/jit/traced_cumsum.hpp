#pragma once
// cumsum<A> on a traced value (while nax::jit or nax::value_and_grad traces a function): one
// graph cumsum node (graph/infer/cumsum.hpp), whose step runs the typed op's loop
// (kernels/cumsum.hpp), so the traced function gives the typed op's bits; its VJP is the cumsum
// of the cotangent in the other direction (graph/vjp/cumsum.hpp).
//
// This overloads the typed function (typed/cumsum.hpp) with the same parameters and a
// constraint that subsumes its own. This header must be included before such a lambda is
// defined (nax/jit/jit.hpp includes it).

#include <cstdint>
#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/isa.hpp>
#include <nax/graph/builder.hpp>
#include <nax/jit/traced.hpp>
#include <nax/ops/cumsum.hpp>
#include <nax/typed/cumsum.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class A, class X>
auto traced_cumsum(const X& x, cumsum_options options) {
  using V = typename X::value_type;
  static_assert(check_cumsum<A, X>());
  // An error here means the element type is one the graph has no cumsum for.
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double> ||
                    std::is_same_v<V, std::int32_t> || std::is_same_v<V, std::int64_t>,
                "nax::jit: cumsum's elements must be float, double, std::int32_t or std::int64_t");
  const graph::value v = lower(x);
  return make_traced<V, typename X::axes_type>(
      v.owner().cumsum(v, graph::axis_ref(A::name), options));
}

}  // namespace detail

/// cumsum<A> on a traced operand: a cumsum node (see the file comment).
template <axis_type A, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto cumsum(const X& x,
                                                             cumsum_options options = {}) {
  return detail::traced_cumsum<A>(x, options);
}

}  // namespace nax::NAX_ISA
