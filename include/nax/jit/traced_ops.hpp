#pragma once
// nax::dot, sum, mean, max, min, softmax, log_softmax, layer_norm, size, permute, rename, split,
// merge, slice, concat and eval on traced values (while nax::jit traces a function): each adds
// graph nodes and returns a traced value of the type the typed op would return, instead of
// computing. Their operands, if elementwise expressions, become one fused node first
// (fused_expression.hpp).
//
// These are overloads of the typed ops, picked over them only for traced operands: dot, softmax
// and layer_norm by a constraint that subsumes the typed op's; the reductions and eval (whose
// constraints cannot be subsumed) by a parameter `N<P...>` taken by value, which is more
// specialized than the typed op's `X&&`. So the same generic lambda runs eagerly on tensors and
// traced under nax::jit. This header must be included before such a lambda is defined.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/graph/builder.hpp>
#include <nax/jit/fused_expression.hpp>
#include <nax/jit/traced.hpp>
#include <nax/ops/reduce_kind.hpp>
#include <nax/typed/axis_split.hpp>
#include <nax/typed/dot.hpp>
#include <nax/typed/dynamic_slice.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/layer_norm.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/size.hpp>
#include <nax/typed/softmax.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <ops::reduce_kind Kind, class... Axes, class X>
auto traced_reduce(const X& x) {
  using V = typename X::value_type;
  using in_axes = typename X::axes_type;
  // An error here means a reduced axis is not an axis of the expression.
  static_assert((require<axes_contains_v<in_axes, Axes>,
                         error::axis_not_in_list<axis_diagnostic_name<Axes>>> &&
                 ...));
  static_assert(check_unique_axes<axes<Axes...>>);
  static_assert(!std::is_same_v<V, bool>, "nax: reduce a bool expression after nax::cast<int>(e)");
  const graph::axis_ref reduced[] = {graph::axis_ref(Axes::name)...};
  const graph::value v = lower(x);
  return make_traced<V, axes_difference<in_axes, axes<Axes...>>>(
      v.owner().reduce(Kind, v, reduced));
}

/// A part of nax::split as the graph's dim: static, or dynamic (its extent follows).
template <class A>
dim split_part() {
  if constexpr (A::is_static)
    return dim::named(axis_name(A::name), A::static_extent);
  else
    return dim(axis_name(A::name));
}

template <class A, class V, class P>
graph::value layer_norm_parameter(graph::builder& g, const P& p) {
  if constexpr (std::is_arithmetic_v<P>) {
    return g.broadcast(g.constant(static_cast<double>(static_cast<V>(p)), dtype_of<V>),
                       shape_of<V, A>());
  } else {
    // An error here means gamma or beta is neither a scalar nor computed from the traced
    // function's inputs over exactly the normalized axis.
    static_assert(is_traced_v<P> && std::is_same_v<typename P::axes_type, axes<A>> &&
                      std::is_same_v<typename P::value_type, V>,
                  "nax::jit: layer_norm's gamma and beta must be scalars or traced values over "
                  "the normalized axis alone");
    return lower(p);
  }
}

}  // namespace detail

/// nax::dot on traced operands: a dot_general node. (A mistake selects the typed layer's twin,
/// declared in typed/dot.hpp, which reports it at the call.)
template <class... Contract, class XA, class XB,
          class Outcome = detail::dot_outcome<XA, XB, Contract...>>
requires(expression<XA>&& expression<XB> &&
         (detail::is_traced_v<XA> ||
          detail::is_traced_v<XB>)&&!detail::fails<Outcome>) auto dot(XA&& a, XB&& b) {
  using EA = std::remove_cvref_t<XA>;
  using EB = std::remove_cvref_t<XB>;
  using LA = typename EA::axes_type;
  using LB = typename EB::axes_type;
  // An error here means an operand is a captured tensor: pass it as an input of nax::jit.
  static_assert(detail::is_traced_v<XA> && detail::is_traced_v<XB>,
                "nax::jit: both operands of nax::dot must be computed from the traced inputs");
  using rule =
      detail::dot_rule<typename EA::value_type, typename EB::value_type, LA, LB, Contract...>;
  using contracted = typename rule::contracted;
  using batch = typename rule::batch;

  const graph::value va = detail::lower(a), vb = detail::lower(b);
  std::vector<graph::axis_pair> contract_pairs, batch_pairs;
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, contracted>>(
      [&](auto id) {
        using A = typename decltype(id)::type;
        contract_pairs.push_back({A::name, A::name});
      });
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, batch>>(
      [&](auto id) {
        using A = typename decltype(id)::type;
        batch_pairs.push_back({A::name, A::name});
      });
  return detail::make_traced<typename EA::value_type, typename rule::result>(
      va.owner().dot_general(va, vb, contract_pairs, batch_pairs));
}

