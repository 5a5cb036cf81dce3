#pragma once
// The fused reduction kernel: the one output of an elementwise program (kernels/elementwise.hpp)
// reduced over a contiguous run of its axes, without the program's result ever being written to
// memory. The program's output is seen as [outer, reduced, inner]:
//  - inner = 1 (the reduced axes are trailing): a chunk of whole rows at a time is computed into
//    a per-thread buffer kept within L2 and reduced there by the row reduction; chunks run in
//    parallel.
//  - inner > 1 (a leading or middle run, as a bias gradient sums over the batch): a work item
//    owns a piece of one output row, out[a, c0:c1]; it computes the program over a pass of
//    reduced rows at a time into the buffer and folds each row into its piece, in order, as the
//    plain reduction's column path does. When there are few such items, the pieces are made
//    narrower (cutting the reduced rows instead would sum in another order than the plain
//    reduction: the fused and the unfused graph must give the same bits).
// Each output is folded in an order that depends on its own reduced elements only, so results
// depend neither on the thread count nor on how many outputs there are (a pipelined tile's rows
// give the bits of the whole).
//
//   plan_fused_reduce(program_plan, kind, outer, reduced, inner)   once per shape
//   run_fused_reduce(plan, inputs, out)                            many times

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/kernels/elementwise.hpp>
#include <nax/kernels/reduce.hpp>
#include <nax/ops/reduce_kind.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// A planned fused reduction: made by plan_fused_reduce, read by run_fused_reduce.
struct fused_reduce_plan {
  elementwise_plan program;  // its output 0 is reduced
  dtype type = dtype::f32;
  ops::reduce_kind kind = ops::reduce_kind::sum;
  std::size_t outer = 0, reduced = 0, inner = 0;
  std::size_t items = 0;  // parallel work items
  // inner = 1: `chunk` rows of `reduced` elements per item, reduced by `full` (`last`: the
  // last item's, shorter). Nothing to compute (a zero extent): `full` is the plain reduction.
  // inner > 1: items are (a, piece of `chunk` columns); `pass` reduced rows are computed at a
  // time (with one piece per row: whole rows are contiguous).
  std::size_t chunk = 0, pieces = 1, pass = 1;
  reduce_plan full, last;
  std::size_t buffer_bytes = 0;  // per running thread
};

/// Elements of the program's result a fused reduction computes at a time: its buffer stays
/// within L2 with the inputs.
inline constexpr std::size_t fused_reduce_buffer_elements = std::size_t{1} << 14;

namespace detail {

/// The calling thread's buffer of at least `bytes` (64-aligned), grown as needed and kept.
inline std::byte* fused_reduce_buffer(std::size_t bytes) {
  struct tag;
  return nax::detail::thread_scratch<tag>(bytes);
}

inline void fr_run_rows(const fused_reduce_plan& p, const void* const* in, std::byte* out,
                        native::block_fn native) {
  const std::size_t eb = size_of(p.type);
  auto body = [&](std::size_t lo, std::size_t hi) {
    std::byte* const buffer = fused_reduce_buffer(p.buffer_bytes);
    void* outs[1] = {buffer};
    for (std::size_t k = lo; k < hi; ++k) {
      const std::size_t r0 = k * p.chunk, r1 = std::min(p.outer, r0 + p.chunk);
      ew_run_range(p.program, in, outs, r0 * p.reduced, r1 * p.reduced, r0 * p.reduced, native);
      run_reduce(r1 - r0 == p.chunk ? p.full : p.last, buffer, out + r0 * eb);
    }
  };
  if (p.items < 2) return body(0, p.items);
  parallel_for(0, p.items, 1, body);
}

// target[i] = combine(target[i], x[i]), i < n.
template <class Red, class T>
void fr_fold(T* target, const T* x, std::size_t n) {
  using vec = simd::vec<T>;
  constexpr std::size_t w = vec::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    Red::combine(vec::load_unaligned(target + i), vec::load_unaligned(x + i))
        .store_unaligned(target + i);
  for (; i < n; ++i) target[i] = Red::combine(target[i], x[i]);
}

template <class T>
void fr_divide(T* x, std::size_t n, std::size_t count) {
  const T c = static_cast<T>(count);
  for (std::size_t i = 0; i < n; ++i) x[i] /= c;
}

template <class Red, bool Mean, class T>
void fr_run_columns(const fused_reduce_plan& p, const void* const* in, T* out,
                    native::block_fn native) {
  const std::size_t n = p.inner;
  auto body = [&](std::size_t lo, std::size_t hi) {
    T* const buffer = reinterpret_cast<T*>(fused_reduce_buffer(p.buffer_bytes));
    void* outs[1] = {buffer};
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t a = item / p.pieces, c0 = item % p.pieces * p.chunk;
      const std::size_t len = std::min(n, c0 + p.chunk) - c0;
      T* const target = out + a * n + c0;
      for (std::size_t r = 0; r < p.reduced; r += p.pass) {
        const std::size_t count = std::min(p.pass, p.reduced - r);
        // With one piece per row, len = n: `count` whole rows are contiguous.
        const std::size_t f0 = (a * p.reduced + r) * n + c0;
        ew_run_range(p.program, in, outs, f0, f0 + (count - 1) * n + len, f0, native);
        for (std::size_t j = 0; j < count; ++j) {
          if (r + j == 0)
            std::copy_n(buffer, len, target);
          else
            fr_fold<Red>(target, buffer + j * n, len);
        }
      }
      if constexpr (Mean) fr_divide(target, len, p.reduced);
    }
  };
  if (p.items < 2)
    body(0, p.items);
  else
    parallel_for(0, p.items, 1, body);
}

