#pragma once
// The elementwise program of a fused step's decomposition (the ops of a fused_elementwise node,
// or those before a fused_reduce node's reduction): one instruction per elementwise op, over
// the step's operands read with the strides the broadcast rule gives them over the group's
// iteration shape. A broadcast op in the group is no instruction: its operand is read through
// the op's axis map, as one more input of the program.

#include <cstddef>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/elementwise.hpp>

namespace nax::NAX_ISA::runtime {

/// The program of the first `count` ops of fused step s's decomposition over the iteration
/// shape `over`. Its inputs are the step's arguments, then one per broadcast op; `bound`
/// receives the value each input reads, `strides` the strides it is read with (rank of `over`
/// each), `of` the program operand of each op.
NAX_RUNTIME_INLINE kernels::elementwise_program group_program(
    const graph::program_step& s, std::span<const nax::shape> shapes, const nax::shape& over,
    std::size_t count, std::vector<std::ptrdiff_t>& strides, std::vector<graph::value_index>& bound,
    std::vector<kernels::elementwise_operand>& of);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE kernels::elementwise_program group_program(
    const graph::program_step& s, std::span<const nax::shape> shapes, const nax::shape& over,
    std::size_t count, std::vector<std::ptrdiff_t>& strides, std::vector<graph::value_index>& bound,
    std::vector<kernels::elementwise_operand>& of) {
  const graph::decomposition& d = *s.fused;
  std::vector<bool> read(s.args.size(), false);  // by an elementwise op (not a broadcast)
  for (std::size_t j = 0; j < count; ++j)
    if (!d.ops[j].is<graph::broadcast_op>())
      for (std::uint32_t in : d.ops[j].inputs)
        if (d.is_arg(in)) read[in] = true;
  kernels::elementwise_program program;
  for (std::size_t i = 0; i < s.args.size(); ++i) {
    const nax::shape& in = shapes[s.args[i]];
    program.inputs.push_back(in.dtype());
    bound.push_back(s.args[i]);
    // Every op of the group has the iteration shape's axes, so each operand is read as the
    // builder broadcast it to its op.
    if (read[i]) {
      const strides_vector st = broadcast_operand_strides(s, in, i, over);
      strides.insert(strides.end(), st.begin(), st.end());
    } else {  // read only through broadcast ops: unused as itself
      strides.insert(strides.end(), over.rank(), 0);
    }
  }
  of.clear();
  for (std::size_t j = 0; j < count; ++j) {
    const graph::node& op = d.ops[j];
    auto operand = [&](std::uint32_t in) {
      return d.is_arg(in) ? kernels::elementwise_operand::input(in) : of[in - d.num_args];
    };
    if (const auto* b = op.op.get_if<graph::broadcast_op>()) {
      // Its target has the iteration shape's axes.
      const std::uint32_t a = op.inputs[0];
      const nax::shape& in = shapes[s.args[a]];
      extents_vector axis_map;
      for (std::uint32_t t : b->axis_map) axis_map.push_back(t);
      const strides_vector st = operand_strides(s, in, a, over, axis_map);
      strides.insert(strides.end(), st.begin(), st.end());
      of.push_back(
          kernels::elementwise_operand::input(static_cast<std::uint32_t>(program.inputs.size())));
      program.inputs.push_back(in.dtype());
      bound.push_back(s.args[a]);
      continue;
    }
    kernels::elementwise_instruction ins;
    ins.op = op.as<graph::elementwise_op>().op;
    for (std::size_t a = 0; a < op.inputs.size(); ++a) ins.args[a] = operand(op.inputs[a]);
    of.push_back(kernels::elementwise_operand::result(
        static_cast<std::uint32_t>(program.instructions.size())));
    program.instructions.push_back(ins);
  }
  return program;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
