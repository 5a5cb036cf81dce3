#pragma once
// nax::size<A>(x): x's extent along axis A as a rank-0 i32 tensor, the value StableHLO's
// get_dimension_size gives. A generic lambda calling it runs eagerly on tensors and, under
// nax::jit, adds a get_dimension_size node (jit/traced_ops.hpp) whose value is the run's extent,
// whatever extent the specialization serving the run was made for (docs/bounded.md).
//
// nax::set_dimension_size<A, B>(x, n): x with its static or bounded axis A replaced by the axis
// named like B, bounded by A's extent or bound, whose extent is n (an integer or a rank-0 integer
// tensor; under nax::jit a traced one made from inputs, constants and nax::size): its first
// min(n, extent) entries are x's, the rest zeros (StableHLO's set_dimension_size). n outside
// [0, bound] is a nax::shape_error naming the axis.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/dynamic_slice.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {

template <class A, class X>
requires expression<X> tensor<std::int32_t> size(X&& x) {
  using E = detail::expression_of<X>;
  // An error here means A is not an axis of x.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  return full<std::int32_t>(static_cast<std::int32_t>(x.template extent<A>()));
}

namespace detail {

/// The axis set_dimension_size<A, B> makes: B's name, bounded by A's extent or bound.
template <class A, class B>
using sized_axis = axis<B::fixed_name, upto(A::is_static ? A::static_extent : A::bound)>;

}  // namespace detail

template <class A, class B, class X, class S>
requires(expression<X> && detail::slice_start<S>)
auto set_dimension_size(const X& x, const S& n) {
  using E = detail::expression_of<X>;
  using L = typename E::axes_type;
  // An error here means A is not an axis of x.
  static_assert(detail::require<axes_contains_v<L, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  // An error here means A is dynamic without a bound: the new axis needs one.
  static_assert(own::is_static || own::is_bounded,
                "nax::set_dimension_size: the axis must be static or bounded");
  using result_axes = detail::replace_axis<L, own, detail::sized_axis<own, B>>;
  constexpr std::size_t bound = detail::sized_axis<own, B>::bound;
  const std::int64_t size = detail::start_value(n);
  if (size < 0 || static_cast<std::uint64_t>(size) > bound)
    detail::throw_shape_error("nax::set_dimension_size<", A::name, ", ", B::name, ">: size ", size,
                              " is outside [0, ", bound, "]");
  std::optional<detail::value_of<X>> holder;
  const auto v = detail::readable_view(x, holder);
  constexpr std::size_t k = axes_index_of_v<L, A>;
  auto ext = detail::extents_array(v);
  const std::size_t kept = std::min(static_cast<std::size_t>(size), ext[k]);
  ext[k] = static_cast<std::size_t>(size);
  using result = tensor_of<typename E::value_type, result_axes>;
  result out{typename result::extents_type(
      std::span<const std::size_t, std::tuple_size_v<decltype(ext)>>(ext))};
  out.fill(typename E::value_type{});
  auto kept_ext = detail::extents_array(v);
  kept_ext[k] = kept;
  // x's first `kept` entries, seen over the new axis.
  detail::slice_view<detail::sized_axis<own, B>>(out.view(), 0, kept) =
      detail::make_view<result_axes>(v.data(), kept_ext, v.strides());
  return out;
}

}  // namespace nax
