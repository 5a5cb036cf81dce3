#pragma once
// The check of the GEMM tests: C = act(alpha A B + beta C0 + bias) by the kernel against a
// naive product in double, for any layout of the operands.
#include <nax/kernels/gemm.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

namespace gemm_test {

using nax::kernels::gemm_algorithm;
using nax::kernels::matrix_ref;

// Values in [-1, 1] from a simple hash: deterministic, no pattern the kernel could exploit.
inline double value_at(std::size_t i, std::size_t salt) {
  std::size_t h = (i + 1) * 2654435761u + salt * 40503u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return double(h % 2001) / 1000.0 - 1.0;
}

template <class T>
std::vector<T> filled(std::size_t n, std::size_t salt) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(value_at(i, salt));
  return v;
}

struct layout {
  bool transpose_a = false, transpose_b = false;
  std::size_t pad = 0;  // extra leading-dimension elements (a strided view)
};

// Checks C = act(alpha A B + beta C0 + bias) against the double reference, element by element,
// with a bound scaled by the sum of |a| |b| over k (the error of a float dot product).
template <class T, class Epi = nax::kernels::epilogue<T>, class Ref>
void check_product(std::size_t m, std::size_t n, std::size_t k, std::size_t batch, layout l,
                   T alpha, T beta, const Epi& epi, Ref activation,
                   const nax::kernels::gemm_plan& plan) {
  const std::size_t lda = (l.transpose_a ? m : k) + l.pad, ldb = (l.transpose_b ? k : n) + l.pad;
  const std::size_t ldc = n + l.pad;
  const std::size_t a_rows = l.transpose_a ? k : m, b_rows = l.transpose_b ? n : k;
  const std::size_t a_size = a_rows * lda, b_size = b_rows * ldb, c_size = m * ldc;
  const auto a = filled<T>(a_size * batch, 1), b = filled<T>(b_size * batch, 2);
  auto c = filled<T>(c_size * batch, 3);
  const auto c0 = c;
  matrix_ref<const T> ar(a.data(), static_cast<std::ptrdiff_t>(lda), 1,
                         static_cast<std::ptrdiff_t>(a_size));
  matrix_ref<const T> br(b.data(), static_cast<std::ptrdiff_t>(ldb), 1,
                         static_cast<std::ptrdiff_t>(b_size));
  if (l.transpose_a) ar = ar.transposed();
  if (l.transpose_b) br = br.transposed();
  matrix_ref<T> cr(c.data(), static_cast<std::ptrdiff_t>(ldc), 1,
                   static_cast<std::ptrdiff_t>(c_size));
  nax::kernels::gemm(plan, ar, br, cr, alpha, beta, epi);

  const double eps = std::numeric_limits<T>::epsilon();
  std::size_t wrong = 0;
  for (std::size_t bi = 0; bi < batch; ++bi)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0, mag = 0;
        for (std::size_t p = 0; p < k; ++p) {
          const double x = double(ar.batch(bi)(i, p)) * double(br.batch(bi)(p, j));
          dot += x;
          mag += std::abs(x);
        }
        const double old = c0[bi * c_size + i * ldc + j];
        double want = double(alpha) * dot + (beta != T(0) ? double(beta) * old : 0.0);
        if (epi.bias) want += double(epi.bias[epi.bias_per_row ? i : j]);
        want = activation(want);
        const double got = c[bi * c_size + i * ldc + j];
        const double tol = 4 * eps * (double(k) + 4) *
                           (std::abs(double(alpha)) * mag + 1 + std::abs(double(beta) * old));
        if (!(std::abs(got - want) <= tol)) ++wrong;
      }
  CHECK(wrong == 0);
  // Padding between rows of C is not written.
  if (l.pad)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = n; j < ldc; ++j) REQUIRE(c[i * ldc + j] == c0[i * ldc + j]);
}

inline double identity(double x) { return x; }

}  // namespace gemm_test
