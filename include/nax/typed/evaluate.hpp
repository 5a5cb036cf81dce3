#pragma once
// The evaluator: one fused loop nest per assignment. Iterates in the destination's axis order
// (so the destination is written contiguously), merges axes that are contiguous for every
// operand (so a dense expression is one long loop), runs the innermost axis in SIMD vectors with
// a padded tail, and splits rows (or, for few rows, chunks of the inner axis) over the thread
// pool. Operands broadcast along the inner axis are splatted once per row. Each assignment
// compiles one row kernel, for unit stride: operands at another stride (a transposition, a
// strided view) are copied into small buffers a segment at a time, and a strided destination is
// written from one, which costs a copy through L1 and spares every expression a second kernel.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/cache_info.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

template <std::size_t R>
using strides_t = std::array<std::ptrdiff_t, (R > 0 ? R : 1)>;

/// The loop nest after merging axes: extents outer to inner, and the row count.
template <std::size_t R>
struct loop_shape {
  std::array<std::size_t, (R > 0 ? R : 1)> extent{};
  std::size_t rank = 1;  // effective rank (>= 1)
  std::size_t inner() const { return extent[rank - 1]; }
  std::size_t rows() const {
    std::size_t r = 1;
    for (std::size_t j = 0; j + 1 < rank; ++j) r *= extent[j];
    return r;
  }
};

template <class T, std::size_t R>
struct destination_cursor {
  T* base = nullptr;
  strides_t<R> stride{};
  T* row = nullptr;
  std::ptrdiff_t step = 1;
  bool stream = false;  // non-temporal stores where the address is aligned

  row_writer<T, false> writer() const { return {row, step}; }
  template <class V>
  void store(std::size_t i, const V& v) const {
    if constexpr (std::is_same_v<V, simd::vec<T>>) {
      T* p = row + static_cast<std::ptrdiff_t>(i) * step;
      if (stream && step == 1 && reinterpret_cast<std::uintptr_t>(p) % sizeof(V) == 0)
        return simd::stream_store(p, v);
    }
    writer().store(i, v);
  }
  template <class V>
  void store_tail(std::size_t i, std::size_t n, const V& v) const {
    writer().store_tail(i, n, v);
  }
};

template <class A, class E>
void check_destination_extent(const E& e, std::size_t destination) {
  if constexpr (axes_contains_v<typename E::axes_type, A>) {
    const std::size_t own = e.template extent<A>();
    if (own != destination)
      throw_axis_mismatch("", A::name, "destination", destination, "expression", own);
  }
}

/// A destination cursor writing view v, with strides over loop order D (a permutation of v's axes).
template <class D, class V, class... Own>
destination_cursor<V, boost::mp11::mp_size<D>::value> make_destination(
    const tensor_view<V, Own...>& v) {
  destination_cursor<V, boost::mp11::mp_size<D>::value> d;
  d.base = v.data();
  std::size_t k = 0;
  ((d.stride[axes_index_of_v<D, Own>] = v.strides()[k++]), ...);
  return d;
}

/// The multi-index of flat row number `flat` over the first `count` extents (row-major).
inline void split_index(std::size_t flat, const std::size_t* extent, std::size_t count,
                        std::size_t* idx) {
  for (std::size_t j = count; j-- > 0;) {
    idx[j] = flat % extent[j];
    flat /= extent[j];
  }
}

template <std::size_t R>
std::ptrdiff_t row_offset(const strides_t<R>& s, const std::size_t* idx, std::size_t outer) {
  std::ptrdiff_t off = 0;
  // outer < R always; saying so lets g++ see idx's reads stay within its R entries (else, with
  // AVX-512 inlining, -Wmaybe-uninitialized for R = 1).
  for (std::size_t j = 0; j < outer && j + 1 < R; ++j)
    off += static_cast<std::ptrdiff_t>(idx[j]) * s[j];
  return off;
}

// Byte range [lo, hi) that a strided layout touches (strides are non-negative).
template <std::size_t R>
std::pair<std::uintptr_t, std::uintptr_t> byte_range(
    const void* base, const strides_t<R>& s, const std::array<std::size_t, (R > 0 ? R : 1)>& ext,
    std::size_t elem) {
  std::size_t last = 0;
  for (std::size_t k = 0; k < R; ++k) last += (ext[k] - 1) * static_cast<std::size_t>(s[k]);
  const auto lo = reinterpret_cast<std::uintptr_t>(base);
  return {lo, lo + (last + 1) * elem};
}

/// How the leaves of an expression overlap its destination: whether any reads it at all, and
/// whether one reads it through another layout (then each element is not read where it is
/// written, and the assignment goes through a temporary).
struct destination_overlap {
  bool reads = false, aliased = false;
};

