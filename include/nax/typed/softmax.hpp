#pragma once
// softmax<A>(x) and log_softmax<A>(x): numerically stable (the row's max is subtracted before
// exp), threaded over the other axes, with the input expression fused into the row loop.
//
// A row that fits in L1/L2 (<= 32 KiB) is swept three times, the second and third from cache:
// max (and whether the whole row is within exp's fast range), then exp(x - max) into a buffer and
// summed, then scaled by 1/sum into the output; one exp per element and one pass over memory each
// way. An output larger than the core's share of the last-level cache is streamed one row behind
// (kernels/row_io.hpp, row_stream): non-temporal stores spread over the next row's first sweep. A
// longer row is read twice from memory: an online pass keeps a running max and a sum rescaled
// whenever the max grows, then the output is written.

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/kernels/softmax_row.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/rows.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// What softmax<A> and log_softmax<A> ask of an expression E, typed or traced.
template <class A, class E, bool Log>
constexpr bool check_softmax() {
  // An error here means the softmax axis is not an axis of the expression.
  static_assert(require<axes_contains_v<typename E::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  if constexpr (Log)
    static_assert(std::is_floating_point_v<typename E::value_type>,
                  "nax::log_softmax needs floating-point elements");
  else
    static_assert(std::is_floating_point_v<typename E::value_type>,
                  "nax::softmax needs floating-point elements");
  return true;
}

template <class A, bool Log, class X>
auto softmax_impl(X&& x) {
  using E = expression_of<X>;
  using V = typename E::value_type;
  static_assert(check_softmax<A, E, Log>());
  const E e = as_expression<V>(std::forward<X>(x));
  tensor_of<V, typename E::axes_type> out(extents_over<typename E::axes_type>::of(e));
  for_each_row<A, V>(e, out, softmax_row<V, Log>{});
  return out;
}

}  // namespace detail

/// exp(x) / sum(exp(x)) along axis A, computed stably; a tensor over x's axes in x's order.
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires expression<X>
auto softmax(X&& x) { return detail::softmax_impl<A, false>(std::forward<X>(x)); }

/// log(softmax<A>(x)) = x - max - log(sum(exp(x - max))), computed without the softmax.
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires expression<X>
auto log_softmax(X&& x) { return detail::softmax_impl<A, true>(std::forward<X>(x)); }

/// softmax and log_softmax along an axis the expression lacks: declared, never defined. The
/// return type is the error, so the call is the compile error, at the caller's line
/// (core/diagnostics.hpp).
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires(expression<X>&& detail::fails<Outcome>) Outcome softmax(X&& x);
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires(expression<X>&& detail::fails<Outcome>) Outcome log_softmax(X&& x);

}  // namespace nax
