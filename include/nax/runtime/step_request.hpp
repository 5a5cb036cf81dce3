#pragma once
// What a step's factory is given (runtime/step_factory.hpp): the step, its program and the
// concrete shapes of the program's values. A factory is an overload on the step's op struct,
// `make_step(const graph::X_op&, const step_request&)` in runtime/steps/ (graph/op_record.hpp);
// an op whose steps share kernels also has `copy_step(const graph::X_op&, const
// step_copy_request&)`.

#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>

namespace nax::NAX_ISA::runtime {

class plan_memo;

/// The step to make a kernel for.
struct step_request {
  const graph::program& program;
  const graph::program_step& step;
  std::span<const nax::shape> shapes;     // per value of the program
  std::vector<scratch_request>& scratch;  // the scratch the kernel needs is appended here
  plan_memo* memo = nullptr;              // if given, lends plans made for earlier steps
};

/// The step whose kernel is copied from `like`, the kernel of an earlier step of the same op and
/// attributes whose operands and result have the shapes of this one's.
struct step_copy_request {
  const graph::program_step& step;
  const kernels::step_kernel& like;
  std::span<const nax::shape> shapes;
  std::vector<scratch_request>& scratch;
};

}  // namespace nax::NAX_ISA::runtime
