#pragma once
// The GEMM epilogue of the runtime's fused dense steps: a bias along C's columns and a unary
// activation that is an elementwise op chosen at run time (a graph node's op index), applied to
// each finished run of a row of C while it is in L1 (gemm.hpp's row_hook), with the block body
// of the elementwise kernels (elementwise.hpp), so the typed evaluator's op body. One GEMM
// instantiation per element type serves every activation.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/kernels/elementwise/bodies.hpp>
#include <nax/kernels/elementwise/planner.hpp>
#include <nax/ops/dtype_rules.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::kernels {

template <class T>
struct dense_epilogue {
  using activation = void;  // applied by row_hook instead
  const T* bias = nullptr;
  bool bias_per_row = false;
  detail::ew_fn act = nullptr;  // the activation's block body, or none

  void row_hook(T* c, std::ptrdiff_t step, std::size_t n) const {
    if (act == nullptr) return;
    if (step == 1) {
      const void* const args[3] = {c, c, c};
      act(n, args, c);  // in place: each element is read before it is written
      return;
    }
    // A strided run (a transposed matrix-vector product): through a small buffer.
    constexpr std::size_t chunk = 256;
    alignas(64) T buf[chunk];
    for (std::size_t j0 = 0; j0 < n; j0 += chunk) {
      const std::size_t len = std::min(chunk, n - j0);
      for (std::size_t j = 0; j < len; ++j) buf[j] = c[static_cast<std::ptrdiff_t>(j0 + j) * step];
      const void* const args[3] = {buf, buf, buf};
      act(len, args, buf);
      for (std::size_t j = 0; j < len; ++j) c[static_cast<std::ptrdiff_t>(j0 + j) * step] = buf[j];
    }
  }
};

/// The block body of unary op `op` over T, for dense_epilogue::act. nax::shape_error if the op is
/// not a unary op on T.
template <class T>
detail::ew_fn dense_activation(ops::id op) {
  const dtype t = std::is_same_v<T, float> ? dtype::f32 : dtype::f64;
  const dtype types[1] = {t};
  detail::ew_check_op(op);
  if (ops::result_dtype(op, types, detail::ew_prefix) != t)
    nax::detail::throw_shape_error(detail::ew_prefix, ops::name(op),
                                   " is not an activation (its result is not ", nax::name(t), ")");
  return detail::ew_resolve(op, t, 0);
}

}  // namespace nax::kernels
