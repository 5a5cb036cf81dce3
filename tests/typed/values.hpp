#pragma once
// Deterministic test data shared by the elementwise tests.

#include <nax/typed/tensor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

using row = nax::axis<"row">;
using col = nax::axis<"col">;

namespace test_values {

// Shapes [row, col] that cover one element, a tail alone, and full vectors with tails.
inline constexpr std::array<std::array<std::size_t, 2>, 4> sizes{
    {{1, 1}, {1, 7}, {3, 33}, {5, 1027}}};

// Deterministic values spread over [lo, hi].
template <class T>
void spread(T* p, std::size_t n, double lo, double hi, std::uint32_t seed) {
  std::uint32_t s = seed;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<T>(lo + (hi - lo) * (s >> 8) / double(1u << 24));
  }
}

template <class T>
nax::tensor<T, row, col> matrix(std::size_t r, std::size_t c, double lo, double hi,
                                std::uint32_t seed) {
  nax::tensor<T, row, col> x(row{r}, col{c});
  spread(x.data(), x.size(), lo, hi, seed);
  return x;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-13;
}

}  // namespace test_values