// The reductions on traced operands: a reduce node.
template <class... Axes, template <class...> class N, class... P>
requires(sizeof...(Axes) > 0 && detail::is_traced_v<N<P...>>) auto sum(N<P...> x) {
  return detail::traced_reduce<ops::reduce_kind::sum, Axes...>(x);
}
template <class... Axes, template <class...> class N, class... P>
requires(sizeof...(Axes) > 0 && detail::is_traced_v<N<P...>>) auto mean(N<P...> x) {
  return detail::traced_reduce<ops::reduce_kind::mean, Axes...>(x);
}
template <class... Axes, template <class...> class N, class... P>
requires(sizeof...(Axes) > 0 && detail::is_traced_v<N<P...>>) auto max(N<P...> x) {
  return detail::traced_reduce<ops::reduce_kind::max, Axes...>(x);
}
template <class... Axes, template <class...> class N, class... P>
requires(sizeof...(Axes) > 0 && detail::is_traced_v<N<P...>>) auto min(N<P...> x) {
  return detail::traced_reduce<ops::reduce_kind::min, Axes...>(x);
}

/// nax::eval on a traced expression: the fused node, as a traced value.
template <template <class...> class N, class... P>
requires detail::is_traced_v<N<P...>>
auto eval(N<P...> e) { return detail::to_traced(e); }

/// nax::size on a traced operand: a get_dimension_size node, the run's extent along A (under
/// every size policy, docs/bounded.md).
template <class A, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto size(X&& x) {
  using E = std::remove_cvref_t<X>;
  // An error here means A is not an axis of x.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  const graph::value v = detail::lower(x);
  return detail::make_traced<std::int32_t, axes<>>(
      v.owner().get_dimension_size(v, graph::axis_ref(A::name), dtype::i32));
}

/// nax::permute on a traced operand: a transpose node (the axes by name).
template <class... Axes, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto permute(X&& x) {
  using E = std::remove_cvref_t<X>;
  static_assert(detail::check_permute<typename E::axes_type, Axes...>());
  using L = detail::permuted_axes<typename E::axes_type, Axes...>;
  const graph::value v = detail::lower(x);
  const graph::axis_ref perm[] = {graph::axis_ref(Axes::name)...};
  return detail::make_traced<typename E::value_type, L>(v.owner().transpose(v, perm));
}

/// nax::rename on a traced operand: a rename node. A renamed dynamic axis is bound as its source
/// (graph::builder::rename): keys renamed from `seq` to `kseq` leave the cache keyed on `seq`.
template <class From, class To, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto rename(X&& x) {
  using E = std::remove_cvref_t<X>;
  static_assert(detail::check_rename<typename E::axes_type, From, To>());
  using L = detail::renamed_axes<typename E::axes_type, From, To>;
  const graph::value v = detail::lower(x);
  return detail::make_traced<typename E::value_type, L>(
      v.owner().rename(v, graph::axis_ref(From::name), To::name));
}

/// nax::split on a traced operand: a reshape node (graph::builder::split; the axis split must be
/// static in the graph).
template <class Whole, class A, class B, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto split(X&& x) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  static_assert(detail::check_split<L, Whole, A, B>());
  using own = axes_get<L, Whole>;
  const graph::value v = detail::lower(x);
  return detail::make_traced<typename E::value_type, detail::split_axes<L, own, A, B>>(
      v.owner().split(v, graph::axis_ref(Whole::name), detail::split_part<A>(),
                      detail::split_part<B>()));
}

