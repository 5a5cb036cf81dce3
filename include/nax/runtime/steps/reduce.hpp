#pragma once
// The step of a reduction: the reduce kernel (kernels/reduce.hpp) planned for the operand's
// concrete extents.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::reduce_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/kernels/reduce.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class reduce_step final : public kernels::step_kernel, public arena_allocated {
 public:
  reduce_step(kernels::reduce_plan plan, graph::value_index in, graph::value_index out)
      : plan_(std::move(plan)), in_(in), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_reduce(plan_, values[in_], values[out_]);
  }

 private:
  kernels::reduce_plan plan_;
  graph::value_index in_, out_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::reduce_op& r,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& in = shapes[s.args[0]];
  extents_vector axes;
  for (std::uint32_t a : r.axes) axes.push_back(a);
  return std::make_unique<detail::reduce_step>(
      kernels::plan_reduce(in.dtype(), r.kind, extents_of(in), axes), s.args[0], s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
