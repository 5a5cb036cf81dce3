#pragma once
// The runtime reduction kernel: sum, mean, max or min of a dense row-major tensor over any subset
// of its axes, the result dense row-major over the kept axes in order. plan_reduce coalesces the
// axes (core/strided_layout.hpp: drops those of extent 1, merges neighbours of the same role),
// which leaves the two cases of typed/reduce.hpp:
// - the innermost axis reduced: each output element folds runs of the input in vectors, with the
//   typed row body (nax::detail::accumulate_row), threaded over output elements; a big reduction
//   into few outputs (all axes: a scalar) is cut into parts by the work of one output alone,
//   combined in order, so that an output's bits never depend on how many others there are;
// - the innermost axis kept (column sums): each work item accumulates a chunk of an output row,
//   up to 16 KiB so it stays in L1, with contiguous vectors of every reduced input row.
// No reduced axes is a copy. Results do not depend on the thread count.
//
// Integers (i32, i64): sum, max and min in the element type (a sum wraps as the vector adds do);
// the mean of integers is their sum divided by the count, truncated toward zero, as nax::mean.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/planning_threads.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/kernels/row_reduce.hpp>
#include <nax/ops/reduce_kind.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// How a planned reduction runs. `empty`: the output has no elements. `fill`: nothing is
/// reduced over (a reduced extent is 0): the output is the sum of no elements, 0. `copy`: no
/// axis of extent > 1 is reduced. `rows`: the innermost axis is reduced. `columns`: it is kept.
enum class reduce_path : std::uint8_t { empty, fill, copy, rows, columns };

/// The geometry of one reduction, from plan_reduce. Strides in elements.
struct reduce_plan {
  nax::dtype type = nax::dtype::f32;
  ops::reduce_kind kind = ops::reduce_kind::sum;
  reduce_path path = reduce_path::empty;
  std::size_t out_size = 0;
  std::size_t count = 0;  // input elements per output element
  /// The kept axes but the innermost kept one (columns) or all of them (rows), and the reduced
  /// axes but the innermost reduced one (rows) or all of them (columns), outer to inner.
  detail::loop_nest<1> kept, reduced;
  /// The innermost axis: its extent (contiguous in the input).
  std::size_t inner = 0;
  /// rows: each output element is cut into `parts` pieces (of its reduced rows, or of its one
  /// run) whose results are combined in order. columns: output rows are cut into chunks of
  /// `chunk` elements.
  std::size_t parts = 1, chunk = 0;
  std::size_t items = 0, grain = 1;
  copy_plan copy;
};

