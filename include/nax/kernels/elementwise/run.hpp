#pragma once
// Running a planned elementwise program (plan.hpp): the blocks of the output's flat index space,
// on nax's thread pool when there are enough. Per block, each input is pointed at in place,
// splatted, or gathered into a block buffer; then each instruction's body runs over the block.
// Never allocates: block buffers and the pointer table live on the running thread's stack.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/kernels/elementwise/native_block.hpp>
#include <nax/kernels/elementwise/plan.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {
namespace detail {

// Copies `count` elements of `Size` bytes read at `stride` elements to dst (short runs element
// by element: a row of a few elements is not worth a call to memcpy).
template <std::size_t Size>
void ew_copy_strided(std::byte* dst, const std::byte* src, std::ptrdiff_t stride,
                     std::size_t count) {
  if (stride == 1 && count * Size > 64) {
    std::memcpy(dst, src, count * Size);
  } else {
    for (std::size_t j = 0; j < count; ++j)
      std::memcpy(dst + j * Size, src + static_cast<std::ptrdiff_t>(j) * stride * Size, Size);
  }
}

// Gathers flat output positions [f0, f0 + len), which may span several rows, of an input with
// collapsed strides `st` into dst.
template <std::size_t Size>
void ew_gather_rows(std::byte* dst, const std::byte* base, const elementwise_plan& p,
                    const std::ptrdiff_t* st, std::size_t f0, std::size_t len) {
  if (p.rank == 1)
    return ew_copy_strided<Size>(
        dst, base + static_cast<std::ptrdiff_t>(f0) * st[0] * static_cast<std::ptrdiff_t>(Size),
        st[0], len);
  const std::size_t r0 = f0 / p.inner;
  std::size_t c = f0 % p.inner;
  std::ptrdiff_t off = 0;
  for (std::size_t j = p.rank - 1, r = r0; j-- > 0;) {
    off += static_cast<std::ptrdiff_t>(r % p.extents[j]) * st[j];
    r /= p.extents[j];
  }
  const std::ptrdiff_t inner = st[p.rank - 1];
  // The next row: step the outer multi-index like an odometer, adjusting the offset; the axis
  // next to the row is counted here, the outer ones (wrapped rarely) divided out.
  const std::size_t j1 = p.rank - 2, e1 = p.extents[j1];
  std::size_t i1 = r0 % e1;
  for (std::size_t r = r0, done = 0; done < len; ++r) {
    const std::size_t piece = std::min(p.inner - c, len - done);
    ew_copy_strided<Size>(
        dst + done * Size,
        base + (off + static_cast<std::ptrdiff_t>(c) * inner) * static_cast<std::ptrdiff_t>(Size),
        inner, piece);
    done += piece;
    c = 0;
    off += st[j1];
    if (++i1 < e1) continue;
    i1 = 0;
    off -= static_cast<std::ptrdiff_t>(e1) * st[j1];
    for (std::size_t j = j1, q = (r + 1) / e1; j-- > 0;) {
      off += st[j];
      if (q % p.extents[j] != 0) break;
      off -= static_cast<std::ptrdiff_t>(p.extents[j]) * st[j];
      q /= p.extents[j];
    }
  }
}

inline void ew_gather(std::size_t size, std::byte* dst, const std::byte* base,
                      const elementwise_plan& p, const std::ptrdiff_t* st, std::size_t f0,
                      std::size_t len) {
  switch (size) {
    case 1: return ew_gather_rows<1>(dst, base, p, st, f0, len);
    case 4: return ew_gather_rows<4>(dst, base, p, st, f0, len);
    default: return ew_gather_rows<8>(dst, base, p, st, f0, len);
  }
}

inline void ew_gather_strided(std::size_t size, std::byte* dst, const std::byte* src,
                              std::ptrdiff_t stride, std::size_t len) {
  switch (size) {
    case 1: return ew_copy_strided<1>(dst, src, stride, len);
    case 4: return ew_copy_strided<4>(dst, src, stride, len);
    default: return ew_copy_strided<8>(dst, src, stride, len);
  }
}

// Copies `bytes` from a block buffer to dst (aligned to simd::stream_alignment) with
// non-temporal stores; the bytes past the last whole vector with plain ones.
inline void ew_stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  using V = simd::vec<float>;  // bit patterns only: no arithmetic on the values
  constexpr std::size_t vb = sizeof(V);
  std::size_t i = 0;
  for (; i + vb <= bytes; i += vb)
    simd::stream_store(reinterpret_cast<float*>(dst + i),
                       V::load_aligned(reinterpret_cast<const float*>(src + i)));
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
}

