#pragma once
// How the row loops read and write one row: padded partial vectors for a row's tail, a writer
// for a contiguous or strided output row, and prefetching of the next row. Shared by the typed
// evaluator and row ops and by the runtime's reduce and row kernels.

#include <cstddef>
#include <type_traits>

#include <nax/simd/arch.hpp>

namespace nax::detail {

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

/// Loads `n <= width` elements at stride `step` into a padded vector (or mask).
template <class L, class T>
loaded_t<L, T> load_partial(const T* p, std::ptrdiff_t step, std::size_t n) {
  constexpr std::size_t w = loaded_t<L, T>::size;
  alignas(64) T tmp[w];
  for (std::size_t j = 0; j < w; ++j)
    tmp[j] = j < n ? p[static_cast<std::ptrdiff_t>(j) * step] : pad_value<T>();
  return loaded_t<L, T>::load_aligned(tmp);
}

/// One row of a destination as a kernel writes it: `store(i, v)` (a vector, or a mask for a bool
/// destination), `store_tail(i, n, v)`, `load(i)` (to rewrite in place) and `at(i)`; at unit
/// stride when `Contiguous`, else at `step` (contiguous rows still store directly).
template <class T, bool Contiguous>
struct row_writer {
  T* p;
  std::ptrdiff_t step;
  T& at(std::size_t i) const { return p[Contiguous ? i : static_cast<std::ptrdiff_t>(i) * step]; }
  template <class X>
  void store(std::size_t i, const X& v) const {
    if constexpr (std::is_same_v<X, simd::vec<T>>) {
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
};

/// Rows up to this size are swept more than once by the row ops, from cache.
inline constexpr std::size_t cached_row_bytes = 32 * 1024;

/// Asks for the cache lines of [p, p + bytes) to be brought into L1 ahead of use.
inline void prefetch_range(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 3);
}

}  // namespace nax::detail
