#pragma once
// A strided matrix as the GEMM kernels see an operand: a pointer and a stride per dimension (in
// elements), so row-major, column-major (a transpose) and sliced or permuted views are all one
// type and are handled by packing, never by an explicit transpose.

#include <cstddef>
#include <type_traits>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::kernels {

/// Element (i, j) is data[i * rs + j * cs]; a batch of matrices steps by `bs`.
template <class T>
struct matrix_ref {
  T* data = nullptr;
  std::ptrdiff_t rs = 0, cs = 1, bs = 0;

  matrix_ref() = default;
  matrix_ref(T* d, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
             std::ptrdiff_t batch_stride = 0)
      : data(d), rs(row_stride), cs(col_stride), bs(batch_stride) {}
  /// A read-only view of a writable matrix.
  template <class U>
  requires std::is_same_v<const U, T> matrix_ref(const matrix_ref<U>& m)
      : data(m.data), rs(m.rs), cs(m.cs), bs(m.bs) {}

  T& operator()(std::size_t i, std::size_t j) const {
    return data[static_cast<std::ptrdiff_t>(i) * rs + static_cast<std::ptrdiff_t>(j) * cs];
  }
  /// The sub-matrix from (i, j).
  matrix_ref at(std::size_t i, std::size_t j) const { return {&(*this)(i, j), rs, cs, bs}; }
  /// Matrix b of a batch.
  matrix_ref batch(std::size_t b) const {
    return {data + static_cast<std::ptrdiff_t>(b) * bs, rs, cs, bs};
  }
  /// The transpose, as a view.
  matrix_ref transposed() const { return {data, cs, rs, bs}; }
};

}  // namespace nax::kernels