// Asks for the block after [flat, flat + len) of a dense input of `size` elements to be fetched
// into the caches. The program reads a block's inputs in its first instructions only; without
// this, the next block's lines would come from memory only once it starts, and memory would sit
// idle while the other instructions run.
inline void ew_prefetch_next(const std::byte* base, std::size_t flat, std::size_t len,
                             std::size_t size, std::size_t element) {
  const std::size_t end = std::min(size, flat + 2 * len);
  for (std::size_t b = (flat + len) * element; b < end * element; b += 64)
    __builtin_prefetch(base + b, 0, 3);
}

/// The most outputs a program run by a native block function may have.
inline constexpr std::size_t ew_native_outputs = 64;

// The block's outputs for a native block function, and whether it may stream them (each
// vector-aligned).
inline int ew_native_outputs_of(const elementwise_plan& p, void* const* out, std::size_t at,
                                void** dst) {
  bool aligned = true;
  for (std::size_t o = 0; o < p.output_dtypes.size(); ++o) {
    dst[o] = static_cast<std::byte*>(out[o]) + at * size_of(p.output_dtypes[o]);
    aligned = aligned && reinterpret_cast<std::uintptr_t>(dst[o]) % simd::stream_alignment == 0;
  }
  return p.stream && aligned ? 1 : 0;
}

/// Runs flat output positions [flat, flat + len) of plan p on the calling thread: len at most
/// p.block and, with row_blocks, within row r from column c0 (flat = r * p.inner + c0). Outputs
/// hold the elements from flat position out_base on. `scratch`: ew_scratch_bytes, 64-aligned.
/// `native`, if given, computes the whole block in place of p's steps.
inline void ew_run_span(const elementwise_plan& p, const void* const* in, void* const* out,
                        std::size_t flat, std::size_t len, std::size_t r, std::size_t c0,
                        std::size_t out_base, std::byte* scratch,
                        native::block_fn native = nullptr) {
  auto* const table = reinterpret_cast<const void**>(scratch);
  const std::size_t k = p.inputs.size();
  if (p.row_blocks) {
    for (std::size_t i = 0; i < k; ++i) {
      const ew_input& in_i = p.inputs[i];
      if (in_i.access == ew_access::unused) continue;
      const std::ptrdiff_t* st = p.strides.data() + i * p.rank;
      std::ptrdiff_t off = static_cast<std::ptrdiff_t>(c0) * in_i.inner_step;
      for (std::size_t j = p.rank - 1, q = r; j-- > 0;) {
        off += static_cast<std::ptrdiff_t>(q % p.extents[j]) * st[j];
        q /= p.extents[j];
      }
      const std::byte* src =
          static_cast<const std::byte*>(in[i]) + off * static_cast<std::ptrdiff_t>(in_i.size);
      if (in_i.access == ew_access::in_place && c0 + len < p.inner)  // the rest of the row
        ew_prefetch_next(src, 0, len, p.inner - c0, in_i.size);
      if (in_i.access == ew_access::gather) {
        ew_gather_strided(in_i.size, scratch + in_i.buffer, src, in_i.inner_step, len);
        table[i] = scratch + in_i.buffer;
      } else {
        table[i] = src;
      }
    }
  } else {
    for (std::size_t i = 0; i < k; ++i) {
      const ew_input& in_i = p.inputs[i];
      const auto* base = static_cast<const std::byte*>(in[i]);
      switch (in_i.access) {
        case ew_access::unused: break;
        case ew_access::in_place:
          table[i] = base + flat * in_i.size;
          if (native == nullptr) ew_prefetch_next(base, flat, len, p.size, in_i.size);
          break;
        case ew_access::splat: table[i] = base; break;
        case ew_access::gather:
          ew_gather(in_i.size, scratch + in_i.buffer, base, p, p.strides.data() + i * p.rank, flat,
                    len);
          table[i] = scratch + in_i.buffer;
          break;
      }
    }
  }
  if (native != nullptr) {
    void* dst[ew_native_outputs];
    native(len, table, dst, ew_native_outputs_of(p, out, flat - out_base, dst));
    return;
  }
  for (const ew_step& s : p.steps) {
    std::byte* const dst = s.output == ew_no_output ? nullptr
                                                    : static_cast<std::byte*>(out[s.output]) +
                                                          (flat - out_base) * s.size;
    const bool stream = dst != nullptr && p.stream &&
                        reinterpret_cast<std::uintptr_t>(dst) % simd::stream_alignment == 0;
    void* const o = dst != nullptr && !stream ? static_cast<void*>(dst)
                                              : static_cast<void*>(scratch + s.buffer);
    table[s.value] = o;
    const void* const a[3] = {table[s.args[0]], table[s.args[1]], table[s.args[2]]};
    s.fn(len, a, o);
    if (stream) ew_stream_copy(dst, static_cast<const std::byte*>(o), len * s.size);
  }
  for (const ew_copy& c : p.copies)
    std::memcpy(static_cast<std::byte*>(out[c.to]) + (flat - out_base) * c.size,
                static_cast<const std::byte*>(out[c.from]) + (flat - out_base) * c.size,
                len * c.size);
}

