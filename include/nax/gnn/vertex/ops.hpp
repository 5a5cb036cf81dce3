#pragma once
// The elementwise ops of a vertex program: + - * / between values (or a value and a scalar),
// and exp, relu, leaky_relu, elu, sigmoid, tanh: the op list's bodies and derivatives. Operands
// broadcast by name, as nax's typed expressions do: the result has the left operand's axes, then
// the right one's others. An op's scope follows its operands' (scope.hpp). Every op is computed in
// the stage that reads it, per in-edge, in registers: nothing per edge is stored.

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/gnn/vertex/leaf.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/ops/vjp_on_numbers.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

// The functions are the op list's bodies (ops/elementwise.hpp), on scalars and SIMD vectors
// alike (the same bits per lane), each result rounded before the next op reads it
// (simd::op_result, as in the typed layer), and their derivatives the list's vjps on numbers
// (ops/vjp_on_numbers.hpp): a vertex program computes what nax's other layers compute.

/// Op of one operand: f(x), and grad(x, cot) = cot f'(x).
template <class Op>
struct unary_fn {
  template <class V>
  V operator()(const V& x) const {
    return simd::op_result(Op::apply(x));
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return ops::vjp_on_numbers<Op>(cot, x)[0];
  }
};
/// Op of two operands with a constant second one (leaky_relu's slope, elu's alpha).
template <class Op, class T>
struct with_constant_fn {
  T second;
  template <class V>
  V operator()(const V& x) const {
    return simd::op_result(Op::apply(x, V(second)));
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return ops::vjp_on_numbers<Op>(cot, x, V(second))[0];
  }
};
/// Op of two operands: f(a, b), and grads(a, b, cot) = both operands' cotangents.
template <class Op>
struct binary_fn {
  template <class V>
  V operator()(const V& a, const V& b) const {
    return simd::op_result(Op::apply(a, b));
  }
  template <class V>
  std::array<V, 2> grads(const V& a, const V& b, const V& cot) const {
    return ops::vjp_on_numbers<Op>(cot, a, b);
  }
};
/// f(x) for a value x.
template <class F, class X>
class unary : public vertex_value_tag {
 public:
  using scope = typename X::scope;
  using value_type = typename X::value_type;
  using axes_type = typename X::axes_type;

  unary(F f, X x) : f_(f), x_(std::move(x)) {}

  template <class A>
  std::size_t extent() const {
    return x_.template extent<A>();
  }
  template <class Out>
  void at_outer(const std::size_t* idx) {
    x_.template at_outer<Out>(idx);
  }
  template <class Inner>
  void at_site(const site& s) {
    x_.template at_site<Inner>(s);
    if constexpr (invariant_v<axes_type, Inner>) once_ = f_(x_.template scalar<Inner>(0));
  }
  template <class Inner>
  value_type scalar(std::size_t i) const {
    if constexpr (invariant_v<axes_type, Inner>)
      return once_;
    else
      return f_(x_.template scalar<Inner>(i));
  }
  template <class Inner>
  simd::vec<value_type> vector(std::size_t i) const {
    if constexpr (invariant_v<axes_type, Inner>)
      return simd::vec<value_type>(once_);
    else
      return f_(x_.template vector<Inner>(i));
  }
  template <class Inner>
  void prefetch(const site& s, std::size_t i, std::size_t count) const {
    x_.template prefetch<Inner>(s, i, count);
  }
  template <class G>
  void for_each_aggregation(G&& g) {
    x_.for_each_aggregation(g);
  }
  template <class G>
  void for_each_aggregation_reversed(G&& g) {
    x_.for_each_aggregation_reversed(g);
  }

  // The backward (leaf.hpp).
  template <class Inner>
  void pull(std::size_t i, const simd::vec<value_type>& cot) {
    push<Inner>(x_, i, f_.grad(x_.template vector<Inner>(i), cot));
  }
  template <class Inner>
  void pull_scalar(std::size_t i, value_type cot) {
    push<Inner>(x_, i, f_.grad(x_.template scalar<Inner>(i), cot));
  }
  void accumulate(value_type cot) { sum_ += cot; }
  template <class Inner>
  void flush() {
    if constexpr (invariant_v<axes_type, Inner>) {
      push<Inner>(x_, 0, f_.grad(x_.template scalar<Inner>(0), sum_));
      sum_ = 0;
    }
    x_.template flush<Inner>();
  }
  template <class G>
  void for_each_leaf(G&& g) {
    x_.for_each_leaf(g);
  }

