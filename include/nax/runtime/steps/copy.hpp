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

namespace nax::NAX_ISA::runtime {

/// The kernel of a transpose, reshape, broadcast or slice step s.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_copy_step(
    const graph::program_step& s, std::span<const nax::shape> shapes);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class copy_step final : public kernels::step_kernel, public arena_allocated {
 public:
  copy_step(kernels::copy_plan plan, graph::value_index in, std::size_t in_offset_bytes,
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

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_copy_step(
    const graph::program_step& s, std::span<const nax::shape> shapes) {
  const nax::shape& in = shapes[s.args[0]];
  const nax::shape& out = shapes[s.result];
  const extents_vector out_ext = extents_of(out);
  const std::size_t element = size_of(in.dtype());
  auto copy = [&](const strides_vector& src, std::size_t offset = 0) {
    return std::make_unique<detail::copy_step>(
        kernels::plan_copy(element, out_ext, src, dense_strides(out)), s.args[0], offset, s.result);
  };
  switch (s.kind()) {
    case graph::op_kind::transpose: {
      const strides_vector dense = dense_strides(in);
      strides_vector src;
      for (std::uint32_t a : s.as<graph::transpose_op>().perm) src.push_back(dense[a]);
      return copy(src);
    }
    case graph::op_kind::reshape: {  // both dense: the same bytes
      const std::size_t bytes[1] = {out.num_bytes()};
      const std::ptrdiff_t unit[1] = {1};
      return std::make_unique<detail::copy_step>(kernels::plan_copy(1, bytes, unit, unit),
                                                 s.args[0], 0, s.result);
    }
    case graph::op_kind::broadcast: {
      extents_vector map;
      for (std::uint32_t j : s.as<graph::broadcast_op>().axis_map) map.push_back(j);
      return copy(operand_strides(s, in, 0, out, map));
    }
    case graph::op_kind::slice: {
      const graph::slice_op& sl = s.as<graph::slice_op>();
      const std::size_t axis = sl.axis;
      const auto start = static_cast<std::size_t>(sl.start),
                 stop = static_cast<std::size_t>(sl.stop);
      if (stop > in[axis].extent())
        nax::detail::throw_shape_error("nax::graph::slice: stop ", stop, " is past the end of ",
                                       in[axis].describe(), ", whose extent is ", in[axis].extent(),
                                       " (", nax::detail::concrete_string(in), ")");
      strides_vector src = dense_strides(in);
      const std::size_t offset = start * static_cast<std::size_t>(src[axis]) * element;
      src[axis] *= static_cast<std::ptrdiff_t>(sl.step);
      return copy(src, offset);
    }
    default:
      nax::detail::throw_shape_error("nax::executable: ", graph::op_label(s.op), " is not a copy");
  }
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
