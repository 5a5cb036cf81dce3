#pragma once
// layer_norm<A>(x, gamma, beta, eps): (x - mean) / sqrt(var + eps) * gamma + beta along axis A,
// threaded over the other axes, with x's expression fused into the row loop. One pass over memory
// computes the mean and the (biased) variance, a second writes. A row that fits in L1/L2 is read
// from memory once: its mean, then the mean squared deviation from it are two sweeps over the
// cached row (exact two-pass statistics, no cancellation). A longer row gets one pass with
// Welford's update in every vector lane, merged across lanes with Chan's formula. A large output
// of cached rows is streamed one row behind, as softmax's.

#include <cmath>
#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/layer_norm_row.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/rows.hpp>
#include <nax/typed/softmax.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class A, class E, class P>
void check_parameter_axis(const E& e, const P& p, const char* what) {
  if (p.template extent<A>() != e.template extent<A>())
    throw_shape_error("layer_norm: axis '", A::name, "' of ", what, " has ", p.template extent<A>(),
                      " but x has ", e.template extent<A>());
}

template <class E, class P, class... A>
void check_parameter([[maybe_unused]] const E& e, [[maybe_unused]] const P& p,
                     [[maybe_unused]] const char* what, axes<A...>*) {
  (check_parameter_axis<A>(e, p, what), ...);
}

/// What layer_norm<A> asks of its operand E, typed or traced.
template <class A, class E>
constexpr bool check_layer_norm() {
  // An error here means the normalized axis is not an axis of x.
  static_assert(require<axes_contains_v<typename E::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  static_assert(std::is_floating_point_v<typename E::value_type>,
                "nax::layer_norm needs floating-point elements");
  return true;
}

}  // namespace detail

/// Normalizes x along axis A to zero mean and unit variance (biased, as PyTorch), then scales
/// by gamma and shifts by beta (tensors or expressions over axes of x, usually just A, or
/// scalars). A tensor over x's axes in x's order. eps is 1e-5 unless given (as PyTorch's and
/// the builder's layer_norm).
template <class A, class X, class G, class B, class S = double>
requires expression<X>
auto layer_norm(X&& x, G&& gamma, B&& beta, S eps = 1e-5) {
  using E = detail::expression_of<X>;
  using V = typename E::value_type;
  static_assert(detail::check_layer_norm<A, E>());
  const E e = detail::as_expression<V>(std::forward<X>(x));
  const auto g = detail::as_expression<V>(std::forward<G>(gamma));
  const auto b = detail::as_expression<V>(std::forward<B>(beta));
  // An error here means gamma or beta has an axis that x does not have.
  static_assert(
      detail::check_assignable<typename E::axes_type, typename decltype(g)::axes_type, false>() &&
      detail::check_assignable<typename E::axes_type, typename decltype(b)::axes_type, false>());
  detail::check_parameter(e, g, "gamma", static_cast<typename decltype(g)::axes_type*>(nullptr));
  detail::check_parameter(e, b, "beta", static_cast<typename decltype(b)::axes_type*>(nullptr));
  using order = detail::row_order<typename E::axes_type, A>;
  tensor_of<V, typename E::axes_type> out(detail::extents_over<typename E::axes_type>::of(e));
  detail::for_each_row<A, V>(e, out, detail::layer_norm_row<V>{static_cast<V>(eps)},
                             g.template cursor<order>(), b.template cursor<order>());
  return out;
}

}  // namespace nax
