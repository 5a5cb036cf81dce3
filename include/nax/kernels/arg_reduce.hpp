#pragma once
// The loop of argmax and argmin along one axis of a dense tensor of extents [outer, n, inner]
// (the axis in the middle): out[o, i] is the position j of the first largest (smallest) x[o, j, i].
// A NaN wins over every number (the first NaN's position, as numpy's argmax and argmin); an
// empty axis (n == 0) is for the caller to refuse.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>

namespace nax::NAX_ISA::kernels {

template <bool Max, class T>
void arg_reduce(const T* x, std::int64_t* out, std::size_t outer, std::size_t n,
                std::size_t inner) {
  auto better = [](T v, T best) {
    if constexpr (Max)
      return v > best;
    else
      return v < best;
  };
  auto is_nan = [](T v) {
    if constexpr (std::is_floating_point_v<T>)
      return std::isnan(v);
    else
      return false;
  };
  const std::size_t items = outer * inner;
  const std::size_t grain = std::max<std::size_t>(1, 32768 / std::max<std::size_t>(1, n));
  parallel_for(0, items, grain, [=](std::size_t lo, std::size_t hi) {
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t o = item / inner, i = item % inner;
      const T* p = x + o * n * inner + i;
      T best = p[0];
      std::size_t at = 0;
      if (!is_nan(best))
        for (std::size_t j = 1; j < n; ++j) {
          const T v = p[j * inner];
          if (is_nan(v)) {
            at = j;
            break;
          }
          if (better(v, best)) {
            best = v;
            at = j;
          }
        }
      out[item] = static_cast<std::int64_t>(at);
    }
  });
}

}  // namespace nax::kernels
