#pragma once
// The elementwise ops of a vertex program: + - * / between values (or a value and a scalar),
// and exp, relu, leaky_relu, elu, sigmoid, tanh. Operands broadcast by name, as nax's typed
// expressions do: the result has the left operand's axes, then the right one's others. An op's
// scope follows its operands' (scope.hpp). Every op is computed in the stage that reads it, per
// in-edge, in registers: nothing per edge is stored.

#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/gnn/vertex/leaf.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

// The functions, each the same for a scalar and for a SIMD vector (the same bits per lane).
template <class V, class T>
V if_positive(const V& x, const V& then, const V& otherwise) {
  if constexpr (simd::is_vec_v<V>)
    return xsimd::select(x > V(T(0)), then, otherwise);
  else
    return x > T(0) ? then : otherwise;
}

// Each function's cotangents: grad(x, cot) = cot f'(x); grad_l / grad_r for two operands.
struct add_fn {
  template <class V>
  V operator()(const V& a, const V& b) const {
    return a + b;
  }
  template <class V>
  V grad_l(const V&, const V&, const V& cot) const {
    return cot;
  }
  template <class V>
  V grad_r(const V&, const V&, const V& cot) const {
    return cot;
  }
};
struct sub_fn {
  template <class V>
  V operator()(const V& a, const V& b) const {
    return a - b;
  }
  template <class V>
  V grad_l(const V&, const V&, const V& cot) const {
    return cot;
  }
  template <class V>
  V grad_r(const V&, const V&, const V& cot) const {
    return -cot;
  }
};
struct mul_fn {
  template <class V>
  V operator()(const V& a, const V& b) const {
    return a * b;
  }
  template <class V>
  V grad_l(const V&, const V& b, const V& cot) const {
    return cot * b;
  }
  template <class V>
  V grad_r(const V& a, const V&, const V& cot) const {
    return cot * a;
  }
};
struct div_fn {
  template <class V>
  V operator()(const V& a, const V& b) const {
    return a / b;
  }
  template <class V>
  V grad_l(const V&, const V& b, const V& cot) const {
    return cot / b;
  }
  template <class V>
  V grad_r(const V& a, const V& b, const V& cot) const {
    return -(cot * a) / (b * b);
  }
};
struct neg_fn {
  template <class V>
  V operator()(const V& x) const {
    return -x;
  }
  template <class V>
  V grad(const V&, const V& cot) const {
    return -cot;
  }
};
struct exp_fn {
  template <class V>
  V operator()(const V& x) const {
    return simd::exp(x);
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return cot * simd::exp(x);
  }
};
struct sigmoid_fn {
  template <class V>
  V operator()(const V& x) const {
    return simd::sigmoid(x);
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    const V y = simd::sigmoid(x);
    return cot * (y * (V(1) - y));
  }
};
struct tanh_fn {
  template <class V>
  V operator()(const V& x) const {
    return simd::tanh(x);
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    const V y = simd::tanh(x);
    return cot * (V(1) - y * y);
  }
};
template <class T>
struct relu_fn {
  template <class V>
  V operator()(const V& x) const {
    return if_positive<V, T>(x, x, V(T(0)));
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return if_positive<V, T>(x, cot, V(T(0)));
  }
};
template <class T>
struct leaky_relu_fn {
  T slope;
  template <class V>
  V operator()(const V& x) const {
    return if_positive<V, T>(x, x, x * V(slope));
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return if_positive<V, T>(x, cot, cot * V(slope));
  }
};
template <class T>
struct elu_fn {
  template <class V>
  V operator()(const V& x) const {
    return if_positive<V, T>(x, x, simd::exp(x) - V(T(1)));
  }
  template <class V>
  V grad(const V& x, const V& cot) const {
    return if_positive<V, T>(x, cot, cot * simd::exp(x));
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
    const auto l = l_.template vector<Inner>(i), r = r_.template vector<Inner>(i);
    push<Inner>(l_, i, f_.grad_l(l, r, cot));
    push<Inner>(r_, i, f_.grad_r(l, r, cot));
  }
  template <class Inner>
  void pull_scalar(std::size_t i, value_type cot) {
    const value_type l = l_.template scalar<Inner>(i), r = r_.template scalar<Inner>(i);
    push<Inner>(l_, i, f_.grad_l(l, r, cot));
    push<Inner>(r_, i, f_.grad_r(l, r, cot));
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
  return make_binary(add_fn{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator-(A&& a, B&& b) {
  return make_binary(sub_fn{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator*(A&& a, B&& b) {
  return make_binary(mul_fn{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
requires(vertex_value<A> && (vertex_value<B> || arithmetic<B>)) ||
    (arithmetic<A> && vertex_value<B>)auto operator/(A&& a, B&& b) {
  return make_binary(div_fn{}, std::forward<A>(a), std::forward<B>(b));
}
template <vertex_value X>
auto operator-(X&& x) {
  return unary<neg_fn, std::remove_cvref_t<X>>(neg_fn{}, std::forward<X>(x));
}

template <class F, class X>
auto make_unary(F f, X&& x) {
  return unary<F, std::remove_cvref_t<X>>(f, std::forward<X>(x));
}

}  // namespace detail

/// e^x, by nax::simd::exp (the typed layer's exp: the same bits).
template <detail::vertex_value X>
auto exp(X&& x) {
  return detail::make_unary(detail::exp_fn{}, std::forward<X>(x));
}
/// max(x, 0).
template <detail::vertex_value X>
auto relu(X&& x) {
  using T = typename std::remove_cvref_t<X>::value_type;
  return detail::make_unary(detail::relu_fn<T>{}, std::forward<X>(x));
}
/// x if x > 0, else negative_slope × x.
template <detail::vertex_value X>
auto leaky_relu(X&& x, typename std::remove_cvref_t<X>::value_type negative_slope) {
  using T = typename std::remove_cvref_t<X>::value_type;
  return detail::make_unary(detail::leaky_relu_fn<T>{negative_slope}, std::forward<X>(x));
}
/// x if x > 0, else e^x - 1.
template <detail::vertex_value X>
auto elu(X&& x) {
  using T = typename std::remove_cvref_t<X>::value_type;
  return detail::make_unary(detail::elu_fn<T>{}, std::forward<X>(x));
}
/// 1 / (1 + e^-x).
template <detail::vertex_value X>
auto sigmoid(X&& x) {
  return detail::make_unary(detail::sigmoid_fn{}, std::forward<X>(x));
}
template <detail::vertex_value X>
auto tanh(X&& x) {
  return detail::make_unary(detail::tanh_fn{}, std::forward<X>(x));
}

}  // namespace nax::gnn
