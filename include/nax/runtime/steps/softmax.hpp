#pragma once
// The step of softmax (or log_softmax) along one axis: a builder's runs the row kernel
// (kernels/rows.hpp), the typed layer's; one the softmax fusion pass recognized from primitives,
// the spelled kernel (kernels/spelled_rows.hpp), which gives the primitives' bits.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::softmax_op&,
                                                                   const step_request& request);

/// The kernel of softmax step s, copied from `like`: a softmax's over the same shapes.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::softmax_op&, const step_copy_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/kernels/rows.hpp>
#include <nax/kernels/spelled_rows.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class softmax_step final : public kernels::step_kernel, public arena_allocated {
 public:
  softmax_step(kernels::rows_plan plan, bool log, graph::value_index in, graph::value_index out)
      : plan_(std::move(plan)), log_(log), in_(in), out_(out) {}
  softmax_step(const softmax_step& like, graph::value_index in, graph::value_index out)
      : plan_(like.plan_), log_(like.log_), in_(in), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    if (log_)
      kernels::run_log_softmax(plan_, values[in_], values[out_]);
    else
      kernels::run_softmax(plan_, values[in_], values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  bool log_;
  graph::value_index in_, out_;
};

class spelled_softmax_step final : public kernels::step_kernel, public arena_allocated {
 public:
  spelled_softmax_step(shared_plan<kernels::spelled_rows_plan> plan,
                       kernels::softmax_spelling spelling, graph::value_index in,
                       graph::value_index out)
      : plan_(std::move(plan)), spelling_(spelling), in_(in), out_(out) {}
  spelled_softmax_step(const spelled_softmax_step& like, graph::value_index in,
                       graph::value_index out)
      : spelled_softmax_step(like.plan_, like.spelling_, in, out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_spelled_softmax(*plan_, spelling_, values[in_], values[out_]);
  }

 private:
  shared_plan<kernels::spelled_rows_plan> plan_;  // (over a kilobyte: shared, not copied)
  kernels::softmax_spelling spelling_;
  graph::value_index in_, out_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::softmax_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& out = shapes[s.result];
  if (op.primitives)
    return std::make_unique<detail::spelled_softmax_step>(
        shared_plan(kernels::plan_spelled_rows(
            out.dtype(), extents_of(out), op.axis,
            op.subtract_max ? ops::reduce_kind::max : ops::reduce_kind::sum)),
        kernels::softmax_spelling{op.subtract_max, op.divide}, s.args[0], s.result);
  return std::make_unique<detail::softmax_step>(
      kernels::plan_rows(out.dtype(), extents_of(out), op.axis), op.log, s.args[0], s.result);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::softmax_op& op, const step_copy_request& request) {
  const graph::program_step& s = request.step;
  const kernels::step_kernel& like = request.like;
  if (op.primitives)
    return std::make_unique<detail::spelled_softmax_step>(
        static_cast<const detail::spelled_softmax_step&>(like), s.args[0], s.result);
  return std::make_unique<detail::softmax_step>(static_cast<const detail::softmax_step&>(like),
                                                s.args[0], s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
