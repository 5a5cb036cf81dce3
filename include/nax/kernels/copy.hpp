#pragma once
// The runtime kernel of every data movement op (transpose, slice, materialized broadcast, concat,
// reshape): dst[i] = src[i] over a loop nest whose source and destination strides are given in
// elements. plan_copy does the geometry once per shape: it coalesces the axes (drops those of
// extent 1, merges those contiguous in both operands: core/strided_layout.hpp), and picks the inner
// loop: one memcpy per run when both are contiguous along the inner axis, a fill when the source is
// broadcast along it, a cache-blocked tile transpose when one operand is contiguous along the inner
// axis and the other along another axis, else a strided element loop. run_copy only walks the outer
// axes.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// The most axes a runtime kernel's loop nest keeps after merging (plan_* throws beyond).
inline constexpr std::size_t max_loop_rank = 16;

namespace detail {

/// Axes outer to inner, with the strides of Ops operands (in elements or bytes, as the kernel
/// chooses). Filled by a plan, read by a run: a fixed array, so copying a plan never allocates.
template <std::size_t Ops>
struct loop_nest {
  std::size_t rank = 0;
  std::array<std::size_t, max_loop_rank> extent{};
  std::array<std::array<std::ptrdiff_t, max_loop_rank>, Ops> stride{};

  std::size_t count() const {
    std::size_t c = 1;
    for (std::size_t k = 0; k < rank; ++k) c *= extent[k];
    return c;
  }
};

/// A position in a loop_nest and each operand's offset there; seek() once per chunk of
/// iterations, next() per iteration (a carry, no division).
template <std::size_t Ops>
struct nest_walker {
  const loop_nest<Ops>* nest;
  std::array<std::size_t, max_loop_rank> idx;
  std::array<std::ptrdiff_t, Ops> off{};

