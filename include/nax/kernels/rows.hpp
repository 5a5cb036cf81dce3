#pragma once
// The runtime row ops: softmax and layer_norm along one axis of a dense row-major tensor, seen as
// [outer, n, inner] (n: the axis). Along the last axis (inner = 1) each row is contiguous and
// goes through the typed row bodies (nax::detail::softmax_row, layer_norm_row), threaded over
// rows, written one row behind as the typed row driver does (softmax's rows always, a large
// output's around the caches). Along another axis, vectors run across the inner dimension
// instead: a work item takes a chunk of inner columns and walks the axis over contiguous pieces of
// rows, each vector lane one row of the op (no transpose, no temporary). The lane-wise sweeps are
// the row bodies' own: max, exp and sum, scale when the chunk fits in cache (else one online pass,
// as softmax_row's long rows); mean then squared deviation (else Welford's update, as
// layer_norm_row's).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

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
  /// Along another axis than the last: columns per work item, and whether a chunk of n rows
  /// is swept several times from cache (else one online pass and a write pass).
  std::size_t chunk = 0;
  bool cached = true;
  /// Along the last axis: whether the output rows are streamed around the caches, one row
  /// behind (nax::detail::row_stream): rows that fit in cache and an output larger than this
  /// core's share of the last-level cache (not when it overlaps the input).
  bool stream = false;
  std::size_t items = 0, grain = 1;
};

namespace detail {

/// The most columns a work item takes along a non-last axis (its per-lane state is on the stack).
inline constexpr std::size_t max_chunk_bytes = 4096;

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

// Calls f(k, j, full, valid) for every row k < n and every vector j of len columns (the last
// one partial, with `valid` lanes, when w does not divide len).
template <class V, class F>
void sweep(std::size_t n, std::size_t len, F f) {
  constexpr std::size_t w = simd::width<V>;
  const std::size_t full = len / w * w;
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t j = 0; j < full; j += w) f(k, j, std::true_type{}, w);
    if (full < len) f(k, full, std::false_type{}, len - full);
  }
}

// Softmax of len columns (each a row of the op along the axis), n rows `inner` apart.
template <class V>
void softmax_columns(const rows_plan& p, const V* x, V* y, std::size_t len) {
  using vec = simd::vec<V>;
  constexpr std::size_t w = simd::width<V>;
  alignas(64) vec m[max_chunk_bytes / sizeof(V) / w], s[max_chunk_bytes / sizeof(V) / w];
  const std::size_t vecs = (len + w - 1) / w;
  const auto stride = static_cast<std::ptrdiff_t>(p.inner);
  auto at = [&](auto* base, std::size_t k, std::size_t j) {
    return base + static_cast<std::ptrdiff_t>(k) * stride + static_cast<std::ptrdiff_t>(j);
  };
  for (std::size_t v = 0; v < vecs; ++v) {
    m[v] = vec(reducers::max::identity<V>());
    s[v] = vec(V(0));
  }
  if (p.cached) {
    sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
      m[j / w] = simd::max(m[j / w], load_columns<V, full>(at(x, k, j), valid));
    });
    sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
      const vec e = simd::exp(load_columns<V, full>(at(x, k, j), valid) - m[j / w]);
      store_columns<V, full>(at(y, k, j), valid, e);
      s[j / w] += e;
    });
    for (std::size_t v = 0; v < vecs; ++v) s[v] = vec(V(1)) / s[v];
    sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
      store_columns<V, full>(at(y, k, j), valid,
                             load_columns<V, full>(at(y, k, j), valid) * s[j / w]);
    });
    return;
  }
  // Per lane, a running max and the sum of exp(x - max), rescaled when the max grows.
  sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
    const vec v = load_columns<V, full>(at(x, k, j), valid);
    vec& mj = m[j / w];
    const vec mn = simd::max(mj, v);
    const vec rescale = simd::select(mj == mn, vec(V(1)), simd::exp(mj - mn));
    s[j / w] = s[j / w] * rescale + simd::exp(v - mn);
    mj = mn;
  });
  for (std::size_t v = 0; v < vecs; ++v) s[v] = vec(V(1)) / s[v];
  sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
    store_columns<V, full>(
        at(y, k, j), valid,
        simd::exp(load_columns<V, full>(at(x, k, j), valid) - m[j / w]) * s[j / w]);
  });
}

// Layer norm of len columns, n rows `inner` apart; gamma and beta are one value per row.
template <class V>
void layer_norm_columns(const rows_plan& p, const V* x, const V* gamma, const V* beta, V eps, V* y,
                        std::size_t len) {
  using vec = simd::vec<V>;
  constexpr std::size_t w = simd::width<V>;
  alignas(64) vec mu[max_chunk_bytes / sizeof(V) / w], sc[max_chunk_bytes / sizeof(V) / w];
  const std::size_t vecs = (len + w - 1) / w;
  const auto stride = static_cast<std::ptrdiff_t>(p.inner);
  auto at = [&](auto* base, std::size_t k, std::size_t j) {
    return base + static_cast<std::ptrdiff_t>(k) * stride + static_cast<std::ptrdiff_t>(j);
  };
  for (std::size_t v = 0; v < vecs; ++v) mu[v] = sc[v] = vec(V(0));
  if (p.cached) {
    // The mean, then the mean squared deviation from it: exact two-pass statistics.
    sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
      mu[j / w] += load_columns<V, full>(at(x, k, j), valid);
    });
    for (std::size_t v = 0; v < vecs; ++v) mu[v] = mu[v] / vec(static_cast<V>(p.n));
    sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
      const vec d = load_columns<V, full>(at(x, k, j), valid) - mu[j / w];
      sc[j / w] += d * d;
    });
  } else {
    // Welford's update in every lane: one pass over memory.
    for (std::size_t k = 0; k < p.n; ++k) {
      const vec step(V(1) / static_cast<V>(k + 1));
      sweep<V>(1, len, [&](std::size_t, std::size_t j, auto full, std::size_t valid) {
        const vec v = load_columns<V, full>(at(x, k, j), valid);
        const vec delta = v - mu[j / w];
        mu[j / w] += delta * step;
        sc[j / w] += delta * (v - mu[j / w]);
      });
    }
  }
  for (std::size_t v = 0; v < vecs; ++v)
    sc[v] = vec(V(1)) / simd::sqrt(sc[v] / vec(static_cast<V>(p.n)) + vec(eps));
  sweep<V>(p.n, len, [&](std::size_t k, std::size_t j, auto full, std::size_t valid) {
    const vec v = load_columns<V, full>(at(x, k, j), valid);
    store_columns<V, full>(at(y, k, j), valid,
                           simd::fma((v - mu[j / w]) * sc[j / w], vec(gamma[k]), vec(beta[k])));
  });
}

