#pragma once
// The loop of positions along an axis: a dense tensor of extents [outer, n, inner] (the axis in
// the middle) whose element (o, j, i) is T(j).

#include <algorithm>
#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>

namespace nax::NAX_ISA::kernels {

template <class T>
void fill_iota(T* out, std::size_t outer, std::size_t n, std::size_t inner) {
  const std::size_t row = n * inner;
  parallel_for(0, outer, std::max<std::size_t>(1, 65536 / std::max<std::size_t>(1, row)),
               [=](std::size_t lo, std::size_t hi) {
                 for (std::size_t o = lo; o < hi; ++o)
                   for (std::size_t j = 0; j < n; ++j)
                     std::fill_n(out + o * row + j * inner, inner, static_cast<T>(j));
               });
}

}  // namespace nax::kernels
