#pragma once
// Tensors made from nothing: full, zeros, ones, iota along a named axis, eye and tril (a causal
// mask) over two named axes. Dynamic extents are given by name, as to tensor's constructor:
// `nax::zeros<float, batch, hidden>(batch(32))`; or taken from a tensor or expression x (the
// `_like` forms, and iota, eye and tril with x as their argument), so that the same code runs
// under nax::jit, where x is a traced value and these add graph nodes (jit/traced_creation.hpp).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {
namespace detail {

// The rules of iota, eye and tril, written into a tensor both forms (extents given, extents of
// an operand) make.
template <class T, class A>
void fill_iota(tensor<T, A>& t) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(i);
}
template <class T, class Row, class Col>
void fill_eye(tensor<T, Row, Col>& t) {
  t.fill(T{});
  const std::size_t cols = t.template extent<Col>();
  const std::size_t n = std::min(t.template extent<Row>(), cols);
  for (std::size_t i = 0; i < n; ++i) t.data()[i * cols + i] = T(1);
}
template <class T, class Row, class Col>
void fill_tril(tensor<T, Row, Col>& t) {
  t.fill(T{});
  const std::size_t rows = t.template extent<Row>(), cols = t.template extent<Col>();
  for (std::size_t r = 0; r < rows; ++r)
    std::fill_n(t.data() + r * cols, std::min(cols, r + 1), T(1));
}

}  // namespace detail

/// A tensor over `Axes...` with every element `value`.
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> full(T value, Given... given) {
  tensor<T, Axes...> t(typename tensor<T, Axes...>::extents_type(given...));
  t.fill(value);
  return t;
}

/// A tensor over `Axes...` of zeros (T{}).
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> zeros(Given... given) {
  return full<T, Axes...>(T{}, given...);
}

/// A tensor over `Axes...` of ones.
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> ones(Given... given) {
  return full<T, Axes...>(T(1), given...);
}

/// The positions along axis A: element i is T(i).
template <class T, axis_type A, axis_type... Given>
tensor<T, A> iota(Given... given) {
  tensor<T, A> t(typename tensor<T, A>::extents_type(given...));
  detail::fill_iota(t);
  return t;
}

/// Over [Row, Col]: 1 where the two positions are equal, else 0 (the extents may differ).
template <class T, axis_type Row, axis_type Col, axis_type... Given>
tensor<T, Row, Col> eye(Given... given) {
  tensor<T, Row, Col> t(typename tensor<T, Row, Col>::extents_type(given...));
  detail::fill_eye(t);
  return t;
}

/// Over [Row, Col]: 1 where the column's position is at most the row's, else 0. With queries
/// along Row and keys along Col this is the causal mask: query i sees keys 0..i.
template <class T, axis_type Row, axis_type Col, axis_type... Given>
tensor<T, Row, Col> tril(Given... given) {
  tensor<T, Row, Col> t(typename tensor<T, Row, Col>::extents_type(given...));
  detail::fill_tril(t);
  return t;
}

namespace detail {

/// A tensor of T over the axes `A...` of x, with x's extents for them (uninitialized).
template <class T, class... A, class X>
tensor<T, A...> tensor_with_extents_of(const X& x) {
  if constexpr (sizeof...(A) == 0) {
    return tensor<T>();
  } else {
    const std::array<std::size_t, sizeof...(A)> values{x.template extent<A>()...};
    return tensor<T, A...>(nax::extents<A...>(
        std::span<const std::size_t, sizeof...(A)>(values.data(), values.size())));
  }
}

/// A tensor of T over x's axes, in x's order, with x's extents (uninitialized).
template <class T, class X>
auto tensor_like(const X& x) {
  return [&]<class... A>(axes<A...>) {
    return tensor_with_extents_of<T, A...>(x);
  }(typename X::axes_type{});
}

/// The element type of the like forms: T, or x's own for void.
template <class T, class X>
using like_value_t = std::conditional_t<std::is_void_v<T>, typename X::value_type, T>;

}  // namespace detail

// --- shapes from an operand ---------------------------------------------------------------------

/// x's axes, extents and element type, every element `value` (x is not evaluated).
template <class X>
requires expression<X>
auto full_like(const X& x, typename X::value_type value) {
  auto t = detail::tensor_like<typename X::value_type>(x);
  t.fill(value);
  return t;
}
template <class X>
requires expression<X>
auto zeros_like(const X& x) { return full_like(x, typename X::value_type{}); }
template <class X>
requires expression<X>
auto ones_like(const X& x) { return full_like(x, typename X::value_type(1)); }

/// 0, 1, ..., n - 1 over x's axis A alone (n its extent in x), of element type T.
template <axis_type A, class T = std::int64_t, class X>
requires expression<X>
auto iota(const X& x) {
  using B = axes_get<typename X::axes_type, A>;
  auto t = detail::tensor_with_extents_of<T, B>(x);
  detail::fill_iota(t);
  return t;
}

/// eye over x's axes Row and Col, with x's extents for them; T defaults to x's element type.
template <axis_type Row, axis_type Col, class T = void, class X>
requires expression<X>
auto eye(const X& x) {
  using L = typename X::axes_type;
  using R = axes_get<L, Row>;
  using C = axes_get<L, Col>;
  using V = detail::like_value_t<T, X>;
  auto t = detail::tensor_with_extents_of<V, R, C>(x);
  detail::fill_eye(t);
  return t;
}

/// The causal mask over x's axes Row and Col, with x's extents for them: true (1) where Col's
/// position is at most Row's. `where(nax::tril<seq, kseq>(scores), scores, -inf)`. T defaults
/// to bool.
template <axis_type Row, axis_type Col, class T = bool, class X>
requires expression<X>
auto tril(const X& x) {
  using L = typename X::axes_type;
  using R = axes_get<L, Row>;
  using C = axes_get<L, Col>;
  auto t = detail::tensor_with_extents_of<T, R, C>(x);
  detail::fill_tril(t);
  return t;
}

}  // namespace nax
