#pragma once
// nax::dot<Axes...>(a, b): the contraction of a and b over the named axes, by name.
//
// Axes of both operands that are not contracted are batch axes; the others are free. The result
// has the batch axes (in a's order), then a's free axes, then b's free axes, each in its
// operand's order: dot<k>(x[i, k], y[k, j]) is [i, j]; dot<k>(x[b, i, k], y[b, k, j]) is
// [b, i, j]; dot<k>(x[k], y[k]) is a scalar tensor. The product runs on the GEMM kernel
// (nax/kernels/gemm.hpp): each group of axes (batch, rows, columns, contracted) becomes one
// dimension of a batched matrix product, read through its stride where the operand's layout
// allows (any permutation or slice of a tensor does), else from a dense copy in group order (as
// the runtime's dot_general step does); an expression is computed run by run into the packed
// panels, without a temporary.

#include <array>
#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/kernels/gemm.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/expression_panel.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// One dimension of the matrix product made of a group of axes: their total extent and the
/// stride that steps through them, if one does.
struct axis_group {
  std::size_t extent = 1;
  std::ptrdiff_t stride = 0;
  bool single_stride = true;
};

template <class G, class View>
axis_group group_of(const View& v) {
  axis_group g;
  std::ptrdiff_t next = -1;  // the stride the next outer axis must have to continue the group
  boost::mp11::mp_for_each<
      boost::mp11::mp_reverse<boost::mp11::mp_transform<boost::mp11::mp_identity, G>>>(
      [&](auto id) {
        using A = typename decltype(id)::type;
        const std::size_t e = v.template extent<A>();
        const std::ptrdiff_t s = v.template stride<A>();
        g.extent *= e;
        if (e == 1) return;  // any stride
        if (next >= 0 && s != next) g.single_stride = false;
        if (next < 0) g.stride = s;
        next = s * static_cast<std::ptrdiff_t>(e);
      });
  return g;
}

template <class X>
inline constexpr bool is_strided_view_v = false;
template <class T, class... A>
inline constexpr bool is_strided_view_v<tensor_view<T, A...>> = true;

/// v's elements copied densely in the order of the axes of Batch, Rows, then Cols (by the
/// runtime's copy kernel, as the runtime's dot_general step copies such an operand): a matrix
/// the GEMM reads in place, whatever the order of v's axes.
template <class Batch, class Rows, class Cols, class View>
aligned_ptr<std::remove_const_t<typename View::value_type>> dense_in_group_order(const View& v) {
  using V = std::remove_const_t<typename View::value_type>;
  using order = boost::mp11::mp_append<Batch, Rows, Cols>;
  constexpr std::size_t n = boost::mp11::mp_size<order>::value;
  std::array<std::size_t, n> extent{};
  std::array<std::ptrdiff_t, n> src{}, dst{};
  std::size_t i = 0;
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, order>>(
      [&](auto id) {
        using A = typename decltype(id)::type;
        extent[i] = v.template extent<A>();
        src[i++] = v.template stride<A>();
      });
  const std::size_t count = nax::core_detail::fill_row_major_strides(extent, dst);
  aligned_ptr<V> copy = allocate_aligned<V>(count);
  if (count != 0)
    kernels::run_copy(kernels::plan_copy(sizeof(V), extent, src, dst), v.data(), copy.get());
  return copy;
}

/// Calls f(operand) with x as the kernel reads it, over the axis groups Batch, Rows and Cols: a
/// matrix_ref when x is a tensor or view (read in place when each group has one stride, else
/// from a dense copy in group order), else a panel source that computes the expression x into
/// the packed panels (or, for an operand of batch axes only, a copy).
template <class Batch, class Rows, class Cols, class X, class F>
void with_operand(const X& x, F&& f) {
  using V = typename X::value_type;
  if constexpr (is_strided_view_v<X> || requires { x.tensor().view(); }) {
    const auto v = [&] {
      if constexpr (is_strided_view_v<X>)
        return x;
      else
        return x.tensor().view();  // an rvalue tensor kept by the expression
    }();
    const axis_group gb = group_of<Batch>(v), gr = group_of<Rows>(v), gc = group_of<Cols>(v);
    if (gb.single_stride && gr.single_stride && gc.single_stride)
      return f(kernels::matrix_ref<const V>(v.data(), gr.stride, gc.stride, gb.stride));
    const auto copy = dense_in_group_order<Batch, Rows, Cols>(v);
    return f(kernels::matrix_ref<const V>(copy.get(), static_cast<std::ptrdiff_t>(gc.extent), 1,
                                          static_cast<std::ptrdiff_t>(gr.extent * gc.extent)));
  } else if constexpr (boost::mp11::mp_size<Rows>::value + boost::mp11::mp_size<Cols>::value > 0) {
    f(expression_panel<X, Batch, Rows, Cols>(x));
  } else {
    const tensor_of<V, Batch> copy(x);
    f(kernels::matrix_ref<const V>(copy.data(), 0, 0, group_of<Batch>(copy.view()).stride));
  }
}

template <class A, class EA, class EB>
void check_dot_extent(const EA& a, const EB& b) {
  const std::size_t ea = a.template extent<A>(), eb = b.template extent<A>();
  if (ea != eb) throw_axis_mismatch("nax::dot: ", A::name, "a", ea, "b", eb);
}

