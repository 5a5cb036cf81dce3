#pragma once
// Layout ops over named axes: permute, rename, slice and concat. On tensors and views the first
// three are views (no copy); on expressions they are lazy nodes that change how the expression
// is indexed, so they fuse into whatever reads them. concat makes a new tensor.

#include <array>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <class X>
inline constexpr bool is_view_like_v =
    is_owning_tensor_v<std::remove_cvref_t<X>>&& std::is_lvalue_reference_v<X>;
template <class T, class... A>
inline constexpr bool is_view_like_v<tensor_view<T, A...>> = true;
template <class T, class... A>
inline constexpr bool is_view_like_v<tensor_view<T, A...>&> = true;
template <class T, class... A>
inline constexpr bool is_view_like_v<const tensor_view<T, A...>&> = true;

// The view of an lvalue tensor (mutable if the tensor is) or the view itself.
template <class X>
auto view_of(X&& x) {
  if constexpr (is_owning_tensor_v<std::remove_cvref_t<X>>)
    return x.view();
  else
    return x;
}

/// L with the axis named like A replaced by New.
template <class A, class New>
struct replace_named {
  template <class B>
  using fn = std::conditional_t<same_axis_name_v<A, B>, New, B>;
};
template <class L, class A, class New>
using replace_axis = boost::mp11::mp_transform_q<replace_named<A, New>, L>;

/// A view of `data` over axes L with positional extents and strides.
template <class L, class T, std::size_t N>
auto make_view(T* data, const std::array<std::size_t, N>& ext,
               const std::array<std::ptrdiff_t, N>& strides) {
  using result = typename view_over<T, L>::type;
  return result(data, typename result::extents_type(std::span<const std::size_t, N>(ext)), strides);
}

template <class V>
auto extents_array(const V& v) {
  std::array<std::size_t, V::rank> ext{};
  for (std::size_t i = 0; i < V::rank; ++i) ext[i] = v.extent(i);
  return ext;
}

// --- permute ----------------------------------------------------------------------------------

template <class L, class E>
class permute_node : public expression_base {
 public:
  using value_type = typename E::value_type;
  using axes_type = L;
  using lane_type = typename E::lane_type;
  explicit permute_node(E e) : e_(std::move(e)) {}
  template <class A>
  std::size_t extent() const {
    return e_.template extent<A>();
  }
  template <class D>
  auto cursor() const {
    return e_.template cursor<D>();  // cursors index by name: the order is only this node's
  }

 private:
  E e_;
};

/// Axis list L in the order `Axes...` (x's own axis types): the result of nax::permute on an
/// expression over L, typed or traced. check_permute<L, Axes...>() raises the errors.
template <class L, class... Axes>
using permuted_axes = axes<axes_get<L, Axes>...>;

template <class L, class... Axes>
constexpr bool check_permute() {
  // An error here means `Axes...` is not a permutation of x's axes.
  static_assert(check_assignable<permuted_axes<L, Axes...>, L, true>());
  static_assert(check_unique_axes<axes<Axes...>>);
  return true;
}

// --- rename -----------------------------------------------------------------------------------

template <class From, class To>
using renamed_axis = axis<To::fixed_name, From::extent_spec>;

template <class L, class From, class To>
using rename_in = replace_axis<L, From, renamed_axis<From, To>>;

/// Axis list L with its axis named like From renamed To: the result of nax::rename on an
/// expression over L, typed or traced. check_rename<L, From, To>() raises the errors.
template <class L, class From, class To>
using renamed_axes = rename_in<L, axes_get<L, From>, To>;

template <class L, class From, class To>
constexpr bool check_rename() {
  // An error here means x has no axis named like From.
  static_assert(
      require<axes_contains_v<L, From>, error::axis_not_in_list<axis_diagnostic_name<From>>>);
  if constexpr (axes_contains_v<L, From>) {
    // An error here means x already has an axis named like To.
    static_assert(same_axis_name_v<From, To> || check_unique_axes<renamed_axes<L, From, To>>);
  }
  return true;
}

template <class From, class To, class E>
class rename_node : public expression_base {
  using new_axis = renamed_axis<From, To>;

