#pragma once
// Gathers by integer indices along a named axis.
//
// nax::take<A>(data, indices) (ONNX Gather, numpy.take with the axis named): data's axes with A
// replaced, in place, by the indices' axes; element [p..., j..., s...] is data[p..., indices[j...],
// s...]. An embedding lookup is take<vocab>(embedding[vocab, model], ids[batch, seq]) ->
// [batch, seq, model]. The indices' axes must not be data's other axes.
//
// nax::take_along<A>(x, indices) (ONNX GatherElements, numpy.take_along_axis with the axis
// dropped): indices has x's axes but A (in any order, with the same extents); the result has x's
// axes but A, in x's order, and element [k...] is x[k..., indices[k...] along A]. The
// cross-entropy's pick: take_along<vocab>(logp[batch, seq, vocab], labels[batch, seq]).
//
// An index outside [0, extent of A) throws nax::shape_error naming the index, its position by the
// indices' axis names and A's extent: `nax::take<vocab>: index 7 at [batch=0, seq=3] is outside
// vocab's extent 5`. Negative indices are outside too (no wrap to the end as in numpy or ONNX: a
// padding id such as -1 is an error, never silently the last row). Nothing is written before
// every index is checked. data, x and indices may be expressions (evaluated once; a tensor is
// read in place).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/around_axis.hpp>
#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// Axes of take<A>(data, indices): data's before A, the indices', data's after A.
template <class L, class A, class I>
using take_axes = boost::mp11::mp_append<
    boost::mp11::mp_take_c<L, axes_index_of_v<L, A>>, I,
    boost::mp11::mp_drop_c<L, axes_index_of_v<L, A> + 1>>;

/// "[batch=0, seq=3]": flat position r of a dense tensor t over axes K..., by name.
template <class Dense, class... K>
std::string take_position(const Dense& t, std::size_t r, axes<K...>) {
  constexpr std::size_t rank = sizeof...(K);
  const std::array<std::size_t, rank + 1> ext{t.template extent<K>()..., 0};
  const std::array<std::string_view, rank + 1> names{std::string_view(K::name)..., ""};
  std::array<std::size_t, rank + 1> at{};
  for (std::size_t k = rank; k-- > 0;) {
    at[k] = r % ext[k];
    r /= ext[k];
  }
  std::string out = "[";
  for (std::size_t k = 0; k < rank; ++k)
    out += nax::detail::message(k ? ", " : "", names[k], "=", at[k]);
  return out + "]";
}

template <class V>
constexpr void check_index_type() {
  // An error here means the indices are not integers.
  static_assert(std::is_integral_v<V> && !std::is_same_v<V, bool>,
                "nax::take, nax::take_along: the indices must be integers (int32 or int64)");
}

/// Throws nax::shape_error for the first index of `idx` (dense, over axes I) outside [0, n).
template <class A, class I, class Dense>
void check_take_indices(std::string_view op, const Dense& idx, std::size_t n) {
  using V = typename Dense::value_type;
  for (std::size_t r = 0; r < idx.size(); ++r) {
    const V i = idx.data()[r];
    bool inside = true;
    if constexpr (std::is_signed_v<V>) inside = i >= 0;
    if (inside) inside = static_cast<std::make_unsigned_t<V>>(i) < n;
    if (!inside)
      throw_shape_error(op, "<", A::name, ">: index ", static_cast<std::int64_t>(i), " at ",
                        take_position(idx, r, I{}), " is outside ", A::name, "'s extent ", n);
  }
}

/// x itself if it is a tensor (dense, in its own axis order), else its value: no copy of an
/// embedding table per lookup.
template <class X>
decltype(auto) dense_of(const X& x) {
  if constexpr (std::is_same_v<X, tensor_of<typename X::value_type, typename X::axes_type>>)
    return (x);
  else
    return nax::eval(x);
}

/// The extent of axis B in data (if it has B) or else in the indices.
template <class B, class Data, class Index>
std::size_t take_extent(const Data& data, const Index& idx) {
  if constexpr (axes_contains_v<typename Index::axes_type, B>)
    return idx.template extent<B>();
  else
    return data.template extent<B>();
}

template <class A, class X, class Y>
auto take_impl(const X& data, const Y& indices) {
  using L = typename X::axes_type;
  using I = typename Y::axes_type;
  using T = typename X::value_type;
  check_index_type<typename Y::value_type>();
  // An error here means the axis is not an axis of the data.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using R = take_axes<L, A, I>;
  static_assert(check_unique_axes<R>);  // an error here: the indices share an axis with the data
  const auto& dense = dense_of(data);
  const auto& idx = dense_of(indices);
  const auto [outer, n, inner] = nax::detail::split_around_tensor(dense, axes_index_of_v<L, A>);
  check_take_indices<A, I>("nax::take", idx, n);
  auto out = [&]<class... K>(axes<K...>) {
    if constexpr (sizeof...(K) == 0) {
      return tensor<T>();
    } else {
      const std::array<std::size_t, sizeof...(K)> values{take_extent<K>(dense, idx)...};
      return tensor<T, K...>(nax::extents<K...>(
          std::span<const std::size_t, sizeof...(K)>(values.data(), values.size())));
    }
  }(R{});
  const std::size_t m = idx.size();
  if (out.size() == 0) return out;
  const T* src = dense.data();
  T* dst = out.data();
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t j = 0; j < m; ++j) {
      const auto i = static_cast<std::size_t>(idx.data()[j]);
      std::memcpy(dst + (o * m + j) * inner, src + (o * n + i) * inner, inner * sizeof(T));
    }
  return out;
}

template <class A, class X, class Y>
auto take_along_impl(const X& x, const Y& indices) {
  using L = typename X::axes_type;
  using T = typename X::value_type;
  using V = typename Y::value_type;
  check_index_type<V>();
  // An error here means the axis is not an axis of x.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using Kept = axes_difference<L, axes<A>>;
  // An error here means the indices' axes are not x's axes without A.
  static_assert(axes_same_set_v<Kept, typename Y::axes_type>,
                "nax::take_along<A>(x, indices): the indices' axes must be x's axes but A");
  const auto& dense = dense_of(x);
  const auto [outer, n, inner] = nax::detail::split_around_tensor(dense, axes_index_of_v<L, A>);
  // The indices in x's order (a permutation; nax::shape_error naming an axis whose extents
  // disagree).
  auto idx = [&]<class... K>(axes<K...>) {
    auto t = tensor_with_extents_of<V, K...>(dense);
    t = indices;
    return t;
  }(Kept{});
  check_take_indices<A, Kept>("nax::take_along", idx, n);
  auto out = [&]<class... K>(axes<K...>) {
    return tensor_with_extents_of<T, K...>(dense);
  }(Kept{});
  const T* src = dense.data();
  T* dst = out.data();
  const V* ix = idx.data();
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t s = 0; s < inner; ++s) {
      const std::size_t r = o * inner + s;
      dst[r] = src[(o * n + static_cast<std::size_t>(ix[r])) * inner + s];
    }
  return out;
}

}  // namespace detail

/// data's slices along A at the indices (see the file comment).
template <axis_type A, class X, class Y>
requires expression<X> && expression<Y>
auto take(const X& data, const Y& indices) { return detail::take_impl<A>(data, indices); }

/// x's element along A at the index, for each position of x's other axes (see the file comment).
template <axis_type A, class X, class Y>
requires expression<X> && expression<Y>
auto take_along(const X& x, const Y& indices) { return detail::take_along_impl<A>(x, indices); }

}  // namespace nax
