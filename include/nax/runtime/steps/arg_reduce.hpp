#pragma once
// The step of argmax and argmin along one axis (kernels/arg_reduce.hpp), split over the thread
// pool.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

/// nax::shape_error naming the op and the axis if the axis is bound to 0 (nothing to find).
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::arg_reduce_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstdint>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/core/around_axis.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/arg_reduce.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

template <bool Max, class T>
class arg_reduce_step final : public kernels::step_kernel, public arena_allocated {
 public:
  arg_reduce_step(graph::value_index in, graph::value_index out, std::size_t outer, std::size_t n,
                  std::size_t inner)
      : in_(in), out_(out), outer_(outer), n_(n), inner_(inner) {}
  void run(void* const* values, std::byte*) const override {
    kernels::arg_reduce<Max>(static_cast<const T*>(values[in_]),
                             static_cast<std::int64_t*>(values[out_]), outer_, n_, inner_);
  }

 private:
  graph::value_index in_, out_;
  std::size_t outer_, n_, inner_;
};

template <bool Max>
std::unique_ptr<kernels::step_kernel> make_arg_reduce(nax::dtype t, graph::value_index in,
                                                      graph::value_index out, std::size_t outer,
                                                      std::size_t n, std::size_t inner) {
  switch (t) {
    case nax::dtype::f32:
      return std::make_unique<arg_reduce_step<Max, float>>(in, out, outer, n, inner);
    case nax::dtype::f64:
      return std::make_unique<arg_reduce_step<Max, double>>(in, out, outer, n, inner);
    case nax::dtype::i32:
      return std::make_unique<arg_reduce_step<Max, std::int32_t>>(in, out, outer, n, inner);
    case nax::dtype::i64:
      return std::make_unique<arg_reduce_step<Max, std::int64_t>>(in, out, outer, n, inner);
    default: break;
  }
  return nullptr;
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::arg_reduce_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& x = shapes[s.args[0]];
  const extents_vector ext = extents_of(x);
  const auto [outer, n, inner] = nax::detail::split_around(ext, op.axis);
  if (n == 0)
    nax::detail::throw_shape_error("nax::executable: ", graph::op_label(s.op), " along ",
                                   x[op.axis].describe(), " of ", x.to_string(),
                                   ": the axis is empty");
  auto k = op.kind == graph::arg_kind::argmax
               ? detail::make_arg_reduce<true>(x.dtype(), s.args[0], s.result, outer, n, inner)
               : detail::make_arg_reduce<false>(x.dtype(), s.args[0], s.result, outer, n, inner);
  if (!k)
    nax::detail::throw_shape_error("nax::executable: no arg_reduce kernel for ", x.to_string());
  return k;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
