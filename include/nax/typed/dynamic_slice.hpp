#pragma once
// Slices at run-time places along a named axis (StableHLO's dynamic_slice and
// dynamic_update_slice), on tensors, views and expressions; on traced values (jit/traced_ops.hpp)
// they are the graph's ops of the same names.
//
//     auto row = nax::dynamic_slice<seq, 1>(cache, pos);          // seq becomes axis<"seq", 1>
//     cache = nax::dynamic_update_slice<seq>(cache, new_row, pos);  // cache's type
//
// The start is an integer or a rank-0 integer tensor; as in XLA it is clamped so that the slice
// lies inside the axis: to [0, extent - size]. A size, or an update's extent, above the axis's
// extent is a nax::shape_error naming the axis.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include <boost/mp11/list.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class S>
inline constexpr bool is_rank0_integer_tensor_v = false;
template <class T>
inline constexpr bool is_rank0_integer_tensor_v<tensor<T>> = std::integral<T>;
template <class T>
inline constexpr bool is_rank0_integer_tensor_v<tensor_view<T>> =
    std::integral<std::remove_const_t<T>>;

/// A rank-0 integer expression that is not a tensor or a view (`at + 1`): evaluated for its value.
template <class S>
concept rank0_integer_expression =
    expression<S> && !is_rank0_integer_tensor_v<S> && !reads_deferred<S>::value &&
    boost::mp11::mp_empty<typename expression_of<const S&>::axes_type>::value &&
    std::integral<typename expression_of<const S&>::value_type> &&
    !std::same_as<typename expression_of<const S&>::value_type, bool>;

/// A start given as an integer, as a rank-0 integer tensor (or view), or as a rank-0 integer
/// expression.
template <class S>
concept slice_start = (std::integral<S> && !std::same_as<S, bool>) ||
                      is_rank0_integer_tensor_v<S> || rank0_integer_expression<S>;

template <class S>
std::int64_t start_value(const S& s) {
  if constexpr (std::integral<S>)
    return static_cast<std::int64_t>(s);
  else if constexpr (is_rank0_integer_tensor_v<S>)
    return static_cast<std::int64_t>(*s.data());
  else
    return static_cast<std::int64_t>(*nax::eval(s).data());
}

/// start clamped to [0, extent - size] (size <= extent).
inline std::size_t clamp_start(std::int64_t start, std::size_t extent, std::size_t size) {
  if (start <= 0) return 0;
  const std::size_t most = extent - size;
  return static_cast<std::size_t>(start) > most ? most : static_cast<std::size_t>(start);
}

/// A view of x (a tensor or a view), or of its value (`holder` keeps an expression's value).
template <class X, class Holder>
auto readable_view(const X& x, Holder& holder) {
  if constexpr (requires { x.view(); }) {
    return x.view();
  } else if constexpr (is_view_like_v<const X&>) {
    return x;
  } else {
    holder = nax::eval(x);
    return holder->view();
  }
}

template <class X>
using value_of = decltype(nax::eval(std::declval<const X&>()));

}  // namespace detail

/// Size entries of x along A from `start` (clamped to [0, extent - Size]), a new tensor whose
/// axis A is `axis<A's name, Size>`.
template <class A, std::size_t Size, class X, class S>
requires(expression<X> && detail::slice_start<S>)
auto dynamic_slice(const X& x, const S& start) {
  using E = detail::expression_of<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<L, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  using result_axes = detail::replace_axis<L, own, axis<own::fixed_name, static_cast<int>(Size)>>;
  std::optional<detail::value_of<X>> holder;
  const auto v = detail::readable_view(x, holder);
  constexpr std::size_t k = axes_index_of_v<L, A>;
  const std::size_t extent = v.extent(k);
  if (Size > extent)
    detail::throw_shape_error("nax::dynamic_slice<", A::name, ", ", Size, ">: size ", Size,
                              " is more than the extent ", extent, " of axis '", A::name, "'");
  const std::size_t s = detail::clamp_start(detail::start_value(start), extent, Size);
  auto ext = detail::extents_array(v);
  ext[k] = Size;
  const auto sliced = detail::make_view<result_axes>(
      v.data() + static_cast<std::ptrdiff_t>(s) * v.strides()[k], ext, v.strides());
  return nax::eval(sliced);
}

/// x with `update` written along A from `start` (clamped to [0, extent - update's extent]): a new
/// tensor of x's axes. update has x's axes (in any order), A of any extent up to x's.
template <class A, class X, class U, class S>
requires(expression<X> && expression<U> && detail::slice_start<S>)
auto dynamic_update_slice(const X& x, const U& update, const S& start) {
  using E = detail::expression_of<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<L, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  auto out = nax::eval(x);
  constexpr std::size_t k = axes_index_of_v<L, A>;
  const std::size_t extent = out.extents().extent(k);
  // An error here means the update has no axis named like A.
  static_assert(detail::require<axes_contains_v<typename detail::expression_of<U>::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  const std::size_t n =
      detail::as_expression<typename E::value_type>(update).template extent<A>();
  if (n > extent)
    detail::throw_shape_error("nax::dynamic_update_slice<", A::name, ">: the update's extent ", n,
                              " along axis '", A::name, "' is more than the extent ", extent);
  const std::size_t s = detail::clamp_start(detail::start_value(start), extent, n);
  detail::slice_view<own>(out.view(), s, s + n) = update;
  return out;
}

}  // namespace nax::NAX_ISA