template <class T>
void fr_run_columns_typed(const fused_reduce_plan& p, const void* const* in, void* out,
                          native::block_fn native) {
  T* const o = static_cast<T*>(out);
  switch (p.kind) {
    case ops::reduce_kind::sum: return fr_run_columns<reducers::sum, false>(p, in, o, native);
    case ops::reduce_kind::mean: return fr_run_columns<reducers::sum, true>(p, in, o, native);
    case ops::reduce_kind::max: return fr_run_columns<reducers::max, false>(p, in, o, native);
    case ops::reduce_kind::min: return fr_run_columns<reducers::min, false>(p, in, o, native);
  }
}

}  // namespace detail

/// Plans the reduction `kind` of output 0 of `program` (planned for extents whose product is
/// outer * reduced * inner, and whose dtype is f32 or f64) over the middle of
/// [outer, reduced, inner]; the result is dense [outer, inner]. nax::shape_error for max, min or
/// mean over no elements (reduced = 0), as plan_reduce.
inline fused_reduce_plan plan_fused_reduce(elementwise_plan program, ops::reduce_kind kind,
                                           std::size_t outer, std::size_t reduced,
                                           std::size_t inner) {
  program.stream = false;  // its output is a buffer meant to stay in cache
  fused_reduce_plan p;
  p.type = program.output_dtypes[0];
  p.kind = kind;
  p.outer = outer;
  p.reduced = reduced;
  p.inner = inner;
  const std::size_t eb = size_of(p.type);
  const std::size_t geometry[3] = {outer, reduced, inner};
  const std::size_t middle[1] = {1};
  if (outer * inner == 0 || reduced == 0) {  // nothing to compute: the row reduction's answer
    p.full = plan_reduce(p.type, kind, geometry, middle);  // (throws for max of nothing)
    p.program = std::move(program);
    return p;
  }
  if (inner == 1) {
    p.chunk = std::max<std::size_t>(1, fused_reduce_buffer_elements / reduced);
    p.items = (outer + p.chunk - 1) / p.chunk;
    const std::size_t full[2] = {p.chunk, reduced};
    const std::size_t last[2] = {outer - (p.items - 1) * p.chunk, reduced};
    p.full = plan_reduce(p.type, kind, full, middle);
    p.last = plan_reduce(p.type, kind, last, middle);
    p.buffer_bytes = p.chunk * reduced * eb;
  } else {
    // Whole rows when they fit the buffer (several per pass), else pieces of a few KiB; with
    // too few items for the threads, pieces of `want_items` per outer row, down to 256 columns
    // (a reduced row's piece is one call of the program: narrower, its overhead shows).
    const std::size_t most = fused_reduce_buffer_elements / 4;
    constexpr std::size_t want_items = 8, narrowest = 256;
    p.chunk = inner <= most ? inner : std::size_t{2048};
    if (outer * ((inner + p.chunk - 1) / p.chunk) < want_items && inner > narrowest) {
      const std::size_t want_pieces = (want_items + outer - 1) / outer;
      const std::size_t w = 64 / eb;  // whole cache lines
      p.chunk = std::min(
          p.chunk, std::max(narrowest, ((inner + want_pieces - 1) / want_pieces + w - 1) / w * w));
    }
    p.pieces = (inner + p.chunk - 1) / p.chunk;
    p.pass = p.pieces == 1 ? std::max<std::size_t>(1, fused_reduce_buffer_elements / inner) : 1;
    p.items = outer * p.pieces;
    p.buffer_bytes = p.pass * p.chunk * eb;  // (pass > 1 only with whole rows: chunk = inner)
  }
  p.program = std::move(program);
  return p;
}

/// Runs a planned fused reduction: `inputs` are the program's, `out` receives outer * inner
/// elements. Never allocates but a thread's first buffer. `native`, if given, is the program's
/// block function (as for run_elementwise).
inline void run_fused_reduce(const fused_reduce_plan& p, const void* const* inputs, void* out,
                             native::block_fn native = nullptr) {
  if (p.outer * p.inner == 0 || p.reduced == 0) {
    // The empty cases of the plain reduction: no output, or the sum of nothing.
    if (p.outer * p.inner != 0) run_reduce(p.full, nullptr, out);
    return;
  }
  if (p.inner == 1) return detail::fr_run_rows(p, inputs, static_cast<std::byte*>(out), native);
  if (p.type == dtype::f64) return detail::fr_run_columns_typed<double>(p, inputs, out, native);
  detail::fr_run_columns_typed<float>(p, inputs, out, native);
}

}  // namespace nax::kernels