/// nax::merge on a traced operand: a reshape node, after a transpose node if B does not follow A
/// (graph::builder::merge; both axes must be static in the graph).
template <class A, class B, class To, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto merge(X&& x) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  static_assert(detail::check_merge<L, A, B, To>());
  using out = detail::merged_axes<L, axes_get<L, A>, axes_get<L, B>, To>;
  const graph::value v = detail::lower(x);
  graph::value m = v.owner().merge(v, graph::axis_ref(A::name), graph::axis_ref(B::name), To::name);
  if constexpr (To::is_static) {
    if (m.shape()[*m.shape().index_of(To::name)].extent() != To::static_extent)
      detail::throw_shape_error("nax::merge: axis '", To::name, "' is static with extent ",
                                To::static_extent, ", not ", A::name, " × ", B::name, " = ",
                                m.shape()[*m.shape().index_of(To::name)].extent());
  }
  return detail::make_traced<typename E::value_type, out>(m);
}

/// nax::slice on a traced operand: a slice node [begin, end) (static in the graph; the typed
/// result's axis dynamic, as the eager slice's: bounds given as values).
template <class A, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto slice(X&& x, std::size_t begin,
                                                            std::size_t end) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<L, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  if (begin > end) detail::check_slice(A::name, begin, end, end);
  const graph::value v = detail::lower(x);
  return detail::make_traced<typename E::value_type,
                             detail::replace_axis<L, own, detail::sliced_axis<own>>>(
      v.owner().slice(v, graph::axis_ref(A::name), static_cast<std::int64_t>(begin),
                      static_cast<std::int64_t>(end)));
}

/// nax::slice<A, Begin, End> on a traced operand: the same slice node, its axis static in the
/// typed result too.
template <class A, std::size_t Begin, std::size_t End, class X>
requires(expression<X>&& detail::is_traced_v<X>) auto slice(X&& x) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(detail::require<axes_contains_v<L, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  static_assert(detail::check_static_slice<own, Begin, End>());
  const graph::value v = detail::lower(x);
  return detail::make_traced<
      typename E::value_type,
      detail::replace_axis<L, own, detail::static_sliced_axis<own, End - Begin>>>(
      v.owner().slice(v, graph::axis_ref(A::name), static_cast<std::int64_t>(Begin),
                      static_cast<std::int64_t>(End)));
}

namespace detail {

/// A run-time start while tracing: a traced rank-0 integer, or an integer (a constant node).
template <class S>
graph::value traced_start(graph::builder& g, const S& start) {
  if constexpr (slice_start<S>) {
    return g.constant(static_cast<double>(start_value(start)), nax::dtype::i64);
  } else {
    using E = expression_of<const S&>;
    using V = typename E::value_type;
    // An error here means the start of nax::dynamic_slice or nax::dynamic_update_slice, or the
    // size of nax::set_dimension_size, is not an integer, or has axes.
    static_assert(std::is_integral_v<V> && !std::is_same_v<V, bool> &&
                      boost::mp11::mp_empty<typename E::axes_type>::value,
                  "nax::dynamic_slice: the start is a rank-0 integer");
    return lower(start);
  }
}

template <class A, std::size_t Size, class X, class S>
auto traced_dynamic_slice(const X& x, const S& start) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  const graph::value v = lower(x);
  return make_traced<typename E::value_type,
                     replace_axis<L, own, axis<own::fixed_name, static_cast<int>(Size)>>>(
      v.owner().dynamic_slice(v, graph::axis_ref(A::name), traced_start(v.owner(), start),
                              static_cast<std::int64_t>(Size)));
}

template <class A, class X, class U, class S>
auto traced_dynamic_update_slice(const X& x, const U& update, const S& start) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  // An error here means x has no axis named like A.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  // An error here means the update does not have x's axes (A's extent may differ).
  static_assert(check_assignable<L, typename std::remove_cvref_t<U>::axes_type, true>());
  static_assert(std::is_same_v<typename E::value_type, typename std::remove_cvref_t<U>::value_type>,
                "nax::dynamic_update_slice: the update's element type is not x's");
  graph::value v = lower(x);
  graph::value u = lower(update);
  // The graph matches the update's dims by position: the update in x's order.
  std::vector<graph::axis_ref> order;
  bool same = true;
  [&]<class... B>(axes<B...>) {
    std::size_t k = 0;
    ((order.push_back(graph::axis_ref(B::name)),
      same = same && u.shape()[k++].name().view() == B::name),
     ...);
  }(L{});
  if (!same) u = u.owner().transpose(u, order);
  return make_traced<typename E::value_type, L>(v.owner().dynamic_update_slice(
      v, u, graph::axis_ref(A::name), traced_start(v.owner(), start)));
}

}  // namespace detail