 public:
  using value_type = typename E::value_type;
  using axes_type = rename_in<typename E::axes_type, From, To>;
  using lane_type = typename E::lane_type;
  explicit rename_node(E e) : e_(std::move(e)) {}
  template <class A>
  std::size_t extent() const {
    if constexpr (same_axis_name_v<A, new_axis>)
      return e_.template extent<From>();
    else
      return e_.template extent<A>();
  }
  template <class D>
  auto cursor() const {
    return e_.template cursor<replace_axis<D, new_axis, From>>();
  }

 private:
  E e_;
};

// --- slice ------------------------------------------------------------------------------------

/// The axis a slice of A has: dynamic, bounded by A's bound when A has one (a static A bounds
/// its slices by its extent).
template <class A>
using sliced_axis = std::conditional_t<A::bound == unbounded, axis<A::fixed_name, dynamic>,
                                       axis<A::fixed_name, upto(A::bound)>>;

/// The axis a slice of A with bounds known at compile time has: static, of extent N, in A's
/// integer type where A is static (so that it is the axis a user declares), else int.
template <class A, std::size_t N>
using static_sliced_axis =
    axis<A::fixed_name,
         static_cast<std::conditional_t<A::is_static, decltype(A::extent_spec), int>>(N)>;

/// The compile-time checks of a slice of A with bounds [Begin, End) in the type (the typed and
/// the traced slice), in a static_assert where it is used, so that they come first.
template <class A, std::size_t Begin, std::size_t End>
constexpr bool check_static_slice() {
  // An error here means the slice holds nothing, or reaches past A's static extent or bound.
  static_assert(Begin < End,
                "nax::slice<A, Begin, End>: End must be past Begin (a static axis "
                "has a positive extent; slice<A>(x, begin, end) may be empty)");
  static_assert(A::bound == unbounded || End <= A::bound,
                "nax::slice<A, Begin, End>: End is past the axis's extent or bound");
  return true;
}

inline void check_slice(std::string_view name, std::size_t begin, std::size_t end,
                        std::size_t extent) {
  if (begin > end || end > extent)
    throw_shape_error("slice of axis '", name, "': [", begin, ", ", end, ") is out of range [0, ",
                      extent, ")");
}

template <class A, class E, class R = sliced_axis<A>>
class slice_node : public expression_base {
 public:
  using value_type = typename E::value_type;
  using axes_type = replace_axis<typename E::axes_type, A, R>;
  using lane_type = typename E::lane_type;
  slice_node(E e, std::size_t begin, std::size_t end) : e_(std::move(e)), begin_(begin), end_(end) {
    check_slice(A::name, begin, end, e_.template extent<A>());
  }
  template <class B>
  std::size_t extent() const {
    if constexpr (same_axis_name_v<A, B>)
      return end_ - begin_;
    else
      return e_.template extent<B>();
  }
  template <class D>
  auto cursor() const {
    auto c = e_.template cursor<D>();
    constexpr std::size_t k = axes_index_of_v<D, A>;
    c.for_each_leaf(
        [&](auto& leaf) { leaf.base += static_cast<std::ptrdiff_t>(begin_) * leaf.stride[k]; });
    return c;
  }

 private:
  E e_;
  std::size_t begin_, end_;
};

template <class A, class R = sliced_axis<A>, class T, class... Axes>
auto slice_view(const tensor_view<T, Axes...>& v, std::size_t begin, std::size_t end) {
  constexpr std::size_t k = axes_index_of_v<axes<Axes...>, A>;
  check_slice(A::name, begin, end, v.extent(k));
  auto ext = extents_array(v);
  ext[k] = end - begin;
  return make_view<replace_axis<axes<Axes...>, A, R>>(
      v.data() + static_cast<std::ptrdiff_t>(begin) * v.strides()[k], ext, v.strides());
}

// The axis that axes A and B (one name, one in each operand) make when joined, named Name:
// static (in A's integer type) when both are, bounded by the sum of their bounds when both have
// one, else dynamic.
template <fixed_string Name, class A, class B, bool Static = A::is_static&& B::is_static,
          bool Bounded = A::bound != unbounded&& B::bound != unbounded>
