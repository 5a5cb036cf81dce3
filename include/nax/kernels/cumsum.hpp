#pragma once
// The loop of a cumulative sum along one axis of a dense tensor of extents [outer, n, inner]
// (the axis in the middle), for the typed nax::cumsum and the runtime's cumsum step alike, so
// both give the same bits. Each position of the other axes sums in order along the axis (one
// add per element, in the element type), so any split of the work over threads and any vector
// width give those bits too. Integers wrap around on overflow (as NumPy's do), not undefined.
// x and y must not overlap.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/ops/cumsum.hpp>

namespace nax::NAX_ISA::kernels {

namespace detail {

// The element type's add, wrapping for integers.
template <class T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

}  // namespace detail

template <class T>
void cumsum(const T* x, T* y, std::size_t outer, std::size_t n, std::size_t inner,
            cumsum_options options) {
  if (outer == 0 || n == 0 || inner == 0) return;
  // A work item: one position of the outer axes and a block of the inner ones, walked along the
  // axis row by row (each row of the block contiguous, so the adds vectorize).
  constexpr std::size_t block = 256;
  const std::size_t blocks = (inner + block - 1) / block;
  const std::size_t width = std::min(inner, block);
  const std::size_t grain = std::max<std::size_t>(1, 32768 / (n * width));
  parallel_for(0, outer * blocks, grain, [=](std::size_t lo, std::size_t hi) {
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t o = item / blocks, first = (item % blocks) * block;
      const std::size_t w = std::min(block, inner - first);
      const T* in = x + o * n * inner + first;
      T* out = y + o * n * inner + first;
      // Position k along the walk is row j of the axis; the walk goes backwards when reversed.
      auto row = [&](std::size_t k) { return (options.reverse ? n - 1 - k : k) * inner; };
      if (options.exclusive) {
        std::fill(out + row(0), out + row(0) + w, T(0));
        if (n > 1) std::copy(in + row(0), in + row(0) + w, out + row(1));
        for (std::size_t k = 2; k < n; ++k) {
          const T* prev = out + row(k - 1);
          const T* add = in + row(k - 1);
          T* to = out + row(k);
          for (std::size_t i = 0; i < w; ++i) to[i] = detail::add_wrapping(prev[i], add[i]);
        }
      } else {
        std::copy(in + row(0), in + row(0) + w, out + row(0));
        for (std::size_t k = 1; k < n; ++k) {
          const T* prev = out + row(k - 1);
          const T* add = in + row(k);
          T* to = out + row(k);
          for (std::size_t i = 0; i < w; ++i) to[i] = detail::add_wrapping(prev[i], add[i]);
        }
      }
    }
  });
}

}  // namespace nax::NAX_ISA::kernels
