#pragma once
// The runtime row ops: softmax, log_softmax and layer_norm along one axis of a dense row-major
// tensor, seen as [outer, n, inner] (n: the axis). Each row goes through the typed layer's row
// bodies (nax::detail::softmax_row, layer_norm_row), so every axis and every front end gives the
// same bits. Along the last axis (inner = 1) each row is contiguous: threaded over rows, written
// one row behind as the typed row driver does (softmax's rows always, a large output's around
// the caches). Along another axis, a work item takes a block of inner columns, gathers them into
// contiguous rows in a buffer (the typed driver stages its strided rows the same way), runs the
// row body on each, and scatters the results back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include <nax/core/around_axis.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/planning_threads.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/kernels/layer_norm_row.hpp>
#include <nax/kernels/reduce.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/kernels/softmax_row.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::NAX_ISA::kernels {

/// The geometry of a row op along one axis, from plan_rows.
struct rows_plan {
  nax::dtype type = nax::dtype::f32;
  /// The tensor as [outer, n, inner]; n is the axis.
  std::size_t outer = 0, n = 0, inner = 1;
  /// Along another axis than the last: the inner columns a work item takes.
  std::size_t chunk = 0;
  /// Along the last axis: whether the output rows are streamed around the caches, one row
  /// behind (nax::detail::row_stream): rows that fit in cache and an output larger than this
  /// core's share of the last-level cache (not when it overlaps the input).
  bool stream = false;
  std::size_t items = 0, grain = 1;
};