/// nax::dynamic_slice on a traced operand: the graph's dynamic_slice (typed/dynamic_slice.hpp);
/// the start a traced rank-0 integer or an integer.
template <class A, std::size_t Size, class X, class S>
requires(expression<X> && detail::slice_start<S> && detail::is_traced_v<X>)
auto dynamic_slice(const X& x, const S& start) {
  return detail::traced_dynamic_slice<A, Size>(x, start);
}
template <class A, std::size_t Size, class X, class S>
requires(expression<X> && detail::is_traced_v<S>)
auto dynamic_slice(const X& x, const S& start) {
  return detail::traced_dynamic_slice<A, Size>(x, start);
}

/// nax::dynamic_update_slice on traced operands: the graph's dynamic_update_slice.
template <class A, class X, class U, class S>
requires(expression<X> && expression<U> && detail::slice_start<S> &&
         (detail::is_traced_v<X> || detail::is_traced_v<U>))
auto dynamic_update_slice(const X& x, const U& update, const S& start) {
  return detail::traced_dynamic_update_slice<A>(x, update, start);
}
template <class A, class X, class U, class S>
requires(expression<X> && expression<U> && detail::is_traced_v<S>)
auto dynamic_update_slice(const X& x, const U& update, const S& start) {
  return detail::traced_dynamic_update_slice<A>(x, update, start);
}

namespace detail {

template <class A, class B, class X, class S>
auto traced_set_dimension_size(const X& x, const S& n) {
  using E = std::remove_cvref_t<X>;
  using L = typename E::axes_type;
  // An error here means A is not an axis of x.
  static_assert(require<axes_contains_v<L, A>, error::axis_not_in_list<axis_diagnostic_name<A>>>);
  using own = axes_get<L, A>;
  // An error here means A is dynamic without a bound: the new axis needs one.
  static_assert(own::is_static || own::is_bounded,
                "nax::set_dimension_size: the axis must be static or bounded");
  const graph::value v = lower(x);
  return make_traced<typename E::value_type, replace_axis<L, own, sized_axis<own, B>>>(
      v.owner().set_dimension_size(v, graph::axis_ref(A::name), traced_start(v.owner(), n),
                                   B::name));
}

}  // namespace detail

/// nax::set_dimension_size on a traced operand: the graph's set_dimension_size (the size a
/// traced rank-0 integer made from inputs, constants and nax::size, or an integer).
template <class A, class B, class X, class S>
requires(expression<X> && detail::slice_start<S> && detail::is_traced_v<X>)
auto set_dimension_size(const X& x, const S& n) {
  return detail::traced_set_dimension_size<A, B>(x, n);
}
template <class A, class B, class X, class S>
requires(expression<X> && detail::is_traced_v<S>)
auto set_dimension_size(const X& x, const S& n) {
  return detail::traced_set_dimension_size<A, B>(x, n);
}

