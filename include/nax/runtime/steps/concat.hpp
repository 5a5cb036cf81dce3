#pragma once
// The step of concat: each operand copied (kernels/copy.hpp) to its place along the axis.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::concat_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/runtime/kernel_arena.hpp>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class concat_step final : public kernels::step_kernel, public arena_allocated {
 public:
  struct part {
    kernels::copy_plan plan;
    graph::value_index in;
    std::size_t out_offset;  // bytes
  };
  concat_step(std::vector<part> parts, graph::value_index out)
      : parts_(std::move(parts)), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    // (An empty result has no buffer to offset into, and every part is empty too.)
    if (values[out_] == nullptr) return;
    for (const part& p : parts_)
      kernels::run_copy(p.plan, values[p.in], static_cast<std::byte*>(values[out_]) + p.out_offset);
  }

 private:
  std::vector<part> parts_;
  graph::value_index out_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::concat_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const std::size_t axis = op.axis;
  const nax::shape& out = shapes[s.result];
  const strides_vector dst = dense_strides(out);
  std::vector<detail::concat_step::part> parts;
  std::size_t at = 0;
  for (graph::value_index a : s.args) {
    const nax::shape& in = shapes[a];
    for (std::size_t i = 0; i < in.rank(); ++i)
      if (i != axis && in[i].extent() != out[i].extent())
        throw_extent_mismatch(s, in, i, out, i, nax::detail::message("operand ", parts.size()));
    parts.push_back(
        {kernels::plan_copy(size_of(in.dtype()), extents_of(in), dense_strides(in), dst), a,
         at * static_cast<std::size_t>(dst[axis]) * size_of(in.dtype())});
    at += in[axis].extent();
  }
  return std::make_unique<detail::concat_step>(std::move(parts), s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