struct joined_axis {
  using type = axis<Name, dynamic>;
};
template <fixed_string Name, class A, class B>
struct joined_axis<Name, A, B, false, true> {
  using type = axis<Name, upto(A::bound + B::bound)>;
};
template <fixed_string Name, class A, class B>
struct joined_axis<Name, A, B, true, true> {
  using type =
      axis<Name, static_cast<decltype(A::extent_spec)>(A::static_extent + B::static_extent)>;
};

/// The axis of nax::concat<A, B> of expression types EA and EB (named like B; concat<A> passes
/// B = A), and its result's axes (EA's, that axis joined), typed or traced.
/// check_concat<A, B, EA, EB>() raises the errors.
template <class A, class B, class EA, class EB>
using concat_axis = typename joined_axis<B::fixed_name, axes_get<typename EA::axes_type, A>,
                                         axes_get<typename EB::axes_type, A>>::type;
template <class A, class B, class EA, class EB>
using concat_axes = replace_axis<typename EA::axes_type, axes_get<typename EA::axes_type, A>,
                                 concat_axis<A, B, EA, EB>>;

template <class A, class B, class EA, class EB>
constexpr bool check_concat() {
  static_assert(std::is_same_v<typename EA::value_type, typename EB::value_type>,
                "nax::concat: the operands have different element types; use nax::cast<U>(e)");
  // An error here means an operand has no axis named like A.
  static_assert(require<axes_contains_v<typename EA::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  static_assert(require<axes_contains_v<typename EB::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  // An error here means the operands' other axes differ (their extents along A may).
  static_assert(check_assignable<axes_without<typename EA::axes_type, A>,
                                 axes_without<typename EB::axes_type, A>, true>());
  // An error here means nax::concat<A, B> was given a B that already names an axis of the
  // operands: the joined axis needs a name of its own (or nax::concat<A> keeps A's).
  static_assert(same_axis_name_v<A, B> || !axes_contains_v<typename EA::axes_type, B>,
                "nax::concat<A, B>: B already names an axis of the operands; the joined axis "
                "needs a new name");
  return true;
}

/// a and b joined along A as a new tensor over Out (EA's axes, A replaced by the joined axis).
template <class A, class Out, class XA, class XB>
auto concat_into(XA&& a, XB&& b) {
  using EA = expression_of<XA>;
  using EB = expression_of<XB>;
  using V = typename EA::value_type;
  constexpr std::size_t ka = axes_index_of_v<typename EA::axes_type, A>;
  using joined = boost::mp11::mp_at_c<Out, ka>;
  const EA ea = as_expression<V>(std::forward<XA>(a));
  const EB eb = as_expression<V>(std::forward<XB>(b));
  const std::size_t na = ea.template extent<axes_get<typename EA::axes_type, A>>();
  const std::size_t nb = eb.template extent<axes_get<typename EB::axes_type, A>>();
  std::array<std::size_t, boost::mp11::mp_size<Out>::value> sizes{};
  boost::mp11::mp_for_each<boost::mp11::mp_iota<boost::mp11::mp_size<Out>>>([&](auto k) {
    if constexpr (decltype(k)::value == ka)
      sizes[k] = na + nb;
    else
      sizes[k] = ea.template extent<boost::mp11::mp_at_c<Out, decltype(k)::value>>();
  });
  using out_t = tensor_of<V, Out>;
  out_t out{typename out_t::extents_type(std::span<const std::size_t, sizes.size()>(sizes))};
  // [begin, end) of the joined axis, seen under A's name (any extent) to take an operand.
  const auto part = [&](std::size_t begin, std::size_t end) {
    const auto v = slice_view<joined>(out.view(), begin, end);
    return make_view<replace_axis<Out, joined, axis<A::fixed_name, dynamic>>>(
        v.data(), extents_array(v), v.strides());
  };
  part(0, na) = ea;
  part(na, na + nb) = eb;
  return out;
}

}  // namespace detail

/// x with its axes in the order `Axes...` (a permutation of x's). A view for a tensor or a view,
/// else a lazy node.
template <class... Axes, class X>
requires expression<X>
auto permute(X&& x) {
  using E = detail::expression_of<X>;
  static_assert(detail::check_permute<typename E::axes_type, Axes...>());
  using L = detail::permuted_axes<typename E::axes_type, Axes...>;
  if constexpr (detail::is_view_like_v<X&&>) {
    auto v = detail::view_of(std::forward<X>(x));
    return detail::make_view<L>(
        v.data(), std::array<std::size_t, sizeof...(Axes)>{v.template extent<Axes>()...},
        std::array<std::ptrdiff_t, sizeof...(Axes)>{v.template stride<Axes>()...});
  } else {
    return detail::permute_node<L, E>(
        detail::as_expression<typename E::value_type>(std::forward<X>(x)));
  }
}

/// x with axis From renamed To (only To's name is used; the extent stays From's). A view for a
/// tensor or a view, else a lazy node.
template <class From, class To, class X>
requires expression<X>
auto rename(X&& x) {
  using E = detail::expression_of<X>;
  static_assert(detail::check_rename<typename E::axes_type, From, To>());
  using own_from = axes_get<typename E::axes_type, From>;
  using L = detail::renamed_axes<typename E::axes_type, From, To>;
  if constexpr (detail::is_view_like_v<X&&>) {
    auto v = detail::view_of(std::forward<X>(x));
    return detail::make_view<L>(v.data(), detail::extents_array(v), v.strides());
  } else {
    return detail::rename_node<own_from, To, E>(
        detail::as_expression<typename E::value_type>(std::forward<X>(x)));
  }
}

/// The entries [begin, end) of x along axis A (nax::shape_error if out of range). The axis
/// becomes dynamic, bounded by A's bound if A has one. A view for a tensor or a view, else a
/// lazy node.
template <class A, class X>
requires expression<X>
auto slice(X&& x, std::size_t begin, std::size_t end) {
  using E = detail::expression_of<X>;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<typename E::axes_type, A>;
  if constexpr (detail::is_view_like_v<X&&>) {
    return detail::slice_view<own>(detail::view_of(std::forward<X>(x)), begin, end);
  } else {
    return detail::slice_node<own, E>(
        detail::as_expression<typename E::value_type>(std::forward<X>(x)), begin, end);
  }
}

/// The entries [Begin, End) of x along axis A, bounds known at compile time: the axis becomes
/// static, of extent End - Begin (as the graph builder's slice of constant bounds makes it).
/// nax::shape_error if End exceeds x's extent along A at run time; a compile error where A's
/// extent or bound is static and End exceeds it, or End is not past Begin (use
/// slice<A>(x, begin, end) for an empty slice: its axis is dynamic).
template <class A, std::size_t Begin, std::size_t End, class X>
requires expression<X>
auto slice(X&& x) {
  using E = detail::expression_of<X>;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<typename E::axes_type, A>;
  static_assert(detail::check_static_slice<own, Begin, End>());
  using R = detail::static_sliced_axis<own, End - Begin>;
  if constexpr (detail::is_view_like_v<X&&>) {
    return detail::slice_view<own, R>(detail::view_of(std::forward<X>(x)), Begin, End);
  } else {
    return detail::slice_node<own, E, R>(
        detail::as_expression<typename E::value_type>(std::forward<X>(x)), Begin, End);
  }
}

/// a and b joined along axis A (a's entries first), as a new tensor in a's axis order. All other
/// axes must agree (nax::shape_error naming the axis otherwise). The joined axis keeps A's name;
/// it is static when both operands' are, bounded by the sum of their bounds when both have one.
template <class A, class XA, class XB>
requires(expression<XA>&& expression<XB>) auto concat(XA&& a, XB&& b) {
  using EA = detail::expression_of<XA>;
  using EB = detail::expression_of<XB>;
  static_assert(detail::check_concat<A, A, EA, EB>());
  return detail::concat_into<A, detail::concat_axes<A, A, EA, EB>>(std::forward<XA>(a),
                                                                   std::forward<XB>(b));
}

/// The same, the joined axis named like B (a name new to the operands): under nax::jit, a
/// concat along a dynamic axis needs one, since A's name binds one extent per run and the joined
/// axis has another (the sum).
template <class A, class B, class XA, class XB>
requires(expression<XA>&& expression<XB>) auto concat(XA&& a, XB&& b) {
  using EA = detail::expression_of<XA>;
  using EB = detail::expression_of<XB>;
  static_assert(detail::check_concat<A, B, EA, EB>());
  return detail::concat_into<A, detail::concat_axes<A, B, EA, EB>>(std::forward<XA>(a),
                                                                   std::forward<XB>(b));
}

}  // namespace nax