 private:
  F f_;
  X x_;
  value_type once_{};  // the value at this site, when it is the same at every inner index
  value_type sum_{};   // its cotangent, summed over the row
};

// x's extent of axis A (a call that depends on A, so that it is looked at only for axes x has).
template <class A, class X>
std::size_t extent_of(const X& x) {
  return x.template extent<A>();
}

/// f(l, r), broadcast by name.
template <class F, class L, class R>
class binary : public vertex_value_tag {
 public:
  using scope = join_scope<typename L::scope, typename R::scope>;
  using value_type = typename L::value_type;
  using axes_type = axes_union<typename L::axes_type, typename R::axes_type>;

  binary(F f, L l, R r) : f_(f), l_(std::move(l)), r_(std::move(r)) {
    // Shared dynamic axes must agree at run time (static ones did at compile time).
    using shared = axes_intersection<typename L::axes_type, typename R::axes_type>;
    mp::mp_for_each<mp::mp_transform<mp::mp_identity, shared>>([&](auto a) {
      using A = typename decltype(a)::type;
      const std::size_t le = extent_of<A>(l_), re = extent_of<A>(r_);
      if (le != re) nax::detail::throw_axis_mismatch("nax::gnn: ", A::name, le, re);
    });
  }

  template <class A>
  std::size_t extent() const {
    if constexpr (axes_contains_v<typename L::axes_type, A>)
      return l_.template extent<A>();
    else
      return r_.template extent<A>();
  }
  template <class Out>
  void at_outer(const std::size_t* idx) {
    l_.template at_outer<Out>(idx);
    r_.template at_outer<Out>(idx);
  }
  template <class Inner>
  void at_site(const site& s) {
    l_.template at_site<Inner>(s);
    r_.template at_site<Inner>(s);
    if constexpr (invariant_v<axes_type, Inner>)
      once_ = f_(l_.template scalar<Inner>(0), r_.template scalar<Inner>(0));
  }
  template <class Inner>
  value_type scalar(std::size_t i) const {
    if constexpr (invariant_v<axes_type, Inner>)
      return once_;
    else
      return f_(l_.template scalar<Inner>(i), r_.template scalar<Inner>(i));
  }
  template <class Inner>
  simd::vec<value_type> vector(std::size_t i) const {
    if constexpr (invariant_v<axes_type, Inner>)
      return simd::vec<value_type>(once_);
    else
      return f_(l_.template vector<Inner>(i), r_.template vector<Inner>(i));
  }
  template <class Inner>
  void prefetch(const site& s, std::size_t i, std::size_t count) const {
    l_.template prefetch<Inner>(s, i, count);
    r_.template prefetch<Inner>(s, i, count);
  }
  template <class G>
  void for_each_aggregation(G&& g) {
    l_.for_each_aggregation(g);
    r_.for_each_aggregation(g);
  }
  /// The aggregations in the reverse of for_each_aggregation's order (outer ones first).
  template <class G>
  void for_each_aggregation_reversed(G&& g) {
    r_.for_each_aggregation_reversed(g);
    l_.for_each_aggregation_reversed(g);
  }

  // The backward (leaf.hpp).
  template <class Inner>
  void pull(std::size_t i, const simd::vec<value_type>& cot) {
    const auto g = f_.grads(l_.template vector<Inner>(i), r_.template vector<Inner>(i), cot);
    push<Inner>(l_, i, g[0]);
    push<Inner>(r_, i, g[1]);
  }
  template <class Inner>
  void pull_scalar(std::size_t i, value_type cot) {
    const auto g = f_.grads(l_.template scalar<Inner>(i), r_.template scalar<Inner>(i), cot);
    push<Inner>(l_, i, g[0]);
    push<Inner>(r_, i, g[1]);
  }
  void accumulate(value_type cot) { sum_ += cot; }
  template <class Inner>
  void flush() {
    if constexpr (invariant_v<axes_type, Inner>) {
      pull_scalar<Inner>(0, sum_);
      sum_ = 0;
    }
    l_.template flush<Inner>();
    r_.template flush<Inner>();
  }
  template <class G>
  void for_each_leaf(G&& g) {
    l_.for_each_leaf(g);
    r_.for_each_leaf(g);
  }

