#pragma once
// The step of cumsum: kernels/cumsum.hpp's loop over the operand seen as [outer, n, inner]
// around the summed axis (the typed nax::cumsum's loop, so the same bits).

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::cumsum_op& op,
                                                                   const step_request& request);

}  // namespace nax::NAX_ISA::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstdint>

#include <nax/core/around_axis.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/cumsum.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

template <class T>
class cumsum_step final : public kernels::step_kernel, public arena_allocated {
 public:
  cumsum_step(graph::value_index in, graph::value_index out, nax::detail::around_axis around,
              cumsum_options options)
      : in_(in), out_(out), around_(around), options_(options) {}
  void run(void* const* values, std::byte*) const override {
    kernels::cumsum(static_cast<const T*>(values[in_]), static_cast<T*>(values[out_]),
                    around_.outer, around_.n, around_.inner, options_);
  }

 private:
  graph::value_index in_, out_;
  nax::detail::around_axis around_;
  cumsum_options options_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::cumsum_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const nax::shape& x = request.shapes[s.args[0]];
  const nax::detail::around_axis around = nax::detail::split_around(extents_of(x), op.axis);
  const graph::value_index in = s.args[0], out = s.result;
  switch (x.dtype()) {
    case nax::dtype::f32:
      return std::make_unique<detail::cumsum_step<float>>(in, out, around, op.options);
    case nax::dtype::f64:
      return std::make_unique<detail::cumsum_step<double>>(in, out, around, op.options);
    case nax::dtype::i32:
      return std::make_unique<detail::cumsum_step<std::int32_t>>(in, out, around, op.options);
    case nax::dtype::i64:
      return std::make_unique<detail::cumsum_step<std::int64_t>>(in, out, around, op.options);
    default: break;
  }
  nax::detail::throw_shape_error("nax::executable: no cumsum kernel for ", x.to_string());
}

}  // namespace nax::NAX_ISA::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