namespace detail {

/// The most columns a spelled row op's work item takes along a non-last axis (one vector lane
/// per column: its per-lane state is on the stack).
inline constexpr std::size_t max_chunk_bytes = 4096;
/// The columns a work item takes along a non-last axis: a cache line's (fewer where that feeds
/// every thread). Its rows are gathered into a buffer on the stack when they fit in
/// `stage_bytes`, else on the heap (once per thread's share of the work): fewer columns, to stay
/// on the stack, read the input a part of a line at a time and measured up to 1.3x slower.
template <class V>
inline constexpr std::size_t column_block = 64 / sizeof(V);
inline constexpr std::size_t stage_bytes = 32 * 1024;

template <class V, bool Full>
simd::vec<V> load_columns(const V* p, std::size_t valid) {
  if constexpr (Full)
    return simd::vec<V>::load_unaligned(p);
  else
    return nax::detail::load_partial<V>(p, 1, valid);
}
template <class V, bool Full>
void store_columns(V* p, std::size_t valid, const simd::vec<V>& v) {
  if constexpr (Full)
    v.store_unaligned(p);
  else
    nax::detail::row_writer<V, true>{p, 1}.store_tail(0, valid, v);
}

/// Splits the inner columns of plan p into work items of at most `columns` (a multiple of
/// `multiple` when more than one item is needed), fewer where that feeds every thread.
inline void split_columns(rows_plan& p, std::size_t columns, std::size_t multiple) {
  const std::size_t threads = nax::detail::planning_threads();
  const std::size_t splits = p.outer >= threads ? 1 : (threads + p.outer - 1) / p.outer;
  std::size_t chunk = std::min(columns, (p.inner + splits - 1) / splits);
  chunk = std::max(multiple, chunk / multiple * multiple);
  p.chunk = std::min(chunk, p.inner);
  p.items = p.outer * ((p.inner + p.chunk - 1) / p.chunk);
  p.grain = std::max<std::size_t>(1, nax::detail::parallel_grain_elements / (p.n * p.chunk));
}

// Runs row(x_row, writer) for every row of the op. Along the last axis, cached rows go through a
// row_stream per thread, one row behind, when the output does not overlap the input and either
// the plan streams it (non-temporal stores) or `defer` (a deferred_row_kernel: ordinary stores).
// Along another axis, each work item's columns are gathered into contiguous rows and the
// outputs scattered back (so in and out may be the same buffer there too).
template <class V, class Row>
void for_each_row(const rows_plan& p, const V* x, V* y, bool defer, Row row) {
  const std::size_t n = p.n;
  if (p.items == 0) return;
  if (p.inner == 1) {
    auto run = [&](auto stream) {
      constexpr bool Stream = decltype(stream)::value;
      auto body = [&](std::size_t lo, std::size_t hi) {
        std::conditional_t<Stream, nax::detail::row_stream<V>, char> out{};
        if constexpr (Stream) out.nontemporal(p.stream);
        nax::detail::row_prefetch fetch;
        for (std::size_t r = lo; r < hi; ++r) {
          // Fetch the next row while this one is computed, as the typed row driver does: the
          // kernel spreads the fetches over a sweep from L1 (row_prefetch).
          if (r + 1 < hi && n * sizeof(V) <= nax::detail::cached_row_bytes)
            fetch.later(x + (r + 1) * n, n * sizeof(V));
          if constexpr (Stream)
            row(x + r * n, nax::detail::stream_row_writer<V>{&out, y + r * n, &fetch});
          else
            row(x + r * n, nax::detail::row_writer<V, true>{y + r * n, 1, &fetch});
          fetch.rest();
        }
        if constexpr (Stream) out.finish();
      };
      if (p.items <= p.grain) return body(0, p.items);
      parallel_for(0, p.items, p.grain, body);
    };
    const auto xb = reinterpret_cast<std::uintptr_t>(x), yb = reinterpret_cast<std::uintptr_t>(y);
    const std::uintptr_t bytes = p.outer * n * sizeof(V);
    if ((p.stream || defer) && n * sizeof(V) <= nax::detail::cached_row_bytes &&
        (yb + bytes <= xb || xb + bytes <= yb))
      return run(std::true_type{});
    return run(std::false_type{});
  }
  const std::size_t chunks = (p.inner + p.chunk - 1) / p.chunk;
  // The gathered rows, `ld` apart: padded by a line past a multiple of one, so that the rows'
  // elements at one index (a gather's or a scatter's stores) fall in different cache sets.
  const std::size_t ld =
      (n + column_block<V> - 1) / column_block<V> * column_block<V> + column_block<V>;
  auto body = [&](std::size_t lo, std::size_t hi) {
    alignas(64) unsigned char on_stack[stage_bytes];
    std::unique_ptr<V[]> on_heap;
    V* stage = reinterpret_cast<V*>(on_stack);
    if (p.chunk * ld * sizeof(V) > stage_bytes) {
      on_heap = std::make_unique_for_overwrite<V[]>(p.chunk * ld);
      stage = on_heap.get();
    }
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t o = item / chunks, c = item % chunks * p.chunk;
      const std::size_t len = std::min(p.chunk, p.inner - c);
      const std::size_t offset = o * n * p.inner + c;
      // A whole block's column count is known at compile time: its loops unroll.
      auto gather_run_scatter = [&](auto columns) {
        for (std::size_t k = 0; k < n; ++k) {
          const V* from = x + offset + k * p.inner;
          for (std::size_t j = 0; j < columns; ++j) stage[j * ld + k] = from[j];
        }
        // In place: each row body reads a position before it writes it.
        for (std::size_t j = 0; j < columns; ++j)
          row(stage + j * ld, nax::detail::row_writer<V, true>{stage + j * ld, 1});
        for (std::size_t k = 0; k < n; ++k) {
          V* to = y + offset + k * p.inner;
          for (std::size_t j = 0; j < columns; ++j) to[j] = stage[j * ld + k];
        }
      };
      if (len == column_block<V>)
        gather_run_scatter(std::integral_constant<std::size_t, column_block<V>>{});
      else
        gather_run_scatter(len);
    }
  };
  if (p.items <= p.grain) return body(0, p.items);
  parallel_for(0, p.items, p.grain, body);
}