/// Runs blocks [lo, hi) of plan p on the calling thread. Outputs hold the elements from flat
/// position out_base on (a fused reduction computes its input a chunk of rows at a time).
inline void ew_run_blocks(const elementwise_plan& p, const void* const* in, void* const* out,
                          std::size_t lo, std::size_t hi, std::size_t out_base = 0,
                          native::block_fn native = nullptr) {
  // Pointer table first, then gather buffers and block buffers (offsets from the planner).
  alignas(64) std::byte scratch[ew_scratch_bytes];
  for (std::size_t b = lo; b < hi; ++b) {
    if (p.row_blocks) {
      const std::size_t r = b / p.segments, c0 = (b % p.segments) * p.block;
      ew_run_span(p, in, out, r * p.inner + c0, std::min(p.block, p.inner - c0), r, c0, out_base,
                  scratch, native);
    } else {
      const std::size_t flat = b * p.block;
      ew_run_span(p, in, out, flat, std::min(p.block, p.size - flat), 0, 0, out_base, scratch,
                  native);
    }
  }
  if (p.stream) simd::stream_fence();  // before another thread reads what this one streamed
}

/// Runs flat output positions [f0, f1) of plan p on the calling thread, wherever they start and
/// end (spans of at most a block, cut at rows with row_blocks). Outputs hold the elements from
/// flat position out_base on.
inline void ew_run_range(const elementwise_plan& p, const void* const* in, void* const* out,
                         std::size_t f0, std::size_t f1, std::size_t out_base,
                         native::block_fn native = nullptr) {
  alignas(64) std::byte scratch[ew_scratch_bytes];
  for (std::size_t f = f0; f < f1;) {
    if (p.row_blocks) {
      const std::size_t r = f / p.inner, c0 = f % p.inner;
      const std::size_t len = std::min({p.block, p.inner - c0, f1 - f});
      ew_run_span(p, in, out, f, len, r, c0, out_base, scratch, native);
      f += len;
    } else {
      const std::size_t len = std::min(p.block, f1 - f);
      ew_run_span(p, in, out, f, len, 0, 0, out_base, scratch, native);
      f += len;
    }
  }
  if (p.stream) simd::stream_fence();
}

}  // namespace detail

/// Runs plan p: inputs[i] points at input i's first element (laid out as the plan's strides
/// say), outputs[o] at output o's dense row-major buffer of output_dtypes[o]. Blocks are split
/// over nax's thread pool when there are enough; a small output runs on the calling thread with
/// no synchronization. Never allocates. Outputs must not overlap inputs, except that the output
/// of a one-instruction program may be the very buffer of a dense input of its dtype.
/// `native`, if given, is the program's block function (native_source.hpp, generated for the
/// plan's splatted inputs; at most detail::ew_native_outputs outputs): it runs each block in
/// place of the plan's instructions, with the same bits.
inline void run_elementwise(const elementwise_plan& p, const void* const* inputs,
                            void* const* outputs, native::block_fn native = nullptr) {
  if (p.blocks < 2 * p.grain) {
    if (p.blocks != 0) detail::ew_run_blocks(p, inputs, outputs, 0, p.blocks, 0, native);
    return;
  }
  parallel_for(0, p.blocks, p.grain, [&](std::size_t lo, std::size_t hi) {
    detail::ew_run_blocks(p, inputs, outputs, lo, hi, 0, native);
  });
}

}  // namespace nax::kernels