// Runs rows(x, writer) for the planned rows (last axis) or columns(x, y, len) for the column
// chunks (another axis). Along the last axis, cached rows go through a row_stream per thread,
// one row behind, when the output does not overlap the input and either the plan streams it
// (non-temporal stores) or `defer` (a deferred_row_kernel: ordinary stores).
template <class V, class Rows, class Columns>
void for_each_item(const rows_plan& p, const V* x, V* y, bool defer, Rows rows, Columns columns) {
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
            rows(x + r * n, nax::detail::stream_row_writer<V>{&out, y + r * n, &fetch});
          else
            rows(x + r * n, nax::detail::row_writer<V, true>{y + r * n, 1, &fetch});
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
  auto body = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t o = item / chunks, c = item % chunks * p.chunk;
      const std::size_t offset = o * n * p.inner + c;
      columns(x + offset, y + offset, std::min(p.chunk, p.inner - c));
    }
  };
  if (p.items <= p.grain) return body(0, p.items);
  parallel_for(0, p.items, p.grain, body);
}

template <class V>
void run_softmax_as(const rows_plan& p, const void* in, void* out) {
  using kernel = nax::detail::softmax_row<V, false>;
  for_each_item<V>(
      p, static_cast<const V*>(in), static_cast<V*>(out), nax::detail::deferred_row_kernel<kernel>,
      [&](const V* x, const auto& y) { kernel{}(pointer_reader<V>{x}, y, p.n); },
      [&](const V* x, V* y, std::size_t len) { softmax_columns<V>(p, x, y, len); });
}

template <class V>
void run_layer_norm_as(const rows_plan& p, const void* in, const void* gamma, const void* beta,
                       double epsilon, void* out) {
  const V* g = static_cast<const V*>(gamma);
  const V* b = static_cast<const V*>(beta);
  const auto eps = static_cast<V>(epsilon);
  using kernel = nax::detail::layer_norm_row<V>;
  for_each_item<V>(
      p, static_cast<const V*>(in), static_cast<V*>(out), nax::detail::deferred_row_kernel<kernel>,
      [&](const V* x, const auto& y) {
        kernel{eps}(pointer_reader<V>{x}, y, p.n, pointer_reader<V>{g}, pointer_reader<V>{b});
      },
      [&](const V* x, V* y, std::size_t len) { layer_norm_columns<V>(p, x, g, b, eps, y, len); });
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
  p.outer = 1;
  for (std::size_t k = 0; k < axis; ++k) p.outer *= extents[k];
  p.n = extents[axis];
  for (std::size_t k = axis + 1; k < extents.size(); ++k) p.inner *= extents[k];
  const std::size_t eb = size_of(type),
                    w = type == dtype::f32 ? simd::width<float> : simd::width<double>;
  if (p.outer * p.n * p.inner == 0) return p;
  if (p.inner == 1) {
    p.items = p.outer;
    p.stream = p.n * eb <= nax::detail::cached_row_bytes &&
               nax::detail::stream_row_output(p.outer * p.n * eb);
    p.grain = std::max<std::size_t>(1, nax::detail::parallel_grain_elements / p.n);
    return p;
  }
  // The regime depends on n alone, as the row bodies' (so not on the thread count). Chunks are
  // as wide as the stack state allows: long contiguous pieces of each row are what strided
  // sweeps need (64 columns ran 3x slower than 1024 here), split only to feed every thread.
  p.cached = p.n * eb <= nax::detail::cached_row_bytes;
  const std::size_t threads = nax::detail::planning_threads();
  const std::size_t splits = p.outer >= threads ? 1 : (threads + p.outer - 1) / p.outer;
  std::size_t chunk = std::min(detail::max_chunk_bytes / eb, (p.inner + splits - 1) / splits);
  chunk = std::max(w, chunk / w * w);
  p.chunk = std::min(chunk, p.inner);
  p.items = p.outer * ((p.inner + p.chunk - 1) / p.chunk);
  p.grain = std::max<std::size_t>(1, nax::detail::parallel_grain_elements / (p.n * p.chunk));
  return p;
}

/// Softmax along the planned axis: out = exp(x - max) / sum(exp(x - max)). in and out may be the
/// same buffer. Never allocates; small work runs on the calling thread alone.
inline void run_softmax(const rows_plan& p, const void* in, void* out) {
  if (p.type == dtype::f32)
    detail::run_softmax_as<float>(p, in, out);
  else
    detail::run_softmax_as<double>(p, in, out);
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

}  // namespace nax::kernels