template <class EA, class EB>
struct dot_extents {
  const EA& a;
  const EB& b;
  template <class A>
  std::size_t extent() const {
    if constexpr (axes_contains_v<typename EA::axes_type, A>)
      return a.template extent<A>();
    else
      return b.template extent<A>();
  }
};

/// The rules of nax::dot<Contract...> for operands of element types VA, VB over axis lists LA,
/// LB, shared by the typed op and the traced one (nax/runtime/traced_ops.hpp): the checks, then
/// the axis groups. The result is the batch axes (in both, not contracted), then a's free axes,
/// then b's.
template <class VA, class VB, class LA, class LB, class... Contract>
struct dot_rule {
  static_assert(std::is_same_v<VA, VB>,
                "nax::dot: the operands have different element types; use nax::cast<U>(e)");
  static_assert(std::is_same_v<VA, float> || std::is_same_v<VA, double>,
                "nax::dot: float or double elements");
  // An error here means a contracted axis is not an axis of a, or not of b.
  static_assert((require<axes_contains_v<LA, Contract>,
                         error::axis_not_in_list<axis_diagnostic_name<Contract>>> &&
                 ...));
  static_assert((require<axes_contains_v<LB, Contract>,
                         error::axis_not_in_list<axis_diagnostic_name<Contract>>> &&
                 ...));
  static_assert(check_unique_axes<axes<Contract...>>);
  // Axes of both must agree (different static extents fail here, naming the axis).
  using all = axes_union<LA, LB>;
  using contracted = axes<axes_get<all, Contract>...>;
  using shared = axes_intersection<all, axes_intersection<LA, LB>>;
  using batch = axes_difference<shared, contracted>;
  using a_free = axes_difference<LA, LB>;
  using b_free = axes_difference<LB, LA>;
  using result = boost::mp11::mp_append<batch, a_free, b_free>;
};

/// The outcome (core/diagnostics.hpp) of nax::dot<Contract...> over operands of axis lists LA,
/// LB: a contracted axis missing from a, then from b, then the first shared axis whose extents
/// disagree.
template <class LA, class LB, class... Contract>
using dot_axes_outcome = first_failure<axis_missing<LA, Contract>..., axis_missing<LB, Contract>...,
                                       axes_disagreement<LA, LB>>;
template <class XA, class XB, class... Contract>
using dot_outcome = dot_axes_outcome<typename std::remove_cvref_t<XA>::axes_type,
                                     typename std::remove_cvref_t<XB>::axes_type, Contract...>;

}  // namespace detail

/// The contraction of a and b over the axes `Contract...` (each in both operands): a tensor
/// over the batch axes (in both, not contracted), then a's free axes, then b's. float or double.
template <class... Contract, class XA, class XB,
          class Outcome = detail::dot_outcome<XA, XB, Contract...>>
requires(expression<XA>&& expression<XB>) auto dot(XA&& a, XB&& b) {
  using EA = detail::expression_of<XA>;
  using EB = detail::expression_of<XB>;
  using LA = typename EA::axes_type;
  using LB = typename EB::axes_type;
  using V = typename EA::value_type;
  using rule = detail::dot_rule<V, typename EB::value_type, LA, LB, Contract...>;
  using contracted = typename rule::contracted;
  using shared = typename rule::shared;
  using batch = typename rule::batch;
  using a_free = typename rule::a_free;
  using b_free = typename rule::b_free;
  using out_axes = typename rule::result;

  const EA ea = detail::as_expression<V>(std::forward<XA>(a));
  const EB eb = detail::as_expression<V>(std::forward<XB>(b));
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, shared>>(
      [&](auto id) { detail::check_dot_extent<typename decltype(id)::type>(ea, eb); });

  tensor_of<V, out_axes> out(
      detail::extents_over<out_axes>::of(detail::dot_extents<EA, EB>{ea, eb}));
  if (out.size() == 0) return out;
  const std::size_t m = detail::group_extent<a_free>(ea), n = detail::group_extent<b_free>(eb),
                    k = detail::group_extent<contracted>(ea),
                    batches = detail::group_extent<batch>(ea);
  const auto plan = kernels::plan_gemm<V>(m, n, k, batches);
  const kernels::matrix_ref<V> c(out.data(), static_cast<std::ptrdiff_t>(n), 1,
                                 static_cast<std::ptrdiff_t>(m * n));
  detail::with_operand<batch, a_free, contracted>(ea, [&](const auto& opa) {
    detail::with_operand<batch, contracted, b_free>(
        eb, [&](const auto& opb) { kernels::gemm(plan, opa, opb, c); });
  });
  return out;
}

/// nax::dot over an axis an operand lacks, or over operands whose shared axes disagree: declared,
/// never defined. Its return type is the error, so the call is the compile error, at the caller's
/// line, naming the mistake (core/diagnostics.hpp).
template <class... Contract, class XA, class XB,
          class Outcome = detail::dot_outcome<XA, XB, Contract...>>
requires(expression<XA>&& expression<XB>&& detail::fails<Outcome>) Outcome dot(XA&& a, XB&& b);

}  // namespace nax
