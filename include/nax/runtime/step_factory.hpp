#pragma once
// The kernels of a program's steps for concrete shapes: one factory per kind of step
// (runtime/steps/), chosen by the step's op. Each kernel's run() does no shape arithmetic.

#include <memory>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>

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
#include <nax/core/shape_error.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/runtime/plan_memo.hpp>
#include <nax/runtime/steps/arg_reduce.hpp>
#include <nax/runtime/steps/concat.hpp>
#include <nax/runtime/steps/convert.hpp>
#include <nax/runtime/steps/copy.hpp>
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

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step_kernel(
    const graph::program& p, const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch, plan_memo* memo) {
  using graph::op_kind;
  switch (s.kind()) {
    case op_kind::elementwise: return make_elementwise_step(s, shapes, memo);
    case op_kind::reduce: return make_reduce_step(s, shapes);
    case op_kind::dot_general:
    case op_kind::fused_dense:
      return memo ? make_dot_general_step(s, shapes, scratch, *memo)
                  : make_dot_general_step(s, shapes, scratch);
    case op_kind::transpose:
    case op_kind::reshape:
    case op_kind::broadcast:
    case op_kind::slice: return make_copy_step(s, shapes);
    case op_kind::concat: return make_concat_step(s, shapes);
    case op_kind::dimension_size: return make_dimension_size_step(s, shapes);
    case op_kind::set_dimension_size: return make_set_dimension_size_step(s, shapes);
    case op_kind::dynamic_slice: return make_dynamic_slice_step(s, shapes);
    case op_kind::dynamic_update_slice: return make_dynamic_update_slice_step(s, shapes);
    case op_kind::take: return make_take_step(s, shapes);
    case op_kind::convert: return make_convert_step(s, shapes);
    case op_kind::scatter_add: return make_scatter_add_step(s, shapes);
    case op_kind::iota: return make_iota_step(s, shapes);
    case op_kind::random: return make_random_step(s, shapes);
    case op_kind::arg_reduce: return make_arg_reduce_step(s, shapes);
    case op_kind::softmax: return make_softmax_step(s, shapes);
    case op_kind::layer_norm: return make_layer_norm_step(s, shapes);
    case op_kind::external:
      return s.as<graph::external_op>().kernel->make(
          std::span<const graph::value_index>(s.args.data(), s.args.size()), s.result, shapes);
    case op_kind::fused_elementwise: return make_fused_elementwise_step(s, shapes);
    case op_kind::fused_reduce: return make_fused_reduce_step(p, s, shapes, scratch);
    case op_kind::parameter:
    case op_kind::constant:
    case op_kind::extra_result: break;
  }
  nax::detail::throw_shape_error("nax::executable: no kernel for ", name(s.kind()));
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step_kernel(
    const graph::program_step& s, const kernels::step_kernel& like,
    std::span<const nax::shape> shapes, std::vector<scratch_request>& scratch) {
  using graph::op_kind;
  switch (s.kind()) {
    case op_kind::elementwise: return copy_elementwise_step(like, s);
    case op_kind::dot_general:
    case op_kind::fused_dense: return copy_dot_general_step(like, s, shapes, scratch);
    case op_kind::softmax: return copy_softmax_step(like, s);
    case op_kind::layer_norm: return copy_layer_norm_step(like, s);
    default: break;
  }
  nax::detail::throw_shape_error("nax::executable: no kernel copy for ", name(s.kind()));
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
