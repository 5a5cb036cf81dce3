#pragma once
// The softmax (and log_softmax) of one row, as the typed softmax and the runtime's row kernel run
// it: a row that fits in cache is swept three times from it (max, exp and sum, scale); a longer
// one is read once by an online pass (running max and rescaled sum per lane) and once to write.
// A cached row's first sweep also checks that every x - max is in exp's fast range (no NaN, the
// least element within exp_fast_limit of the max), so the exps skip exp's per-vector check; and
// with a streamed writer (row_stream) it drains the previous row's output.

#include <cassert>
#include <cstddef>
#include <limits>

#include <nax/core/isa.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/kernels/row_reduce.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::NAX_ISA::detail {

// out[i] = f(i, tail) for a row, vector by vector (f returns a Vec), with a padded tail. A
// deferred writer (stream_row_writer) gets the row in its stream's buffer, written to memory
// while the next row is read.
template <class Vec, class Writer, class F>
void write_row(const Writer& out, std::size_t n, F f) {
  using V = typename Vec::value_type;
  constexpr std::size_t w = Vec::size;
  std::size_t i = 0;
  if constexpr (Writer::deferred) {
    assert(n * sizeof(V) <= cached_row_bytes);  // the drivers defer cached rows only
    out.stream->flush();
    V* buffer = out.stream->buffer();
    for (; i + w <= n; i += w) f(i, false).store_aligned(buffer + i);
    if (i < n) f(i, true).store_aligned(buffer + i);
    out.stream->defer(out.p, n);
  } else {
    for (; i + w <= n; i += w) out.store(i, f(i, false));
    if (i < n) out.store_tail(i, n - i, f(i, true));
  }
}

// max over vectors as one instruction (vmaxps), for the first sweep of a row. Without a NaN it
// gives reducers::max's value: the two differ only in which of +0 and -0 a tie gives, and x - max
// then gives an exp of 1 and a log_softmax of -log(sum) either way. A NaN may be dropped from the
// max, but the sweep finds it, the exps then take exp's general path, and the NaN's exp makes the
// sum, so every output of the row, NaN.
struct unordered_max : reducers::max {
  template <class X>
  static X combine(const X& a, const X& b) {
    if constexpr (simd::is_vec_v<X>)
      return xsimd::max(a, b);
    else
      return reducers::max::combine(a, b);
  }
};

template <class V, bool Log>
struct softmax_row {
  /// The row kernels' vectors: AVX-512 where the flags enable it (simd::row_arch).
  using vec = simd::row_vec<V>;
  static constexpr std::size_t w = vec::size;
  static constexpr bool streams_rows = true;  // streamed_row_kernel
  static constexpr bool defers_rows = true;   // deferred_row_kernel