 private:
  F f_;
  L l_;
  R r_;
  value_type once_{};
  value_type sum_{};
};

template <class X>
concept vertex_value = is_vertex_value_v<std::remove_cvref_t<X>>;
template <class X>
concept arithmetic = std::is_arithmetic_v<std::remove_cvref_t<X>>;

// A scalar operand becomes a constant of the other operand's element type.
template <class T, class X>
auto as_value(X&& x) {
  if constexpr (vertex_value<X>)
    return std::remove_cvref_t<X>(std::forward<X>(x));
  else
    return constant<T>(static_cast<T>(x));
}

template <class X>
struct value_type_of {
  using type = void;
};
template <vertex_value X>
struct value_type_of<X> {
  using type = typename std::remove_cvref_t<X>::value_type;
};

template <class F, class A, class B>
auto make_binary(F f, A&& a, B&& b) {
  using TA = typename value_type_of<A>::type;
  using TB = typename value_type_of<B>::type;
  using T = std::conditional_t<std::is_void_v<TA>, TB, TA>;
  if constexpr (!std::is_void_v<TA> && !std::is_void_v<TB>)
    // An error here means a vertex program combined values of different element types.
    static_assert(nax::detail::require<std::is_same_v<TA, TB>,
                                       error::gnn_operands_have_different_element_types<TA, TB>>);
  auto l = as_value<T>(std::forward<A>(a));
  auto r = as_value<T>(std::forward<B>(b));
  return binary<F, decltype(l), decltype(r)>(f, std::move(l), std::move(r));
}

// The operators, found by argument-dependent lookup on the values' namespace.
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator+(A&& a, B&& b) {
  return make_binary(binary_fn<ops::add>{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator-(A&& a, B&& b) {
  return make_binary(binary_fn<ops::sub>{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator*(A&& a, B&& b) {
  return make_binary(binary_fn<ops::mul>{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator/(A&& a, B&& b) {
  return make_binary(binary_fn<ops::div>{}, std::forward<A>(a), std::forward<B>(b));
}
template <class F, class X>
auto make_unary(F f, X&& x) {
  return unary<F, std::remove_cvref_t<X>>(f, std::forward<X>(x));
}

template <vertex_value X>
auto operator-(X&& x) {
  return make_unary(unary_fn<ops::neg>{}, std::forward<X>(x));
}

}  // namespace detail

/// e^x (nax::exp's body: the same bits).
template <detail::vertex_value X>
auto exp(X&& x) {
  return detail::make_unary(detail::unary_fn<ops::exp>{}, std::forward<X>(x));
}
/// max(x, 0).
template <detail::vertex_value X>
auto relu(X&& x) {
  return detail::make_unary(detail::unary_fn<ops::relu>{}, std::forward<X>(x));
}
/// x if x > 0, else negative_slope × x.
template <detail::vertex_value X>
auto leaky_relu(X&& x, typename std::remove_cvref_t<X>::value_type negative_slope) {
  using T = typename std::remove_cvref_t<X>::value_type;
  return detail::make_unary(detail::with_constant_fn<ops::leaky_relu, T>{negative_slope},
                            std::forward<X>(x));
}
/// x if x > 0, else alpha (e^x - 1).
template <detail::vertex_value X>
auto elu(X&& x, typename std::remove_cvref_t<X>::value_type alpha = 1) {
  using T = typename std::remove_cvref_t<X>::value_type;
  return detail::make_unary(detail::with_constant_fn<ops::elu, T>{alpha}, std::forward<X>(x));
}
/// 1 / (1 + e^-x).
template <detail::vertex_value X>
auto sigmoid(X&& x) {
  return detail::make_unary(detail::unary_fn<ops::sigmoid>{}, std::forward<X>(x));
}
template <detail::vertex_value X>
auto tanh(X&& x) {
  return detail::make_unary(detail::unary_fn<ops::tanh>{}, std::forward<X>(x));
}

}  // namespace nax::gnn
