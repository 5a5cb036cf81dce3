#pragma once
// The kernels of a program's steps for concrete shapes: one factory per op (runtime/steps/), an
// overload on the op's struct chosen by the step's op (runtime/step_request.hpp). Each kernel's
// run() does no shape arithmetic.

#include <memory>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

class plan_memo;

/// The kernel of step s of p, for the concrete `shapes` of p's values; scratch the step needs is
/// appended to `scratch`. `memo`, if given, lends plans made for earlier steps.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step_kernel(
    const graph::program& p, const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch, plan_memo* memo = nullptr);

/// The kernel of step s copied from `like`, the kernel of an earlier step of the same kind and
/// attributes whose result and operands have the shapes of s's (for the kinds
/// specialization_recipe.hpp's kernel_is_copied names; scratch appended as make_step_kernel's).
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step_kernel(
    const graph::program_step& s, const kernels::step_kernel& like,
    std::span<const nax::shape> shapes, std::vector<scratch_request>& scratch);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <type_traits>

#include <nax/core/shape_error.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/runtime/plan_memo.hpp>
#include <nax/runtime/steps/arg_reduce.hpp>
#include <nax/runtime/steps/concat.hpp>
#include <nax/runtime/steps/convert.hpp>
#include <nax/runtime/steps/copy.hpp>
#include <nax/runtime/steps/cumsum.hpp>
#include <nax/runtime/steps/dot_general.hpp>
#include <nax/runtime/steps/dynamic_slice.hpp>
#include <nax/runtime/steps/elementwise.hpp>
#include <nax/runtime/steps/fused_elementwise.hpp>
#include <nax/runtime/steps/fused_reduce.hpp>
#include <nax/runtime/steps/generate.hpp>
#include <nax/runtime/steps/layer_norm.hpp>
#include <nax/runtime/steps/reduce.hpp>
#include <nax/runtime/steps/softmax.hpp>
#include <nax/runtime/steps/take.hpp>

namespace nax::NAX_ISA::runtime {

// An external node's kernel makes itself (graph/external_kernel.hpp).
inline std::unique_ptr<kernels::step_kernel> make_step(const graph::external_op& op,
                                                       const step_request& r) {
  return op.kernel->make(
      std::span<const graph::value_index>(r.step.args.data(), r.step.args.size()), r.step.result,
      r.shapes);
}

// By the step's op record (graph/op_record.hpp). An error here naming an op struct means its
// record says kernel_rule::made (or shared) and runtime/steps/ has no make_step (or copy_step)
// for it.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step_kernel(
    const graph::program& p, const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch, plan_memo* memo) {
  // The kinds without a kernel are refused before the switch, which then has only the others'
  // cases (a smaller function, inlined where it is called).
  if (graph::record_of(s.kind()).kernel == graph::kernel_rule::none)
    nax::detail::throw_shape_error("nax::executable: no kernel for ", graph::name(s.kind()));
  const step_request r{p, s, shapes, scratch, memo};
  return s.op.visit([&](const auto& op) -> std::unique_ptr<kernels::step_kernel> {
    using op_struct = std::remove_cvref_t<decltype(op)>;
    if constexpr (op_struct::record.kernel == graph::kernel_rule::none)
      __builtin_unreachable();
    else
      return make_step(op, r);
  });
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step_kernel(
    const graph::program_step& s, const kernels::step_kernel& like,
    std::span<const nax::shape> shapes, std::vector<scratch_request>& scratch) {
  if (graph::record_of(s.kind()).kernel != graph::kernel_rule::shared)
    nax::detail::throw_shape_error("nax::executable: no kernel copy for ", graph::name(s.kind()));
  const step_copy_request r{s, like, shapes, scratch};
  return s.op.visit([&](const auto& op) -> std::unique_ptr<kernels::step_kernel> {
    using op_struct = std::remove_cvref_t<decltype(op)>;
    if constexpr (op_struct::record.kernel != graph::kernel_rule::shared)
      __builtin_unreachable();
    else
      return copy_step(op, r);
  });
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