namespace detail {

/// The most partial results a `rows` reduction keeps (on the stack) for its few outputs.
inline constexpr std::size_t max_partials = 64;

/// Row `p` of n contiguous elements, read as a typed row body reads a cursor's row.
template <class T>
struct pointer_reader {
  const T* p;
  simd::vec<T> load(std::size_t i) const { return simd::vec<T>::load_unaligned(p + i); }
  simd::vec<T> load_tail(std::size_t i, std::size_t n) const {
    return nax::detail::load_partial<T>(p + i, 1, n);
  }
  /// A row kernel's wider vector (nax::detail::load_as).
  template <class W>
  W load_as(std::size_t i) const {
    return W::load_unaligned(p + i);
  }
  template <class W>
  W load_tail_as(std::size_t i, std::size_t n) const {
    return nax::detail::load_partial_as<W>(p + i, 1, n);
  }
  T scalar(std::size_t i) const { return p[i]; }
};

template <class Red, class T>
T reduce_scalars(const T* p, std::size_t n, T acc) {
  for (std::size_t i = 0; i < n; ++i) acc = Red::combine(acc, p[i]);
  return acc;
}

// Part `part` of output element `item`'s reduction (rows path), from its input base `x`.
template <class Red, class T>
T reduce_part(const reduce_plan& p, const T* x, std::size_t part) {
  using vec = simd::vec<T>;
  const std::size_t rows = p.reduced.count();
  // Pieces of the reduced rows, or of the one run when there is one row.
  std::size_t r0 = 0, r1 = rows, c0 = 0, c1 = p.inner;
  if (p.parts > 1) {
    if (rows > 1) {
      const index_range r = split_range(0, rows, part, p.parts);
      r0 = r.begin, r1 = r.end;
    } else {
      const std::size_t piece = (p.inner / p.parts + vec::size - 1) / vec::size * vec::size;
      c0 = std::min(p.inner, part * piece);
      c1 = part + 1 == p.parts ? p.inner : std::min(p.inner, c0 + piece);
    }
  }
  nest_walker<1> at{&p.reduced, {}, {}};
  at.seek(r0);
  if (c1 - c0 < vec::size) {  // short runs: the vector tail would cost more than the loop
    T acc = Red::template identity<T>();
    for (std::size_t r = r0; r < r1; ++r, at.next())
      acc = reduce_scalars<Red>(x + at.off[0] + c0, c1 - c0, acc);
    return acc;
  }
  const vec id(Red::template identity<T>());
  vec acc[4] = {id, id, id, id};
  for (std::size_t r = r0; r < r1; ++r, at.next())
    nax::detail::accumulate_row<Red>(
        pointer_reader<T>{x + at.off[0] + c0}, c1 - c0, [](const vec& v) { return v; }, acc);
  return nax::detail::combine_accumulators<Red>(acc);
}

// Output element `item`'s whole reduction (rows path): its parts, combined in order.
template <class Red, class T>
T reduce_item(const reduce_plan& p, const T* x) {
  T v = reduce_part<Red>(p, x, 0);
  for (std::size_t k = 1; k < p.parts; ++k) v = Red::combine(v, reduce_part<Red>(p, x, k));
  return v;
}

template <class T>
T divide(T sum, std::size_t count) {
  return sum / static_cast<T>(count);
}

template <class Red, bool Mean, class T>
void reduce_rows(const reduce_plan& p, const T* in, T* out) {
  if (p.items == p.out_size) {  // an item per output: its parts, if any, combined in order
    auto body = [&](std::size_t lo, std::size_t hi) {
      nest_walker<1> at{&p.kept, {}, {}};
      at.seek(lo);
      for (std::size_t item = lo; item < hi; ++item, at.next()) {
        const T v = reduce_item<Red>(p, in + at.off[0]);
        out[item] = Mean ? divide(v, p.count) : v;
      }
    };
    if (p.items <= p.grain) return body(0, p.items);
    return parallel_for(0, p.items, p.grain, body);
  }
  // Few outputs, each cut into parts run as items: partial results, combined in order
  // afterwards (the same combine as above).
  std::array<T, max_partials> partial;
  parallel_for(0, p.items, p.grain, [&](std::size_t lo, std::size_t hi) {
    nest_walker<1> at{&p.kept, {}, {}};
    for (std::size_t item = lo; item < hi; ++item) {
      at.seek(item / p.parts);
      partial[item] = reduce_part<Red>(p, in + at.off[0], item % p.parts);
    }
  });
  for (std::size_t o = 0; o < p.out_size; ++o) {
    T v = partial[o * p.parts];
    for (std::size_t k = 1; k < p.parts; ++k) v = Red::combine(v, partial[o * p.parts + k]);
    out[o] = Mean ? divide(v, p.count) : v;
  }
}

template <class Red, bool Mean, class T>
void reduce_columns(const reduce_plan& p, const T* in, T* out) {
  using vec = simd::vec<T>;
  constexpr std::size_t w = vec::size;
  const std::size_t n = p.inner, chunks = (n + p.chunk - 1) / p.chunk;
  const std::size_t rows = p.reduced.count();
  auto body = [&](std::size_t lo, std::size_t hi) {
    nest_walker<1> kept{&p.kept, {}, {}};
    nest_walker<1> red{&p.reduced, {}, {}};
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t row = item / chunks, begin = item % chunks * p.chunk;
      const std::size_t len = std::min(n, begin + p.chunk) - begin;
      kept.seek(row);
      T* const target = out + row * n + begin;
      const T* const x = in + kept.off[0] + begin;
      red.seek(0);
      std::copy_n(x + red.off[0], len, target);  // the first reduced row starts the sums
      for (std::size_t r = 1; r < rows; ++r) {
        red.next();
        const T* const xr = x + red.off[0];
        std::size_t i = 0;
        for (; i + 2 * w <= len; i += 2 * w) {
          const vec a = Red::combine(vec::load_unaligned(target + i), vec::load_unaligned(xr + i));
          const vec b =
              Red::combine(vec::load_unaligned(target + i + w), vec::load_unaligned(xr + i + w));
          a.store_unaligned(target + i);
          b.store_unaligned(target + i + w);
        }
        for (; i < len; ++i) target[i] = Red::combine(target[i], xr[i]);
      }
      if constexpr (Mean)
        for (std::size_t i = 0; i < len; ++i) target[i] = divide(target[i], p.count);
    }
  };
  if (p.items <= p.grain) return body(0, p.items);
  parallel_for(0, p.items, p.grain, body);
}