template <class C, class V, std::size_t R>
destination_overlap overlap_of(const C& c, const destination_cursor<V, R>& d,
                               const std::array<std::size_t, (R > 0 ? R : 1)>& ext,
                               std::pair<std::uintptr_t, std::uintptr_t> dst_bytes) {
  destination_overlap o;
  c.for_each_leaf([&](const auto& leaf) {
    using LT = typename std::remove_cvref_t<decltype(leaf)>::value_type;
    const auto r = byte_range<R>(leaf.base, leaf.stride, ext, sizeof(LT));
    const bool overlap = r.first < dst_bytes.second && dst_bytes.first < r.second;
    o.reads |= overlap;
    if (overlap && (static_cast<const void*>(leaf.base) != static_cast<const void*>(d.base) ||
                    !std::equal(d.stride.begin(), d.stride.begin() + R, leaf.stride.begin())))
      o.aliased = true;
  });
  return o;
}

/// Tile of the loop when an operand is read across the inner axis (a transposition): 16 rows
/// by 64 inner positions, so each cache line the gathers touch serves all 16 rows while hot.
inline constexpr std::size_t gather_tile_rows = 16, gather_tile_inner = 64;

/// Positions of a row staged at a time when an operand or the destination is not at unit stride:
/// the operand's positions are copied into a buffer of this many (in L1), the row kernel reads
/// them there, and a strided destination is written from one.
inline constexpr std::size_t stage_elements = gather_tile_inner;

// n positions of a row, read at unit stride from the cursor's leaves (enter_segment) and written
// to contiguous out. The one row kernel an assignment compiles. Streaming needs aligned
// addresses: the first vector is stored normally and the loop restarts at the first aligned
// position (rewriting a few elements with the same values: a streamed expression never reads
// its destination).
template <class L, class C, class T>
void write_contiguous_row(C& c, T* out, std::size_t n, bool stream) {
  constexpr std::size_t w = simd::width<L>;
  const auto r = c.template reader<L, row_access::contiguous>();
  using V = decltype(r.load(0));
  std::size_t i = 0;
  if constexpr (std::is_same_v<V, simd::vec<T>>) {
    if (stream) {
      constexpr std::size_t bytes = sizeof(V);
      const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(out) % bytes;
      if (misaligned != 0 && misaligned % sizeof(T) == 0 && w <= n) {
        r.load(0).store_unaligned(out);
        i = (bytes - misaligned) / sizeof(T);
      }
      if (reinterpret_cast<std::uintptr_t>(out + i) % bytes == 0)
        for (; i + w <= n; i += w) simd::stream_store(out + i, r.load(i));
    }
  } else {
    (void)stream;
  }
  const row_writer<T, true> o{out, 1};
  for (; i + w <= n; i += w) o.store(i, r.load(i));
  if (i < n) o.store_tail(i, n - i, load_tail<L>(c, i, n - i));
}

/// Items lo..hi of a loop nest (rows, or chunks of rows), each written by write_contiguous_row.
/// `staged`: some leaf or the destination is not at unit stride, so rows go in segments of
/// stage_elements through buffers (and, when a leaf is read across the inner axis, `tiled`:
/// in tiles of gather_tile_rows rows).
template <class L, class C, class T, std::size_t R>
void run_items(C c, destination_cursor<T, R> d, const loop_shape<R>& shape,
               std::size_t chunks_per_row, std::size_t chunk, bool staged, bool tiled,
               std::size_t lo, std::size_t hi) {
  const std::size_t outer = shape.rank - 1, n = shape.inner();
  const std::size_t tile_rows = tiled ? gather_tile_rows : 1, tile = tiled ? gather_tile_inner : n;
  const leaf_stage stage(c, stage_elements, staged);
  T* const dst_stage = stage.extra<T>();
  std::array<std::size_t, (R > 0 ? R : 1)> idx{};
  for (std::size_t group = lo; group < hi; group += tile_rows) {
    const std::size_t group_end = std::min(hi, group + tile_rows);
    for (std::size_t sub = 0; sub < n; sub += tile) {
      for (std::size_t item = group; item < group_end; ++item) {
        const std::size_t part = item % chunks_per_row;
        const std::size_t begin = std::max(sub, part * chunk);
        const std::size_t end = std::min({n, part * chunk + chunk, sub + tile});
        if (begin >= end) continue;
        split_index(item / chunks_per_row, shape.extent.data(), outer, idx.data());
        c.for_each_leaf(
            [&](auto& leaf) { leaf.start_row(row_offset<R>(leaf.stride, idx.data(), outer)); });
        d.row = d.base + row_offset<R>(d.stride, idx.data(), outer);
        for (std::size_t from = begin; from < end;) {
          const std::size_t count = staged ? std::min(stage_elements, end - from) : end - from;
          stage.enter(c, from, count);
          // One call site, so that the row kernel is generated once (a strided destination is
          // written from the stage after it).
          const bool direct = d.step == 1;
          write_contiguous_row<L>(c, direct ? d.row + from : dst_stage, count, direct && d.stream);
          if (!direct)
            for (std::size_t j = 0; j < count; ++j)
              d.row[static_cast<std::ptrdiff_t>(from + j) * d.step] = dst_stage[j];
          leaf_stage::leave(c);
          from += count;
        }
      }
    }
  }
  if (d.stream) simd::stream_fence();
}

