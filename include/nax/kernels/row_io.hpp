#pragma once
// How the row loops read and write one row: padded partial vectors for a row's tail, a writer
// for a contiguous or strided output row, and prefetching of the next row. Shared by the typed
// evaluator and row ops and by the runtime's reduce and row kernels.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/exec/cache_info.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

// The value a padded tail lane holds: 1 is harmless for every op (no log(0), no 0/0 in integer
// division), and the lane is discarded.
template <class T>
constexpr T pad_value() {
  if constexpr (std::is_same_v<T, bool>)
    return false;
  else
    return T(1);
}

/// What loading a vector of T at lane L yields: a vector of T, or a mask of L's width for bool.
template <class L, class T>
using loaded_t = std::conditional_t<std::is_same_v<T, bool>, simd::mask<L>, simd::vec<T>>;

/// Loads `n <= W::size` elements at stride `step` into a padded vector (or mask) W.
template <class W, class T>
W load_partial_as(const T* p, std::ptrdiff_t step, std::size_t n) {
  alignas(64) T tmp[W::size];
  for (std::size_t j = 0; j < W::size; ++j)
    tmp[j] = j < n ? p[static_cast<std::ptrdiff_t>(j) * step] : pad_value<T>();
  return simd::load<W>(tmp);
}

/// Loads `n <= width` elements at stride `step` into a padded vector (or mask).
template <class L, class T>
loaded_t<L, T> load_partial(const T* p, std::ptrdiff_t step, std::size_t n) {
  return load_partial_as<loaded_t<L, T>>(p, step, n);
}

/// The vector W at positions [i, i + W::size) of a row reader's row (W: a row kernel's vector,
/// simd::row_vec): the reader's own load when its vectors are W's, its load_as when it has one
/// (a leaf: one wide load), else two of its vectors joined (an expression evaluated at its own
/// width: a lane's bits do not depend on the width).
template <class W, class Reader>
[[gnu::always_inline]] inline W load_as(const Reader& x, std::size_t i) {
  using H = decltype(x.load(i));
  if constexpr (std::is_same_v<W, H>)
    return x.load(i);
  else if constexpr (requires { x.template load_as<W>(i); })
    return x.template load_as<W>(i);
  else
    return simd::join<W>(x.load(i), x.load(i + H::size));
}

/// The `n < W::size` elements from i of a row reader's row as a padded vector W (load_as's
/// tail). The lanes past n hold padding or repeat the row's own values: callers discard them.
template <class W, class Reader>
W load_tail_as(const Reader& x, std::size_t i, std::size_t n) {
  using H = decltype(x.load(i));
  if constexpr (std::is_same_v<W, H>) {
    return x.load_tail(i, n);
  } else if constexpr (requires { x.template load_tail_as<W>(i, n); }) {
    return x.template load_tail_as<W>(i, n);
  } else {
    if (n > H::size) return simd::join<W>(x.load(i), x.load_tail(i + H::size, n - H::size));
    const H part = n == H::size ? x.load(i) : x.load_tail(i, n);
    return simd::join<W>(part, part);
  }
}

/// Whether X is a vector of T (not a mask, not another lane type).
template <class X, class T>
inline constexpr bool is_vec_of = [] {
  if constexpr (xsimd::is_batch<X>::value)
    return std::is_same_v<typename X::value_type, T>;
  else
    return false;
}();

/// Does nothing: the side work of a row sweep that has none.
struct no_side_work {
  void operator()() const {}
};

/// Asks for the cache lines of [p, p + bytes) to be brought into L1 ahead of use.
inline void prefetch_range(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 3);
}

/// Rows up to this size are swept more than once by the row ops, from cache.
inline constexpr std::size_t cached_row_bytes = 32 * 1024;

/// The next row's input, fetched a cache line at a time while a kernel sweeps this row from L1
/// (memory would idle meanwhile): the row drivers give it the next row's ranges (later()), a
/// kernel calls step() through its writer's prefetch_step() in such a sweep, and the driver
/// fetches the rest after the row. Asked all at once at the start of a row, the fetches held up
/// the row behind them: a prefetch waits for a free line fill buffer, and so did every
/// instruction after it (measured: 30% of softmax's time, on an Intel).
class row_prefetch {
 public:
  /// [p, p + bytes) is to be fetched. Up to four ranges per row; more are fetched at once.
  void later(const void* p, std::size_t bytes) {
    if (ranges_ == max_ranges) return prefetch_range(p, bytes);
    fetch_[ranges_++] = {static_cast<const char*>(p), static_cast<const char*>(p) + bytes};
  }
  /// Fetches the next line of the ranges given to later(); false once there is none left.
  bool step() {
    while (ranges_ > 0) {
      fetch_range& f = fetch_[ranges_ - 1];
      if (f.next < f.end) {
        __builtin_prefetch(f.next, 0, 3);
        f.next += 64;
        return true;
      }
      --ranges_;
    }
    return false;
  }
  /// Fetches what step() has not.
  void rest() {
    for (; ranges_ > 0; --ranges_)
      for (const char* c = fetch_[ranges_ - 1].next; c < fetch_[ranges_ - 1].end; c += 64)
        __builtin_prefetch(c, 0, 3);
  }

