#pragma once
// Reductions over named axes: sum, mean, max, min. The input expression is evaluated inside the
// reduction loop (no temporary for it), in vectors along whichever axis is contiguous: across
// the reduced axis (vector accumulators, combined at the end) when it is innermost, else along
// the kept inner axis (each output chunk accumulated while it sits in L1). The result is a
// tensor over the remaining axes, in the input's order; in a larger expression
// (`x - max<hidden>(x)`) it is computed once and read like any tensor. Operands not at unit
// stride are read through buffers (leaf_stage), so each reduction compiles one loop.

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/row_reduce.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {

namespace detail {

/// A typed reduction's loop after coalescing: its shape; how many of its axes are kept (a
/// prefix when the inner axis is reduced, else a suffix: merged axes never mix kept and reduced
/// ones, whose output strides differ); and, with the inner axis kept, the output chunk a work
/// item accumulates.
template <std::size_t R>
struct reduce_loop {
  loop_shape<R> shape;
  std::size_t kept_dims = 0;
  std::size_t chunk = 0;
};

/// The output as a destination over loop order `Order`: its strides along the kept axes, 0
/// along the reduced ones.
template <class Order, class V, class Kept>
auto reduce_destination(tensor_of<V, Kept>& out) {
  constexpr std::size_t R = boost::mp11::mp_size<Order>::value;
  destination_cursor<V, R> d;
  d.base = out.data();
  const auto own = row_major_strides(out.extents());
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<R>>([&](auto k) {
    using A = boost::mp11::mp_at_c<Order, decltype(k)::value>;
    if constexpr (axes_contains_v<Kept, A>)
      d.stride[k] = own[axes_index_of_v<Kept, A>];
    else
      d.stride[k] = 0;
  });
  return d;
}

/// The loop over `ext`, coalesced for the destination and every leaf of cursor c (their
/// strides rewritten). The innermost axis stays, even of extent 1: the loop is compiled for its
/// role. With the inner axis kept, a work item's output chunk: up to 16 KiB, so it stays in L1
/// beside the input streaming past, and long runs of each input row (the prefetchers start over
/// on every row); split finer only when there are too few kept rows to keep every thread busy.
template <bool InnerReduced, class V, std::size_t R, class C>
reduce_loop<R> coalesce_reduction(const std::array<std::size_t, R>& ext, C& c,
                                  destination_cursor<V, R>& d) {
  reduce_loop<R> loop;
  loop_shape<R>& shape = loop.shape;
  shape.extent = ext;
  shape.rank = coalesce_axes(
      shape.extent, R,
      [&](auto&& f) {
        f(d.stride);
        c.for_each_leaf([&](auto& leaf) { f(leaf.stride); });
      },
      /*keep_inner=*/true);
  c.for_each_leaf([&](auto& leaf) { leaf.step = leaf.stride[shape.rank - 1]; });
  for (std::size_t j = 0; j < shape.rank; ++j) loop.kept_dims += d.stride[j] != 0;
  const std::size_t n = shape.inner();
  loop.chunk = n;
  if constexpr (!InnerReduced) {
    constexpr std::size_t w = simd::width<V>;
    std::size_t kept_rows = 1;
    for (std::size_t j = shape.rank - loop.kept_dims; j + 1 < shape.rank; ++j)
      kept_rows *= shape.extent[j];
    const std::size_t threads = num_threads();
    const std::size_t splits = kept_rows >= threads ? 1 : (threads + kept_rows - 1) / kept_rows;
    const std::size_t chunk =
        std::min<std::size_t>({n, 16 * 1024 / sizeof(V), (n + splits - 1) / splits});
    loop.chunk = std::max<std::size_t>(w, (chunk + w - 1) / w * w);
  }
  return loop;
}

/// Positions every leaf of `cur` at the row of loop index idx (its outer axes), and returns the
/// destination's position there.
template <class C, class V, std::size_t R>
V* reduce_position(C& cur, const destination_cursor<V, R>& d, const loop_shape<R>& shape,
                   const std::size_t* idx) {
  cur.for_each_leaf(
      [&](auto& leaf) { leaf.start_row(row_offset<R>(leaf.stride, idx, shape.rank - 1)); });
  return d.base + row_offset<R>(d.stride, idx, shape.rank - 1);
}

/// Positions of a row a reduction stages at a time when a leaf is not at unit stride
/// (leaf_stage): a multiple of four vectors, so that accumulate_row, resumed segment after
/// segment, combines the same values in the same order as over the whole row.
template <class V>
inline constexpr std::size_t reduce_stage_elements = std::max<std::size_t>(256, 4 * simd::width<V>);

/// Work items [lo, hi) of a reduction whose inner axis is reduced: items are output elements;
/// each reduces all its reduced rows in vector accumulators.
template <class Red, class C, class V, std::size_t R>
void reduce_row_items(C cur, const destination_cursor<V, R>& d, const reduce_loop<R>& loop,
                      bool staged, std::size_t lo, std::size_t hi) {
  using vec = simd::vec<V>;
  const loop_shape<R>& shape = loop.shape;
  const std::size_t kept_dims = loop.kept_dims, n = shape.inner();
  const std::size_t segment = staged ? reduce_stage_elements<V> : n;
  const leaf_stage stage(cur, segment, staged);
  std::array<std::size_t, (R > 0 ? R : 1)> idx{};
  std::size_t reduced_rows = 1;
  for (std::size_t j = kept_dims; j + 1 < shape.rank; ++j) reduced_rows *= shape.extent[j];
  for (std::size_t item = lo; item < hi; ++item) {
    split_index(item, shape.extent.data(), kept_dims, idx.data());
    const vec id(Red::template identity<V>());
    vec acc[4] = {id, id, id, id};
    V* target = nullptr;
    for (std::size_t r = 0; r < reduced_rows; ++r) {
      split_index(r, shape.extent.data() + kept_dims, shape.rank - 1 - kept_dims,
                  idx.data() + kept_dims);
      target = reduce_position(cur, d, shape, idx.data());
      for (std::size_t from = 0; from < n; from += segment) {
        const std::size_t count = std::min(segment, n - from);
        stage.enter(cur, from, count);
        accumulate_row<Red>(
            row_reader<V, C, row_access::contiguous>{&cur}, count, [](const vec& v) { return v; },
            acc);
        leaf_stage::leave(cur);
      }
    }
    *target = Red::combine(*target, combine_accumulators<Red>(acc));
  }
}

/// Work items [lo, hi) of a reduction whose inner axis is kept: items are (kept outer row,
/// chunk of the inner axis); each folds every reduced row into its chunk of the output.
template <class Red, class C, class V, std::size_t R>
void reduce_column_items(C cur, const destination_cursor<V, R>& d, const reduce_loop<R>& loop,
                         bool staged, std::size_t lo, std::size_t hi) {
  using vec = simd::vec<V>;
  constexpr std::size_t w = simd::width<V>;
  const loop_shape<R>& shape = loop.shape;
  const std::size_t kept_dims = loop.kept_dims, n = shape.inner();
  const std::size_t chunk = loop.chunk;
  const std::size_t segment = staged ? reduce_stage_elements<V> : chunk;
  const leaf_stage stage(cur, segment, staged);
  std::array<std::size_t, (R > 0 ? R : 1)> idx{};
  const std::size_t reduced_dims = shape.rank - kept_dims;
  std::size_t reduced_rows = 1;
  for (std::size_t j = 0; j < reduced_dims; ++j) reduced_rows *= shape.extent[j];
  const std::size_t chunks = (n + chunk - 1) / chunk;
  for (std::size_t item = lo; item < hi; ++item) {
    const std::size_t kept_row = item / chunks, part = item % chunks;
    split_index(kept_row, shape.extent.data() + reduced_dims, kept_dims - 1,
                idx.data() + reduced_dims);
    const std::size_t begin = part * chunk, end = std::min(n, begin + chunk);
    for (std::size_t r = 0; r < reduced_rows; ++r) {
      split_index(r, shape.extent.data(), reduced_dims, idx.data());
      V* const row = reduce_position(cur, d, shape, idx.data());
      for (std::size_t from = begin; from < end; from += segment) {
        const std::size_t count = std::min(segment, end - from);
        stage.enter(cur, from, count);
        V* const target = row + from;
        const auto x = cur.template reader<V, row_access::contiguous>();
        std::size_t i = 0;
        for (; i + w <= count; i += w) {
          const vec v = Red::combine(vec::load_unaligned(target + i), x.load(i));
          v.store_unaligned(target + i);
        }
        for (; i < count; ++i) target[i] = Red::combine(target[i], x.scalar(i));
        leaf_stage::leave(cur);
      }
    }
  }
}

/// The work items of a reduction's loop (see reduce_row_items and reduce_column_items).
template <bool InnerReduced, std::size_t R>
std::size_t reduce_items(const reduce_loop<R>& loop) {
  const loop_shape<R>& shape = loop.shape;
  std::size_t items = 1;
  if constexpr (InnerReduced) {
    for (std::size_t j = 0; j < loop.kept_dims; ++j) items *= shape.extent[j];
  } else {
    items = (shape.inner() + loop.chunk - 1) / loop.chunk;
    for (std::size_t j = shape.rank - loop.kept_dims; j + 1 < shape.rank; ++j)
      items *= shape.extent[j];
  }
  return items;
}

/// out (filled with Red's identity) = the reduction Red of e over axes Reduced, in parallel.
template <class Red, class V, class E, class Kept, class Reduced>
void reduce_into(const E& e, tensor_of<V, Kept>& out) {
  constexpr bool inner_reduced =
      axes_contains_v<Reduced, boost::mp11::mp_back<typename E::axes_type>>;
  // Loop order: kept axes then reduced ones when the innermost input axis is reduced (each
  // output element is one run of the loop), else reduced then kept (the inner axis is kept).
  using order = std::conditional_t<inner_reduced, boost::mp11::mp_append<Kept, Reduced>,
                                   boost::mp11::mp_append<Reduced, Kept>>;
  constexpr std::size_t R = boost::mp11::mp_size<order>::value;
  std::array<std::size_t, R> ext{};
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<R>>([&](auto k) {
    ext[k] = e.template extent<boost::mp11::mp_at_c<order, decltype(k)::value>>();
  });
  auto c = e.template cursor<order>();
  destination_cursor<V, R> d = reduce_destination<order, V, Kept>(out);
  const reduce_loop<R> loop = coalesce_reduction<inner_reduced>(ext, c, d);

  const std::size_t items = reduce_items<inner_reduced>(loop);
  const std::size_t per_item = std::max<std::size_t>(
      1, nax::core_detail::element_count(ext) / std::max<std::size_t>(items, 1));
  const std::size_t grain = std::max<std::size_t>(1, parallel_grain_elements / per_item);
  const bool staged = !contiguous_rows(c);
  parallel_for(0, items, grain, [&](std::size_t lo, std::size_t hi) {
    if constexpr (inner_reduced)
      reduce_row_items<Red>(c, d, loop, staged, lo, hi);
    else
      reduce_column_items<Red>(c, d, loop, staged, lo, hi);
  });
}

/// A reduction's operand X (an expression) and axes (at least one). A concept, so that the twins
/// below subsume the reductions' constraints.
template <class X, class... Axes>
concept reduction_of = sizeof...(Axes) > 0 && expression<X>;

template <class Red, bool Mean, class... Axes, class X>
auto reduce(X&& x) {
  using E = expression_of<X>;
  using V = typename E::value_type;
  using in_axes = typename E::axes_type;
  using reduced_request = axes<Axes...>;
  // An error here means a reduced axis is not an axis of the expression.
  static_assert((require<axes_contains_v<in_axes, Axes>,
                         error::axis_not_in_list<axis_diagnostic_name<Axes>>> &&
                 ...));
  static_assert(check_unique_axes<reduced_request>);
  static_assert(!std::is_same_v<V, bool>, "nax: reduce a bool expression after nax::cast<int>(e)");
  using Kept = axes_difference<in_axes, reduced_request>;
  using Reduced = axes_intersection<in_axes, reduced_request>;

  const E e = as_expression<V>(std::forward<X>(x));
  tensor_of<V, Kept> out(extents_over<Kept>::of(e));
  std::size_t count = 1;
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, Reduced>>(
      [&](auto id) { count *= e.template extent<typename decltype(id)::type>(); });
  if (count == 0 && !std::is_same_v<Red, reducers::sum>)
    throw_shape_error("nax::", Red::name, " over an empty axis: there is no ", Red::name,
                      " of no elements");
  out.fill(Red::template identity<V>());
  if (out.size() != 0 && count != 0) reduce_into<Red, V, E, Kept, Reduced>(e, out);
  if constexpr (Mean) {
    if (count == 0)
      throw_shape_error("nax::mean over an empty axis: there is no mean of no elements");
    out /= static_cast<V>(count);
  }
  return out;
}

}  // namespace detail

/// The sum over the named axes; a tensor over the remaining axes, in the input's order.
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires detail::reduction_of<X, Axes...>
auto sum(X&& x) { return detail::reduce<reducers::sum, false, Axes...>(std::forward<X>(x)); }
/// The mean over the named axes (the sum divided by the number of reduced elements).
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires detail::reduction_of<X, Axes...>
auto mean(X&& x) { return detail::reduce<reducers::sum, true, Axes...>(std::forward<X>(x)); }
/// The largest element over the named axes (nax::shape_error over an empty axis).
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires detail::reduction_of<X, Axes...>
auto max(X&& x) { return detail::reduce<reducers::max, false, Axes...>(std::forward<X>(x)); }
/// The smallest element over the named axes (nax::shape_error over an empty axis).
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires detail::reduction_of<X, Axes...>
auto min(X&& x) { return detail::reduce<reducers::min, false, Axes...>(std::forward<X>(x)); }

/// The reductions over an axis the expression lacks: declared, never defined. The return type
/// is the error, so the call is the compile error, at the caller's line (core/diagnostics.hpp).
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires(detail::reduction_of<X, Axes...>&& detail::fails<Outcome>) Outcome sum(X&& x);
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires(detail::reduction_of<X, Axes...>&& detail::fails<Outcome>) Outcome mean(X&& x);
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires(detail::reduction_of<X, Axes...>&& detail::fails<Outcome>) Outcome max(X&& x);
template <class... Axes, class X, class Outcome = axes_missing_from<X, Axes...>>
requires(detail::reduction_of<X, Axes...>&& detail::fails<Outcome>) Outcome min(X&& x);

}  // namespace nax::NAX_ISA