/// dst = e, where e's axes are a permutation of dst's or of some of them (e is broadcast over
/// the others). Checks every extent first and throws
/// nax::shape_error naming the axis before anything is written. Reading dst itself in place is
/// fine; reading it through another layout (a permuted or shifted view) goes through a
/// temporary.
template <class T, class... D, class E>
void assign(const tensor_view<T, D...>& dst, const E& e) {
  using dst_axes = axes<D...>;
  using V = std::remove_const_t<T>;
  static_assert(check_assignable<dst_axes, typename E::axes_type, false>());
  // An error here means the expression's element type differs from the destination's: convert
  // it with nax::cast<U>(e).
  static_assert(std::is_same_v<typename E::value_type, V>,
                "nax: assigning an expression of another element type; use nax::cast<U>(e)");
  constexpr std::size_t R = sizeof...(D);

  std::array<std::size_t, (R > 0 ? R : 1)> ext{};
  if constexpr (R > 0) {
    std::size_t k = 0;
    ((ext[k] = dst.template extent<D>(), check_destination_extent<D>(e, ext[k]), ++k), ...);
    for (std::size_t x : ext)
      if (x == 0) return;
  } else {
    ext[0] = 1;
  }

  auto c = e.template cursor<dst_axes>();
  destination_cursor<V, R> d = make_destination<dst_axes>(dst);

  const auto dst_bytes = byte_range<R>(d.base, d.stride, ext, sizeof(V));
  const destination_overlap overlap = overlap_of(c, d, ext, dst_bytes);
  if (overlap.aliased) {
    tensor<V, D...> tmp(dst.extents());
    assign(tmp.view(), e);
    assign(dst, tmp.view());
    return;
  }

  // The innermost axis stays, even of extent 1: a leaf that lacks it is compiled to read one
  // value per row (leaf_cursor's Splat), which holds only along that axis.
  loop_shape<R> shape;
  shape.extent = ext;
  shape.rank = coalesce_axes(
      shape.extent, R,
      [&](auto&& f) {
        f(d.stride);
        c.for_each_leaf([&](auto& leaf) { f(leaf.stride); });
      },
      /*keep_inner=*/true);
  d.step = d.stride[shape.rank - 1];
  bool gathers = false;
  c.for_each_leaf([&](auto& leaf) {
    leaf.step = leaf.stride[shape.rank - 1];
    gathers |= leaf.step > 1;
  });
  // An output larger than this core's share of the last-level cache would only evict the
  // inputs: write it around the caches (unless the expression reads it back in place).
  const cache_sizes& caches = machine_caches();
  d.stream = d.step == 1 && !overlap.reads &&
             dst_bytes.second - dst_bytes.first >= caches.l3 / caches.l3_sharing;

  using lane =
      resolve_lane<std::conditional_t<std::is_same_v<V, bool>, float, V>, typename E::lane_type>;
  constexpr std::size_t w = simd::width<lane>;
  const std::size_t rows = shape.rows(), n = shape.inner();
  const std::size_t threads = num_threads();
  std::size_t chunks_per_row = 1;
  if (rows < 4 * threads && n >= 2 * parallel_grain_elements)
    chunks_per_row =
        std::min<std::size_t>((4 * threads + rows - 1) / rows, n / parallel_grain_elements);
  std::size_t chunk = (n + chunks_per_row - 1) / chunks_per_row;
  chunk = (chunk + w - 1) / w * w;
  const std::size_t items = rows * chunks_per_row;
  const std::size_t item_elements = std::max<std::size_t>(1, std::min(n, chunk));
  const std::size_t grain = std::max<std::size_t>(1, parallel_grain_elements / item_elements);
  bool staged = d.step != 1;
  c.for_each_leaf([&](const auto& leaf) { staged |= leaf.needs_stage(); });
  parallel_for(0, items, grain, [&](std::size_t lo, std::size_t hi) {
    run_items<lane>(c, d, shape, chunks_per_row, chunk, staged, gathers && shape.rank > 1, lo, hi);
  });
}

}  // namespace detail

namespace detail {
template <class T, class L>
struct tensor_over;
template <class T, class... A>
struct tensor_over<T, axes<A...>> {
  using type = tensor<T, A...>;
};
}  // namespace detail

/// The tensor type of T over an axis list: `tensor_of<float, axes<batch, hidden>>`.
template <class T, class L>
using tensor_of = typename detail::tensor_over<T, L>::type;

/// The value of an expression as a tensor with the expression's own axis order.
template <expression E>
auto eval(const E& e) {
  return tensor_of<typename E::value_type, typename E::axes_type>(e);
}

}  // namespace nax::NAX_ISA