template <class Red, bool Mean, class T>
void run_reduce_as(const reduce_plan& p, const void* in, void* out) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  switch (p.path) {
    case reduce_path::empty: return;
    case reduce_path::fill: std::fill_n(y, p.out_size, T(0)); return;
    case reduce_path::copy: return run_copy(p.copy, in, out);
    case reduce_path::rows: return reduce_rows<Red, Mean>(p, x, y);
    case reduce_path::columns: return reduce_columns<Red, Mean>(p, x, y);
  }
}

template <class T>
void run_reduce_typed(const reduce_plan& p, const void* in, void* out) {
  switch (p.kind) {
    case ops::reduce_kind::sum: return run_reduce_as<reducers::sum, false, T>(p, in, out);
    case ops::reduce_kind::mean: return run_reduce_as<reducers::sum, true, T>(p, in, out);
    case ops::reduce_kind::max: return run_reduce_as<reducers::max, false, T>(p, in, out);
    case ops::reduce_kind::min: return run_reduce_as<reducers::min, false, T>(p, in, out);
  }
}

}  // namespace detail

namespace detail {

/// A reduction's loop nest, coalesced: participant 0 the input (dense row-major over
/// `extents`), participant 1 the output (dense over the kept axes, stride 0 along the reduced).
inline strided_layout<6, 2> reduce_layout(std::span<const std::size_t> extents,
                                          const std::vector<bool>& reduced) {
  const std::size_t rank = extents.size();
  nax::detail::small_vector<std::ptrdiff_t, 12> strides;  // the input's, then the output's
  strides.resize(2 * rank);
  std::ptrdiff_t in_step = 1, out_step = 1;
  for (std::size_t a = rank; a-- > 0;) {
    strides[a] = in_step;
    in_step *= static_cast<std::ptrdiff_t>(extents[a]);
    if (!reduced[a]) {
      strides[rank + a] = out_step;
      out_step *= static_cast<std::ptrdiff_t>(extents[a]);
    }
  }
  strided_layout<6, 2> axes(extents, 2, std::span<const std::ptrdiff_t>(strides.data(), 2 * rank));
  axes.coalesce();
  return axes;
}

}  // namespace detail