template <class V, bool Log>
void run_softmax_as(const rows_plan& p, const void* in, void* out) {
  using kernel = nax::detail::softmax_row<V, Log>;
  for_each_row<V>(p, static_cast<const V*>(in), static_cast<V*>(out),
                  nax::detail::deferred_row_kernel<kernel>,
                  [&](const V* x, const auto& y) { kernel{}(pointer_reader<V>{x}, y, p.n); });
}

template <class V>
void run_layer_norm_as(const rows_plan& p, const void* in, const void* gamma, const void* beta,
                       double epsilon, void* out) {
  const V* g = static_cast<const V*>(gamma);
  const V* b = static_cast<const V*>(beta);
  const auto eps = static_cast<V>(epsilon);
  using kernel = nax::detail::layer_norm_row<V>;
  for_each_row<V>(p, static_cast<const V*>(in), static_cast<V*>(out),
                  nax::detail::deferred_row_kernel<kernel>, [&](const V* x, const auto& y) {
                    kernel{eps}(pointer_reader<V>{x}, y, p.n, pointer_reader<V>{g},
                                pointer_reader<V>{b});
                  });
}

}  // namespace detail

/// Plans a row op (softmax, layer_norm) along `axis` of a dense row-major tensor of `type` and
/// `extents`. nax::shape_error for a dtype other than f32 and f64, or an axis out of range.
inline rows_plan plan_rows(nax::dtype type, std::span<const std::size_t> extents,
                           std::size_t axis) {
  if (type != dtype::f32 && type != dtype::f64)
    nax::detail::throw_shape_error(
        "nax::kernels::rows: softmax and layer_norm need f32 or f64 "
        "elements, got ",
        name(type));
  if (axis >= extents.size())
    nax::detail::throw_shape_error("nax::kernels::rows: axis ", axis,
                                   " is out of range for extents ",
                                   detail::list_to_string(extents));
  rows_plan p;
  p.type = type;
  const nax::detail::around_axis around = nax::detail::split_around(extents, axis);
  p.outer = around.outer;
  p.n = around.n;
  p.inner = around.inner;
  const std::size_t eb = size_of(type);
  if (p.outer * p.n * p.inner == 0) return p;
  if (p.inner == 1) {
    p.items = p.outer;
    p.stream = p.n * eb <= nax::detail::cached_row_bytes &&
               nax::detail::stream_row_output(p.outer * p.n * eb);
    p.grain = std::max<std::size_t>(1, nax::detail::parallel_grain_elements / p.n);
    return p;
  }
  // A cache line of columns per work item, split only to feed every thread.
  detail::split_columns(p, 64 / eb, 1);
  return p;
}

/// Softmax along the planned axis: out = exp(x - max) / sum(exp(x - max)). in and out may be the
/// same buffer. Allocates only along a non-last axis of more than about 500 elements (the
/// gathered rows' buffer, once per thread's share); small work runs on the calling thread alone.
inline void run_softmax(const rows_plan& p, const void* in, void* out) {
  if (p.type == dtype::f32)
    detail::run_softmax_as<float, false>(p, in, out);
  else
    detail::run_softmax_as<double, false>(p, in, out);
}

/// Log softmax along the planned axis: out = (x - max) - log(sum(exp(x - max))). in and out may
/// be the same buffer.
inline void run_log_softmax(const rows_plan& p, const void* in, void* out) {
  if (p.type == dtype::f32)
    detail::run_softmax_as<float, true>(p, in, out);
  else
    detail::run_softmax_as<double, true>(p, in, out);
}

/// Layer norm along the planned axis: (x - mean) / sqrt(var + epsilon) * gamma + beta, the
/// variance biased; gamma and beta hold one value per index of the axis.
inline void run_layer_norm(const rows_plan& p, const void* in, const void* gamma, const void* beta,
                           double epsilon, void* out) {
  if (p.type == dtype::f32)
    detail::run_layer_norm_as<float>(p, in, gamma, beta, epsilon, out);
  else
    detail::run_layer_norm_as<double>(p, in, gamma, beta, epsilon, out);
}

}  // namespace nax::NAX_ISA::kernels