 private:
  struct fetch_range {
    const char *next, *end;
  };
  static constexpr std::size_t max_ranges = 4;
  fetch_range fetch_[max_ranges];
  std::size_t ranges_ = 0;
};

/// One row of a destination as a kernel writes it: `store(i, v)` (a vector, or a mask for a bool
/// destination), `store_tail(i, n, v)`, `load(i)` (to rewrite in place) and `at(i)`; at unit
/// stride when `Contiguous`, else at `step` (contiguous rows still store directly).
template <class T, bool Contiguous>
struct row_writer {
  static constexpr bool deferred = false;
  T* p;
  std::ptrdiff_t step;
  /// The next row's input, when the row driver fetches it during the row (prefetch_step).
  row_prefetch* fetch = nullptr;
  T& at(std::size_t i) const { return p[Contiguous ? i : static_cast<std::ptrdiff_t>(i) * step]; }
  template <class X>
  void store(std::size_t i, const X& v) const {
    if constexpr (is_vec_of<X, T>) {
      if (Contiguous || step == 1) return v.store_unaligned(&at(i));
    }
    store_tail(i, X::size, v);
  }
  template <class X>
  void store_tail(std::size_t i, std::size_t n, const X& v) const {
    alignas(64) T tmp[X::size];
    v.store_aligned(tmp);
    for (std::size_t j = 0; j < n; ++j) at(i + j) = tmp[j];
  }
  simd::vec<T> load(std::size_t i) const {
    if constexpr (Contiguous)
      return simd::vec<T>::load_unaligned(p + i);
    else
      return load_partial<T>(p + static_cast<std::ptrdiff_t>(i) * step, step, simd::width<T>);
  }
  /// The previous row's deferred output (row_stream): none here.
  no_side_work drain() const { return {}; }
  void drained(no_side_work) const {}
  /// A line of the next row's input (row_prefetch), if the driver gave its ranges.
  void prefetch_step() const {
    if (fetch) fetch->step();
  }
};

/// The output of a thread's rows (each at most cached_row_bytes), written one row behind: a
/// kernel writes row r into `buffer` (in L1, through the caches) and defers it; while the kernel
/// reads row r + 1 from memory, each vector it reads drains one vector of row r to its
/// destination: with a non-temporal store when `nontemporal()` (a large output: it never passes
/// through the caches), else with an ordinary one. So the stores are spread over the reads and the
/// arithmetic instead of coming in a burst at the end of each row (where they would fill the
/// store queue and hold up the next row). The values are the row's own: only the time they reach
/// memory changes. finish() writes what is still pending and orders the stores (call it before
/// the rows are handed on).
template <class T>
class row_stream {
 public:
  /// The row kernels' vectors (simd::row_vec): a kernel drains one per vector it reads.
  using vec = simd::row_vec<T>;
  static constexpr std::size_t w = vec::size;

  row_stream() noexcept {}  // NOLINT: the buffer needs no initialization
  row_stream(const row_stream&) = delete;
  row_stream& operator=(const row_stream&) = delete;
  ~row_stream() { finish(); }

  /// Where a kernel writes its row (whole vectors: a padded tail's lanes may be written too);
  /// the previous row must be drained first (flush()).
  T* buffer() { return buffer_; }

  /// Whether the rows deferred from now on go to memory with non-temporal stores (the default)
  /// or with ordinary ones, through the caches.
  void nontemporal(bool on) { nontemporal_ = on; }

  /// The row in buffer() is the output of [p, p + n): written to memory while the next row is
  /// read (drain()), or by flush().
  void defer(T* p, std::size_t n) { defer_scaled(p, n, T(1), false); }