  template <class Reader, class Writer>
  void operator()(const Reader& x, const Writer& out, std::size_t n) const {
    auto at = [&](std::size_t i) { return load_as<vec>(x, i); };
    auto load = [&](std::size_t i, bool tail) {
      return tail ? load_tail_as<vec>(x, i, n - i) : at(i);
    };
    V max_v, sum_v;
    if (n * sizeof(V) <= cached_row_bytes) {
      // A cached row's exps (softmax), a whole number of vectors. A streamed row's go to its
      // stream's buffer, and are scaled as they are written out.
      [[maybe_unused]] alignas(64)
          V own_buffer[Log || Writer::deferred ? 1 : cached_row_bytes / sizeof(V)];
      [[maybe_unused]] V* row_buffer = own_buffer;
      // The first sweep reads the row from memory: the previous row's deferred output is
      // streamed out meanwhile, a vector per vector read. Besides the max, it finds the least
      // element and any NaN: if every x - max is within exp's fast range (exp_fast_limit), the
      // exps skip exp's per-vector range check (the bits are exp's either way).
      auto drain = out.drain();
      vec lo(std::numeric_limits<V>::infinity());
      simd::row_mask<V> nan(false);
      max_v = reduce_row<unordered_max, V, vec>(
          x, n,
          [&](const vec& v) {
            lo = xsimd::min(lo, v);  // a padded tail can only make the check fail
            nan = nan | xsimd::isnan(v);
            return v;
          },
          drain);
      out.drained(drain);
      const V spread = reduce_lanes<reducers::min>(lo) - max_v;
      const bool in_range = !xsimd::any(nan) && spread >= -simd::exp_fast_limit<V>;
      const vec mx(max_v);
      vec s0(V(0)), s1(V(0));
      auto sweep = [&](auto exp) {
        std::size_t i = 0;
        if constexpr (Log) {
          for (; i + 2 * w <= n; i += 2 * w) {
            prefetch_line(out);
            s0 += exp(at(i) - mx);
            s1 += exp(at(i + w) - mx);
          }
          for (; i + w <= n; i += w) s0 += exp(at(i) - mx);
          if (i < n) s1 += keep_first<reducers::sum>(exp(load(i, true) - mx), n - i);
        } else {
          if constexpr (Writer::deferred) {
            out.stream->flush();
            row_buffer = out.stream->buffer();
          }
          // The exps go to a buffer in L1 (the padded tail's too, so the last vector is whole),
          // which the third sweep scales into the output (a streamed one, as it drains): the
          // output is written once and never read back.
          // The next row's input is fetched meanwhile, a line per line read (a streamed
          // writer's prefetch_step).
          for (; i + 2 * w <= n; i += 2 * w) {
            prefetch_line(out);
            const vec e0 = exp(at(i) - mx), e1 = exp(at(i + w) - mx);
            e0.store_aligned(row_buffer + i);
            e1.store_aligned(row_buffer + i + w);
            s0 += e0;
            s1 += e1;
          }
          for (; i + w <= n; i += w) {
            const vec e = exp(at(i) - mx);
            e.store_aligned(row_buffer + i);
            s0 += e;
          }
          if (i < n) {
            const vec e = exp(load(i, true) - mx);
            e.store_aligned(row_buffer + i);
            s1 += keep_first<reducers::sum>(e, n - i);
          }
        }
      };
      if (in_range)
        sweep([](const vec& v) { return simd::exp_in_range(v); });
      else
        sweep([](const vec& v) { return simd::exp(v); });
      sum_v = reduce_lanes<reducers::sum>(s0 + s1);
      if constexpr (Writer::deferred && !Log) {
        out.stream->defer_scaled(out.p, n, V(1) / sum_v);
        return;
      } else if constexpr (!Log) {
        const vec inv(V(1) / sum_v);
        write_row<vec>(
            out, n, [&](std::size_t i, bool) { return vec::load_unaligned(row_buffer + i) * inv; });
        return;
      }
    } else {
      online(x, n, max_v, sum_v);
      if constexpr (!Log) {
        const vec inv(V(1) / sum_v), mx(max_v);
        write_row<vec>(
            out, n, [&](std::size_t i, bool tail) { return simd::exp(load(i, tail) - mx) * inv; });
        return;
      }
    }
    // (x - max) - log(sum): x - max is exact near the max, where x - (max + log(sum)) would
    // round at the scale of x.
    const vec mx(max_v), log_sum(simd::log(sum_v));
    write_row<vec>(out, n,
                   [&](std::size_t i, bool tail) { return (load(i, tail) - mx) - log_sum; });
  }

  // The prefetch_steps of one iteration of the exp sweep (two vectors read): a line of the next
  // row per line of this one.
  template <class Writer>
  static void prefetch_line(const Writer& out) {
    for (std::size_t k = 0; k < 2 * sizeof(vec) / 64; ++k) out.prefetch_step();
  }

  // One pass: per lane, a running max m and the sum s of exp(x - m), rescaled when m grows.
  template <class Reader>
  static void online(const Reader& x, std::size_t n, V& max_v, V& sum_v) {
    vec m(reducers::max::identity<V>()), s(V(0));
    auto step = [&](const vec& v, std::size_t valid) {
      const vec mn = simd::max(m, v);
      const vec rescale = simd::select(m == mn, vec(V(1)), simd::exp(m - mn));
      s = s * rescale + keep_first<reducers::sum>(simd::exp(v - mn), valid);
      m = mn;
    };
    std::size_t i = 0;
    for (; i + w <= n; i += w) step(load_as<vec>(x, i), w);
    if (i < n) step(keep_first<reducers::max>(load_tail_as<vec>(x, i, n - i), n - i), n - i);
    alignas(64) V ms[w], ss[w];
    m.store_aligned(ms);
    s.store_aligned(ss);
    max_v = reduce_lanes<reducers::max>(m);
    sum_v = 0;
    for (std::size_t j = 0; j < w; ++j)
      if (ss[j] != V(0)) sum_v += ss[j] * (ms[j] == max_v ? V(1) : simd::exp(ms[j] - max_v));
  }
};

}  // namespace nax::detail
