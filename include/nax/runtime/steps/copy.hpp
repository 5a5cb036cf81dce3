#pragma once
// The steps that move data without computing: transpose, reshape, broadcast and slice, each one
// strided copy (kernels/copy.hpp) from the operand, read through the op's strides and offset,
// into the dense result.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

/// The kernels of transpose, reshape, broadcast and slice steps.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::transpose_op&,
                                                                   const step_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::reshape_op&,
                                                                   const step_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::broadcast_op&,
                                                                   const step_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::slice_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class strided_copy_step final : public kernels::step_kernel, public arena_allocated {
 public:
  strided_copy_step(kernels::copy_plan plan, graph::value_index in, std::size_t in_offset_bytes,
                    graph::value_index out)
      : plan_(std::move(plan)), in_(in), in_offset_(in_offset_bytes), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    // An empty operand has no buffer (null) and gives an empty result: nothing to offset or copy.
    const auto* in = static_cast<const std::byte*>(values[in_]);
    if (in == nullptr) return;
    kernels::run_copy(plan_, in + in_offset_, values[out_]);
  }

 private:
  kernels::copy_plan plan_;
  graph::value_index in_;
  std::size_t in_offset_;
  graph::value_index out_;
};

}  // namespace detail

namespace detail {

// The step copying operand 0 of the request's step, read through `src` strides from `offset` bytes,
// into its dense result.
inline std::unique_ptr<kernels::step_kernel> strided_copy(const step_request& request,
                                                          const strides_vector& src,
                                                          std::size_t offset = 0) {
  const graph::program_step& s = request.step;
  const nax::shape& out = request.shapes[s.result];
  return std::make_unique<strided_copy_step>(
      kernels::plan_copy(size_of(out.dtype()), extents_of(out), src, dense_strides(out)), s.args[0],
      offset, s.result);
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::transpose_op& op,
                                                                   const step_request& request) {
  const strides_vector dense = dense_strides(request.shapes[request.step.args[0]]);
  strides_vector src;
  for (std::uint32_t a : op.perm) src.push_back(dense[a]);
  return detail::strided_copy(request, src);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::reshape_op&,
                                                                   const step_request& request) {
  // Both dense: the same bytes.
  const graph::program_step& s = request.step;
  const std::size_t bytes[1] = {request.shapes[s.result].num_bytes()};
  const std::ptrdiff_t unit[1] = {1};
  return std::make_unique<detail::strided_copy_step>(kernels::plan_copy(1, bytes, unit, unit),
                                                     s.args[0], 0, s.result);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::broadcast_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  extents_vector map;
  for (std::uint32_t j : op.axis_map) map.push_back(j);
  return detail::strided_copy(
      request, operand_strides(s, request.shapes[s.args[0]], 0, request.shapes[s.result], map));
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::slice_op& sl,
                                                                   const step_request& request) {
  const nax::shape& in = request.shapes[request.step.args[0]];
  const std::size_t axis = sl.axis;
  const auto start = static_cast<std::size_t>(sl.start), stop = static_cast<std::size_t>(sl.stop);
  if (stop > in[axis].extent())
    nax::detail::throw_shape_error("nax::graph::slice: stop ", stop, " is past the end of ",
                                   in[axis].describe(), ", whose extent is ", in[axis].extent(),
                                   " (", nax::detail::concrete_string(in), ")");
  strides_vector src = dense_strides(in);
  const std::size_t offset = start * static_cast<std::size_t>(src[axis]) * size_of(in.dtype());
  src[axis] *= static_cast<std::ptrdiff_t>(sl.step);
  return detail::strided_copy(request, src, offset);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
