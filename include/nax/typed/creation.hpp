#pragma once
// Tensors made from nothing: full, zeros, ones, iota along a named axis, eye and tril (a causal
// mask) over two named axes. Dynamic extents are given by name, as to tensor's constructor:
// `nax::zeros<float, batch, hidden>(batch(32))`.

#include <algorithm>
#include <cstddef>

#include <nax/core/axis.hpp>
#include <nax/typed/tensor.hpp>

namespace nax {

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
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(i);
  return t;
}

/// Over [Row, Col]: 1 where the two positions are equal, else 0 (the extents may differ).
template <class T, axis_type Row, axis_type Col, axis_type... Given>
tensor<T, Row, Col> eye(Given... given) {
  auto t = zeros<T, Row, Col>(given...);
  const std::size_t cols = t.template extent<Col>();
  const std::size_t n = std::min(t.template extent<Row>(), cols);
  for (std::size_t i = 0; i < n; ++i) t.data()[i * cols + i] = T(1);
  return t;
}

/// Over [Row, Col]: 1 where the column's position is at most the row's, else 0. With queries
/// along Row and keys along Col this is the causal mask: query i sees keys 0..i.
template <class T, axis_type Row, axis_type Col, axis_type... Given>
tensor<T, Row, Col> tril(Given... given) {
  auto t = zeros<T, Row, Col>(given...);
  const std::size_t rows = t.template extent<Row>(), cols = t.template extent<Col>();
  for (std::size_t r = 0; r < rows; ++r)
    std::fill_n(t.data() + r * cols, std::min(cols, r + 1), T(1));
  return t;
}

}  // namespace nax