namespace detail {

/// a and b as one concat node along A, the joined axis named like B (B = A: the graph's concat
/// without a name, whose joined axis must be static in each operand).
template <class A, class B, class XA, class XB>
auto traced_concat(const XA& a, const XB& b) {
  using EA = std::remove_cvref_t<XA>;
  using EB = std::remove_cvref_t<XB>;
  // An error here means an operand is a captured tensor: pass it as an input of nax::jit.
  static_assert(is_traced_v<XA> && is_traced_v<XB>,
                "nax::jit: both operands of nax::concat must be computed from the traced inputs");
  static_assert(check_concat<A, B, EA, EB>());
  // The graph's concat pairs b's axes with a's by name (transposing b if its order differs).
  const graph::value both[] = {lower(a), lower(b)};
  const graph::value &va = both[0], &vb = both[1];
  using out_axes = concat_axes<A, B, EA, EB>;
  using V = typename EA::value_type;
  if constexpr (same_axis_name_v<A, B>) {
    constexpr std::size_t ka = axes_index_of_v<typename EA::axes_type, A>,
                          kb = axes_index_of_v<typename EB::axes_type, A>;
    for (const nax::dim& d : {va.shape()[ka], vb.shape()[kb]}) {
      if (d.is_dynamic())
        throw_shape_error("nax::concat<", A::name, ">(", va.shape().to_string(), ", ",
                          vb.shape().to_string(), ") under nax::jit: axis '", A::name,
                          "' is dynamic, and its name binds one extent per run; name the "
                          "joined axis: nax::concat<",
                          A::name, ", joined>(a, b)");
    }
    return make_traced<V, out_axes>(va.owner().concat(both, graph::axis_ref(A::name)));
  } else {
    return make_traced<V, out_axes>(va.owner().concat(both, graph::axis_ref(A::name), B::name));
  }
}

}  // namespace detail

/// nax::concat on traced operands: a concat node (the joined axis must be static in each).
template <class A, class XA, class XB>
requires(expression<XA>&& expression<XB> &&
         (detail::is_traced_v<XA> || detail::is_traced_v<XB>)) auto concat(XA&& a, XB&& b) {
  return detail::traced_concat<A, A>(a, b);
}

/// nax::concat<A, B> on traced operands: a concat node whose joined axis is named like B (static
/// or bounded operands' axes; a bounded one makes it a bounded axis whose extent the run
/// computes, the sum).
template <class A, class B, class XA, class XB>
requires(expression<XA>&& expression<XB> &&
         (detail::is_traced_v<XA> || detail::is_traced_v<XB>)) auto concat(XA&& a, XB&& b) {
  return detail::traced_concat<A, B>(a, b);
}

/// nax::softmax on a traced operand: a softmax node.
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires(expression<X>&& detail::is_traced_v<X> && !detail::fails<Outcome>) auto softmax(X&& x) {
  using E = std::remove_cvref_t<X>;
  static_assert(detail::check_softmax<A, E, false>());
  const graph::value v = detail::lower(x);
  return detail::make_traced<typename E::value_type, typename E::axes_type>(
      v.owner().softmax(v, graph::axis_ref(A::name)));
}

/// nax::log_softmax on a traced operand: a log_softmax node (the typed op's row kernel).
template <class A, class X, class Outcome = axes_missing_from<X, A>>
requires(expression<X>&& detail::is_traced_v<X> &&
         !detail::fails<Outcome>) auto log_softmax(X&& x) {
  using E = std::remove_cvref_t<X>;
  static_assert(detail::check_softmax<A, E, true>());
  const graph::value v = detail::lower(x);
  return detail::make_traced<typename E::value_type, typename E::axes_type>(
      v.owner().log_softmax(v, graph::axis_ref(A::name)));
}

/// nax::layer_norm on a traced operand: a layer_norm node (gamma and beta: traced values over
/// the normalized axis, or scalars).
template <class A, class X, class G, class B, class S = double>
requires(expression<X> && (detail::is_traced_v<X> || detail::is_traced_v<G> ||
                           detail::is_traced_v<B>)) auto layer_norm(X&& x, G&& gamma, B&& beta,
                                                                    S eps = 1e-5) {
  using E = std::remove_cvref_t<X>;
  using V = typename E::value_type;
  static_assert(detail::is_traced_v<X>,
                "nax::jit: layer_norm's operand must be computed from the traced inputs");
  static_assert(detail::check_layer_norm<A, E>());
  const graph::value v = detail::lower(x);
  graph::builder& g = v.owner();
  const graph::value gv = detail::layer_norm_parameter<A, V>(g, std::remove_cvref_t<G>(gamma));
  const graph::value bv = detail::layer_norm_parameter<A, V>(g, std::remove_cvref_t<B>(beta));
  return detail::make_traced<V, typename E::axes_type>(
      g.layer_norm(v, gv, bv, graph::axis_ref(A::name), static_cast<double>(static_cast<V>(eps))));
}

}  // namespace nax