/// Plans the reduction `kind` of a dense row-major tensor of `type` and `extents` over
/// `reduced_axes` (distinct axis indices, in any order; none: a copy; all: a scalar). The
/// output is dense row-major over the kept axes in order. nax::shape_error for a dtype other
/// than f32, f64, i32 and i64, an axis out of range or repeated, and for max, min or mean
/// over no elements (a reduced extent of 0); the sum of no elements is 0.
inline reduce_plan plan_reduce(nax::dtype type, ops::reduce_kind kind,
                               std::span<const std::size_t> extents,
                               std::span<const std::size_t> reduced_axes) {
  const auto where = [&] {
    return nax::detail::message(" (extents ", detail::list_to_string(extents), ", reduced axes ",
                                detail::list_to_string(reduced_axes), ")");
  };
  if (type != dtype::f32 && type != dtype::f64 && type != dtype::i32 && type != dtype::i64)
    nax::detail::throw_shape_error("nax::kernels::reduce: ", name(kind), " of ", name(type),
                                   " elements is not supported (f32, f64, i32 or i64)");
  std::vector<bool> reduced(extents.size());
  for (std::size_t a : reduced_axes) {
    if (a >= extents.size())
      nax::detail::throw_shape_error("nax::kernels::reduce: axis ", a, " is out of range for ",
                                     extents.size(), " axes", where());
    if (reduced[a])
      nax::detail::throw_shape_error("nax::kernels::reduce: axis ", a, " is reduced twice",
                                     where());
    reduced[a] = true;
  }
  reduce_plan p;
  p.type = type;
  p.kind = kind;
  p.out_size = 1;
  p.count = 1;
  for (std::size_t k = 0; k < extents.size(); ++k)
    (reduced[k] ? p.count : p.out_size) *= extents[k];
  if (p.count == 0 && kind != ops::reduce_kind::sum)
    nax::detail::throw_shape_error("nax::kernels::reduce: ", name(kind),
                                   " over an empty axis: there is no ", name(kind),
                                   " of no elements", where());
  if (p.out_size == 0) return p;
  if (p.count == 0) {
    p.path = reduce_path::fill;
    return p;
  }
  // The input (dense) and the output (dense over the kept axes, stride 0 along the reduced
  // ones), coalesced: axes of extent > 1, neighbours of the same role merged.
  strided_layout<6, 2> axes = detail::reduce_layout(extents, reduced);
  const auto is_reduced = [&](std::size_t g) { return axes.stride(1, g) == 0; };
  bool any_reduced = false;
  for (std::size_t g = 0; g < axes.rank(); ++g) any_reduced = any_reduced || is_reduced(g);
  const std::size_t eb = size_of(type);
  if (axes.size() == 1 || !any_reduced) {  // (one element: coalesced to stride 0, not reduced)
    const std::size_t n[1] = {p.out_size};
    const std::ptrdiff_t unit[1] = {1};
    p.path = reduce_path::copy;
    p.copy = plan_copy(eb, n, unit, unit);
    return p;
  }
  if (axes.rank() > 2 * max_loop_rank)
    nax::detail::throw_shape_error("nax::kernels::reduce: more than ", 2 * max_loop_rank,
                                   " alternating kept and reduced axes", where());
  const std::size_t last = axes.rank() - 1;
  p.inner = axes.extent(last);
  for (std::size_t g = 0; g < last; ++g) {
    detail::loop_nest<1>& nest = is_reduced(g) ? p.reduced : p.kept;
    nest.extent[nest.rank] = axes.extent(g);
    nest.stride[0][nest.rank] = axes.stride(0, g);
    ++nest.rank;
  }
  const std::size_t threads = nax::detail::planning_threads();
  if (is_reduced(last)) {
    p.path = reduce_path::rows;
    p.items = p.out_size;
    const std::size_t per_item = p.count;
    // Outputs of much work each are cut into parts by that work alone: not by the thread count
    // nor by how many outputs there are, so an output's bits depend only on the elements it
    // reduces (a block of rows, a pipelined tile or a fused reduction's chunk gives the bits of
    // the whole). Few outputs run their parts as work items of their own.
    if (per_item >= 2 * nax::detail::parallel_grain_elements) {
      const std::size_t rows = p.reduced.count();
      p.parts = std::min<std::size_t>(detail::max_partials,
                                      per_item / nax::detail::parallel_grain_elements);
      if (rows > 1) p.parts = std::min(p.parts, rows);
      if (p.out_size * p.parts <= detail::max_partials) p.items = p.out_size * p.parts;
    }
    p.grain =
        std::max<std::size_t>(1, nax::detail::parallel_grain_elements /
                                     std::max<std::size_t>(1, p.count * p.out_size / p.items));
  } else {
    p.path = reduce_path::columns;
    const std::size_t n = p.inner, kept_rows = p.out_size / n;
    const std::size_t w = 64 / eb;
    // Chunks of at most 16 KiB of output, finer when there are too few rows for the threads.
    const std::size_t splits = kept_rows >= threads ? 1 : (threads + kept_rows - 1) / kept_rows;
    std::size_t chunk = std::min<std::size_t>({n, 16 * 1024 / eb, (n + splits - 1) / splits});
    p.chunk = std::max<std::size_t>(std::min(n, w), (chunk + w - 1) / w * w);
    p.items = kept_rows * ((n + p.chunk - 1) / p.chunk);
    p.grain = std::max<std::size_t>(
        1, nax::detail::parallel_grain_elements / std::max<std::size_t>(1, p.count * p.chunk));
  }
  return p;
}

/// Runs a planned reduction: `in` holds the input's elements, `out` receives the output's
/// (p.out_size of them). Never allocates; small work runs on the calling thread alone.
inline void run_reduce(const reduce_plan& p, const void* in, void* out) {
  switch (p.type) {
    case dtype::f32: return detail::run_reduce_typed<float>(p, in, out);
    case dtype::f64: return detail::run_reduce_typed<double>(p, in, out);
    case dtype::i32: return detail::run_reduce_typed<std::int32_t>(p, in, out);
    case dtype::i64: return detail::run_reduce_typed<std::int64_t>(p, in, out);
    default: return;
  }
}

}  // namespace nax::kernels