  void seek(std::size_t i) {
    off = {};
    for (std::size_t k = nest->rank; k-- > 0;) {
      const std::size_t e = nest->extent[k];
      idx[k] = i % e;
      i /= e;
      for (std::size_t o = 0; o < Ops; ++o)
        off[o] += static_cast<std::ptrdiff_t>(idx[k]) * nest->stride[o][k];
    }
  }
  void next() {
    for (std::size_t k = nest->rank; k-- > 0;) {
      if (++idx[k] < nest->extent[k]) {
        for (std::size_t o = 0; o < Ops; ++o) off[o] += nest->stride[o][k];
        return;
      }
      idx[k] = 0;
      for (std::size_t o = 0; o < Ops; ++o)
        off[o] -= static_cast<std::ptrdiff_t>(nest->extent[k] - 1) * nest->stride[o][k];
    }
  }
};

inline std::string list_to_string(std::span<const std::size_t> values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

/// The grain (items per chunk) that gives each parallel chunk at least `bytes_per_chunk`.
inline std::size_t grain_for(std::size_t bytes_per_item,
                             std::size_t bytes_per_chunk = nax::detail::parallel_grain_bytes) {
  return std::max<std::size_t>(1, bytes_per_chunk / std::max<std::size_t>(bytes_per_item, 1));
}

}  // namespace detail

/// How a planned copy runs. `none`: nothing to copy. `contiguous`: runs of `inner` elements,
/// memcpy'd. `fill`: the source is one element per run (broadcast). `transpose`: tiles between
/// the source's contiguous axis and the destination's. `strided`: element by element.
enum class copy_path : std::uint8_t { none, contiguous, fill, transpose, strided };

/// The geometry of one copy, from plan_copy. Strides here are in bytes.
struct copy_plan {
  std::size_t element_bytes = 0;
  copy_path path = copy_path::none;
  /// The outer loops; operand 0 is the source, 1 the destination.
  detail::loop_nest<2> outer;
  /// The inner run: `inner` elements at src_step / dst_step bytes apart (contiguous: a run of
  /// `inner` bytes split in `parts` pieces, one work item each).
  std::size_t inner = 0;
  std::ptrdiff_t src_step = 0, dst_step = 0;
  /// transpose: rows of the tile grid: `rows` elements of the source's contiguous axis, at
  /// `dst_row_step` bytes in the destination; `inner` runs along the destination's contiguous
  /// axis, at src_step bytes in the source. Work items are tiles of tile_rows x tile_cols (up to
  /// 64 x 64 elements: both operands' lines of a tile stay in L1).
  std::size_t rows = 1, tile_rows = 1, tile_cols = 1;
  std::ptrdiff_t dst_row_step = 0;
  std::size_t parts = 1;
  std::size_t items = 0, grain = 1;
};

/// The strides (in elements) of a dense row-major tensor of these extents.
inline std::vector<std::ptrdiff_t> dense_strides(std::span<const std::size_t> extents) {
  std::vector<std::ptrdiff_t> s(extents.size());
  nax::core_detail::fill_row_major_strides(extents, s);
  return s;
}

/// The source strides (in elements) that read a dense row-major tensor of `extents` in the
/// order `perm`: axis k of the result is axis perm[k] of the source (so the result's extents
/// are extents[perm[k]]). nax::shape_error unless perm is a permutation of 0..rank-1.
inline std::vector<std::ptrdiff_t> permute_strides(std::span<const std::size_t> extents,
                                                   std::span<const std::size_t> perm) {
  std::vector<bool> seen(extents.size());
  bool ok = perm.size() == extents.size();
  for (std::size_t k = 0; ok && k < perm.size(); ++k) {
    ok = perm[k] < extents.size() && !seen[perm[k]];
    if (ok) seen[perm[k]] = true;
  }
  if (!ok)
    nax::detail::throw_shape_error("nax::kernels::permute_strides: ", detail::list_to_string(perm),
                                   " is not a permutation of the ", extents.size(),
                                   " axes of extents ", detail::list_to_string(extents));
  const std::vector<std::ptrdiff_t> dense = dense_strides(extents);
  std::vector<std::ptrdiff_t> s(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) s[k] = dense[perm[k]];
  return s;
}

/// Plans dst[i] = src[i] for every index i of `extents`, the operands addressed with the given
/// strides (in elements; a source stride may be 0: broadcast). Element sizes 1, 2, 4 and 8 move
/// as integers (the pointers must be aligned to the element size), others byte by byte.
/// nax::shape_error if the stride lists do not match the extents.
NAX_RUNTIME_INLINE copy_plan plan_copy(std::size_t element_bytes,
                                       std::span<const std::size_t> extents,
                                       std::span<const std::ptrdiff_t> src_strides,
                                       std::span<const std::ptrdiff_t> dst_strides);

/// Runs a planned copy: src and dst point at the elements of index 0 (for a slice, the source's
/// first element). Threaded over the outer axes (and pieces of long runs); never allocates.
NAX_RUNTIME_INLINE void run_copy(const copy_plan& p, const void* src, void* dst);

}  // namespace nax::kernels

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::kernels {

NAX_RUNTIME_INLINE copy_plan plan_copy(std::size_t element_bytes,
                                       std::span<const std::size_t> extents,
                                       std::span<const std::ptrdiff_t> src_strides,
                                       std::span<const std::ptrdiff_t> dst_strides) {
  if (src_strides.size() != extents.size() || dst_strides.size() != extents.size())
    nax::detail::throw_shape_error("nax::kernels::copy: extents ", detail::list_to_string(extents),
                                   " have ", extents.size(), " axes but the strides have ",
                                   src_strides.size(), " (source) and ", dst_strides.size(),
                                   " (destination)");
  if (element_bytes == 0)
    nax::detail::throw_shape_error("nax::kernels::copy: the element size must be at least 1");
  copy_plan p;
  p.element_bytes = element_bytes;
  const auto eb = static_cast<std::ptrdiff_t>(element_bytes);
  for (std::size_t e : extents)
    if (e == 0) return p;
  // Axes of extent > 1, outer to inner, merged where both operands step through them as one.
  strided_layout<6, 2> merged(extents, {src_strides, dst_strides});
  merged.coalesce();
  if (merged.rank() > max_loop_rank)
    nax::detail::throw_shape_error("nax::kernels::copy: more than ", max_loop_rank,
                                   " axes after merging contiguous ones, extents ",
                                   detail::list_to_string(extents));
  detail::loop_nest<2> all;
  all.rank = merged.rank();
  for (std::size_t k = 0; k < all.rank; ++k) {
    all.extent[k] = merged.extent(k);
    all.stride[0][k] = merged.stride(0, k) * eb;
    all.stride[1][k] = merged.stride(1, k) * eb;
  }
  if (merged.size() == 1)  // one element: a contiguous run of one
    all.stride[0][0] = all.stride[1][0] = eb;
  const std::size_t last = all.rank - 1;
  p.inner = all.extent[last];
  p.src_step = all.stride[0][last];
  p.dst_step = all.stride[1][last];
  // The tile partner of the inner axis: another axis along which the other operand is
  // contiguous (the innermost such one).
  std::size_t partner = last;
  if (p.dst_step == eb && p.src_step != eb && p.src_step != 0) {
    for (std::size_t k = last; k-- > 0;)
      if (all.stride[0][k] == eb && all.stride[1][k] != eb) {
        partner = k;
        break;
      }
  } else if (p.src_step == eb && p.dst_step != eb) {
    for (std::size_t k = last; k-- > 0;)
      if (all.stride[1][k] == eb && all.stride[0][k] != eb) {
        partner = k;
        break;
      }
  }
  for (std::size_t k = 0; k < last; ++k) {
    if (k == partner) continue;
    p.outer.extent[p.outer.rank] = all.extent[k];
    p.outer.stride[0][p.outer.rank] = all.stride[0][k];
    p.outer.stride[1][p.outer.rank] = all.stride[1][k];
    ++p.outer.rank;
  }
  const std::size_t outer = p.outer.count();
  if (p.src_step == eb && p.dst_step == eb) {
    // Long runs are cut so that a few of them still keep every thread busy.
    p.path = copy_path::contiguous;
    const std::size_t run_bytes = p.inner * element_bytes;
    p.parts = std::max<std::size_t>(1, run_bytes / (1 << 18));
    p.items = outer * p.parts;
    p.grain = detail::grain_for(run_bytes / p.parts);
  } else if (p.src_step == 0 && p.dst_step == eb) {
    p.path = copy_path::fill;
    p.items = outer;
    p.grain = detail::grain_for(p.inner * element_bytes);
  } else if (partner != last) {
    // Normalized so the tile reads the source along its rows and writes the destination along
    // `inner`: rows = the axis along which the source is contiguous.
    p.path = copy_path::transpose;
    if (p.dst_step == eb) {
      p.rows = all.extent[partner];
      p.dst_row_step = all.stride[1][partner];
    } else {
      p.rows = p.inner;
      p.dst_row_step = p.dst_step;
      p.inner = all.extent[partner];
      p.src_step = all.stride[0][partner];
      p.dst_step = eb;
    }
    p.tile_rows = p.tile_cols = std::clamp<std::size_t>(256 / element_bytes, 8, 64);
    p.items = outer * ((p.rows + p.tile_rows - 1) / p.tile_rows) *
              ((p.inner + p.tile_cols - 1) / p.tile_cols);
    p.grain = detail::grain_for(p.tile_rows * p.tile_cols * element_bytes);
  } else {
    p.path = copy_path::strided;
    p.items = outer;
    p.grain = detail::grain_for(p.inner * element_bytes);
  }
  return p;
}

namespace detail {

// A tile of the transpose: d[r * dr + c] = s[r + c * sc] for r < nr, c < nc (strides in
// elements; nr, nc at most the block size). Full 8 x 8 blocks of 4-byte elements and 4 x 4 of
// 8-byte ones go through registers; the rest is a plain loop.
template <class U>
inline void transpose_block(const U* s, std::ptrdiff_t sc, U* d, std::ptrdiff_t dr, std::size_t nr,
                            std::size_t nc) {
#if XSIMD_WITH_AVX
  if constexpr (sizeof(U) == 4) {
    if (nr == 8 && nc == 8) {
      const float* f = reinterpret_cast<const float*>(s);
      __m256 r0 = _mm256_loadu_ps(f), r1 = _mm256_loadu_ps(f + sc),
             r2 = _mm256_loadu_ps(f + 2 * sc), r3 = _mm256_loadu_ps(f + 3 * sc),
             r4 = _mm256_loadu_ps(f + 4 * sc), r5 = _mm256_loadu_ps(f + 5 * sc),
             r6 = _mm256_loadu_ps(f + 6 * sc), r7 = _mm256_loadu_ps(f + 7 * sc);
      const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                   t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                   t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                   t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      r0 = _mm256_shuffle_ps(t0, t2, 0x44);
      r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      r2 = _mm256_shuffle_ps(t1, t3, 0x44);
      r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      r4 = _mm256_shuffle_ps(t4, t6, 0x44);
      r5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      r6 = _mm256_shuffle_ps(t5, t7, 0x44);
      r7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* o = reinterpret_cast<float*>(d);
      _mm256_storeu_ps(o, _mm256_permute2f128_ps(r0, r4, 0x20));
      _mm256_storeu_ps(o + dr, _mm256_permute2f128_ps(r1, r5, 0x20));
      _mm256_storeu_ps(o + 2 * dr, _mm256_permute2f128_ps(r2, r6, 0x20));
      _mm256_storeu_ps(o + 3 * dr, _mm256_permute2f128_ps(r3, r7, 0x20));
      _mm256_storeu_ps(o + 4 * dr, _mm256_permute2f128_ps(r0, r4, 0x31));
      _mm256_storeu_ps(o + 5 * dr, _mm256_permute2f128_ps(r1, r5, 0x31));
      _mm256_storeu_ps(o + 6 * dr, _mm256_permute2f128_ps(r2, r6, 0x31));
      _mm256_storeu_ps(o + 7 * dr, _mm256_permute2f128_ps(r3, r7, 0x31));
      return;
    }
  } else if constexpr (sizeof(U) == 8) {
    if (nr == 4 && nc == 4) {
      const double* f = reinterpret_cast<const double*>(s);
      const __m256d r0 = _mm256_loadu_pd(f), r1 = _mm256_loadu_pd(f + sc),
                    r2 = _mm256_loadu_pd(f + 2 * sc), r3 = _mm256_loadu_pd(f + 3 * sc);
      const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
                    t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      double* o = reinterpret_cast<double*>(d);
      _mm256_storeu_pd(o, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(o + dr, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(o + 2 * dr, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(o + 3 * dr, _mm256_permute2f128_pd(t1, t3, 0x31));
      return;
    }
  }
#endif
  for (std::size_t r = 0; r < nr; ++r)
    for (std::size_t c = 0; c < nc; ++c)
      d[static_cast<std::ptrdiff_t>(r) * dr + static_cast<std::ptrdiff_t>(c)] =
          s[static_cast<std::ptrdiff_t>(r) + static_cast<std::ptrdiff_t>(c) * sc];
}

// The tile [r0, r1) x [c0, c1) of a transpose, in register blocks.
template <class U>
void transpose_tile(const U* s, std::ptrdiff_t sc, U* d, std::ptrdiff_t dr, std::size_t r0,
                    std::size_t r1, std::size_t c0, std::size_t c1) {
  constexpr std::size_t b = sizeof(U) == 8 ? 4 : 8;
  for (std::size_t c = c0; c < c1; c += b) {
    const std::size_t cn = std::min(b, c1 - c);
    for (std::size_t r = r0; r < r1; r += b)
      transpose_block(s + static_cast<std::ptrdiff_t>(r) + static_cast<std::ptrdiff_t>(c) * sc, sc,
                      d + static_cast<std::ptrdiff_t>(r) * dr + static_cast<std::ptrdiff_t>(c), dr,
                      std::min(b, r1 - r), cn);
  }
}

// Work items [lo, hi) of a plan whose elements move as U (void: byte by byte).
template <class U>
void copy_items(const copy_plan& p, const char* src, char* dst, std::size_t lo, std::size_t hi) {
  constexpr bool bytes = std::is_void_v<U>;
  using E = std::conditional_t<bytes, char, U>;
  const std::size_t eb = p.element_bytes;
  nest_walker<2> at{&p.outer, {}, {}};
  switch (p.path) {
    case copy_path::none: return;
    case copy_path::contiguous: {
      const std::size_t run = p.inner * eb, piece = run / p.parts;
      at.seek(lo / p.parts);
      for (std::size_t item = lo; item < hi; ++item) {
        const std::size_t part = item % p.parts;
        if (part == 0 && item != lo) at.next();
        const std::size_t begin = part * piece, end = part + 1 == p.parts ? run : begin + piece;
        std::memcpy(dst + at.off[1] + begin, src + at.off[0] + begin, end - begin);
      }
      return;
    }
    case copy_path::fill: {
      at.seek(lo);
      for (std::size_t item = lo; item < hi; ++item, at.next()) {
        if constexpr (bytes) {
          char* d = dst + at.off[1];
          for (std::size_t i = 0; i < p.inner; ++i) std::memcpy(d + i * eb, src + at.off[0], eb);
        } else {
          const E v = *reinterpret_cast<const E*>(src + at.off[0]);
          std::fill_n(reinterpret_cast<E*>(dst + at.off[1]), p.inner, v);
        }
      }
      return;
    }
    case copy_path::transpose: {
      const std::size_t row_tiles = (p.rows + p.tile_rows - 1) / p.tile_rows;
      const std::size_t tiles = row_tiles * ((p.inner + p.tile_cols - 1) / p.tile_cols);
      at.seek(lo / tiles);
      for (std::size_t item = lo; item < hi; ++item) {
        const std::size_t t = item % tiles;
        if (t == 0 && item != lo) at.next();
        // Row tiles vary fastest: consecutive tiles continue the same source streams.
        const std::size_t r0 = t % row_tiles * p.tile_rows, c0 = t / row_tiles * p.tile_cols;
        const std::size_t r1 = std::min(p.rows, r0 + p.tile_rows);
        const std::size_t c1 = std::min(p.inner, c0 + p.tile_cols);
        if constexpr (bytes) {
          for (std::size_t r = r0; r < r1; ++r)
            for (std::size_t c = c0; c < c1; ++c)
              std::memcpy(dst + at.off[1] + static_cast<std::ptrdiff_t>(r) * p.dst_row_step +
                              static_cast<std::ptrdiff_t>(c * eb),
                          src + at.off[0] + static_cast<std::ptrdiff_t>(r * eb) +
                              static_cast<std::ptrdiff_t>(c) * p.src_step,
                          eb);
        } else {
          const auto esz = static_cast<std::ptrdiff_t>(sizeof(E));
          transpose_tile(reinterpret_cast<const E*>(src + at.off[0]), p.src_step / esz,
                         reinterpret_cast<E*>(dst + at.off[1]), p.dst_row_step / esz, r0, r1, c0,
                         c1);
        }
      }
      return;
    }
    case copy_path::strided: {
      at.seek(lo);
      for (std::size_t item = lo; item < hi; ++item, at.next()) {
        const char* s = src + at.off[0];
        char* d = dst + at.off[1];
        for (std::size_t i = 0; i < p.inner; ++i) {
          const auto ii = static_cast<std::ptrdiff_t>(i);
          if constexpr (bytes)
            std::memcpy(d + ii * p.dst_step, s + ii * p.src_step, eb);
          else
            *reinterpret_cast<E*>(d + ii * p.dst_step) =
                *reinterpret_cast<const E*>(s + ii * p.src_step);
        }
      }
      return;
    }
  }
}

template <class U>
void run_copy_as(const copy_plan& p, const void* src, void* dst) {
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  if (p.items <= p.grain) return copy_items<U>(p, s, d, 0, p.items);  // no pool for small work
  parallel_for(0, p.items, p.grain,
               [&](std::size_t lo, std::size_t hi) { copy_items<U>(p, s, d, lo, hi); });
}

}  // namespace detail

NAX_RUNTIME_INLINE void run_copy(const copy_plan& p, const void* src, void* dst) {
  switch (p.element_bytes) {
    case 1: return detail::run_copy_as<std::uint8_t>(p, src, dst);
    case 2: return detail::run_copy_as<std::uint16_t>(p, src, dst);
    case 4: return detail::run_copy_as<std::uint32_t>(p, src, dst);
    case 8: return detail::run_copy_as<std::uint64_t>(p, src, dst);
    default: return detail::run_copy_as<void>(p, src, dst);
  }
}

}  // namespace nax::kernels
#endif  // NAX_RUNTIME_DEFINITIONS