  /// The row in buffer() times `scale` (a multiply per element as it is written) is the output
  /// of [p, p + n).
  void defer_scaled(T* p, std::size_t n, T scale, bool scaled = true) {
    dst_ = p;
    n_ = n;
    scale_ = scale;
    scaled_ = scaled;
    // Non-temporal: the elements before p's first vector-aligned address go with ordinary
    // stores (flush()).
    const std::size_t off = reinterpret_cast<std::uintptr_t>(p) % sizeof(vec);
    head_ = !nontemporal_ || off == 0 || off % sizeof(T) != 0
                ? 0
                : std::min(n, (sizeof(vec) - off) / sizeof(T));
    next_ = head_;
    streamed_ = nontemporal_ && off % sizeof(T) == 0;
  }

  /// Streams the deferred row's vectors one per call, from locals (so the loop that calls it
  /// keeps them in registers); hand it back with drained().
  struct drainer {
    const T* src;
    T* dst;
    std::size_t left;
    vec scale;
    bool scaled, streamed;  // (streamed: non-temporal stores, to vector-aligned addresses)
    void operator()() {
      if (left == 0) return;
      vec v = vec::load_unaligned(src);
      if (scaled) v *= scale;
      if (streamed)
        simd::stream_store(dst, v);
      else
        v.store_unaligned(dst);
      src += w;
      dst += w;
      --left;
    }
  };
  drainer drain() {
    if (!dst_) return {buffer_, nullptr, 0, vec(T(1)), false, false};
    return {buffer_ + next_, dst_ + next_, (n_ - next_) / w, vec(scale_), scaled_, streamed_};
  }
  void drained(const drainer& d) {
    if (dst_) next_ = static_cast<std::size_t>(d.src - buffer_);
  }

  /// Writes the rest of the deferred row (its head, its remaining vectors, its tail).
  void flush() {
    if (!dst_) return;
    for (std::size_t j = 0; j < head_; ++j) dst_[j] = scaled_ ? buffer_[j] * scale_ : buffer_[j];
    drainer d = drain();
    while (d.left) d();
    next_ = static_cast<std::size_t>(d.src - buffer_);
    for (; next_ < n_; ++next_) dst_[next_] = scaled_ ? buffer_[next_] * scale_ : buffer_[next_];
    dst_ = nullptr;
    n_ = head_ = next_ = 0;
  }

  /// flush(), then orders the non-temporal stores before later stores.
  void finish() {
    flush();
    simd::stream_fence();
  }

 private:
  alignas(64) T buffer_[cached_row_bytes / sizeof(T)];
  T* dst_ = nullptr;
  std::size_t n_ = 0, head_ = 0, next_ = 0;
  T scale_ = T(1);
  bool scaled_ = false, streamed_ = true, nontemporal_ = true;
};

/// A row written through a row_stream (contiguous, at most cached_row_bytes): the kernel's
/// write_row computes the row into the stream's buffer and defers it; drain() gives a functor
/// that streams a vector of the previous row per call (once per vector the kernel reads in its
/// first sweep), drained(d) takes it back.
template <class T>
struct stream_row_writer {
  static constexpr bool deferred = true;
  row_stream<T>* stream;
  T* p;
  /// The next row's input, when the row driver fetches it during the row (prefetch_step).
  row_prefetch* fetch = nullptr;
  typename row_stream<T>::drainer drain() const { return stream->drain(); }
  void drained(const typename row_stream<T>::drainer& d) const { stream->drained(d); }
  /// A line of the next row's input (row_prefetch), if the driver gave its ranges.
  void prefetch_step() const {
    if (fetch) fetch->step();
  }
};

/// A row kernel that writes each output row once, through write_row (or a stream_row_writer's
/// drain in its first sweep): the row drivers may hand it a stream_row_writer.
template <class K>
concept streamed_row_kernel = requires {
  requires K::streams_rows;
};

/// A streamed_row_kernel whose rows are faster deferred than written at once even when the
/// output stays in the caches (ordinary stores, drained during the next row's first sweep):
/// softmax, whose third sweep would otherwise wait on its stores (measured: 4-9% at 2 threads on
/// an AVX-512 Intel; layer_norm ran 7-10% slower deferred, so it is not one).
template <class K>
concept deferred_row_kernel = streamed_row_kernel<K> && requires {
  requires K::defers_rows;
};

/// Whether the row ops stream an output of `bytes` around the caches: when it is larger than
/// this core's share of the last-level cache (as the evaluator's streamed assignments), so that
/// writing it through the caches would only evict the input and cost a read of every line.
inline bool stream_row_output(std::size_t bytes) {
  const cache_sizes& caches = machine_caches();
  return bytes >= caches.l3 / caches.l3_sharing;
}

}  // namespace nax::detail
