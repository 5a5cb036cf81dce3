#pragma once
// The loop of random tensors: element i of out is ops::random_sample(key, d, a, b, first + i),
// split over the thread pool. Each element depends only on its index, so the bits do not depend
// on the split (ops/random.hpp defines the stream).

#include <cstddef>
#include <cstdint>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/ops/random.hpp>

namespace nax::NAX_ISA::kernels {

/// Elements below this many per thread are not worth a thread.
inline constexpr std::size_t random_grain = 8192;

/// Fills out[0, n) with elements first, first + 1, ... of the stream (T: float or double).
template <class T>
void fill_random(T* out, std::size_t n, std::uint64_t key, ops::distribution d, double a, double b,
                 std::uint64_t first = 0) {
  parallel_for(0, n, random_grain, [=](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) out[i] = ops::random_sample<T>(key, d, a, b, first + i);
  });
}

}  // namespace nax::kernels
