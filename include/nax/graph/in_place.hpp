#pragma once
// Which results of a program may be written in the buffer of one of its inputs: a
// dynamic_update_slice of an input that no other step reads (a KV cache updated at one position).
// Given the input's own tensor as that output, the step finds the two buffers one and writes the
// update alone (runtime/steps/dynamic_slice.hpp) instead of copying the whole operand first.

#include <cstdint>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::graph {

/// For each result k of p, the input whose buffer it may be written in, or no_value: result k is
/// a dynamic_update_slice of that input, which no other step reads, which is not itself a result,
/// and whose step does not run tile by tile (a pipeline chain's).
NAX_RUNTIME_INLINE std::vector<value_index> in_place_inputs(const program& p);

}  // namespace nax::NAX_ISA::graph

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>

namespace nax::NAX_ISA::graph {

NAX_RUNTIME_INLINE std::vector<value_index> in_place_inputs(const program& p) {
  std::vector<value_index> from(p.outputs.size(), no_value);
  std::vector<std::uint32_t> readers(p.values.size(), 0);
  for (const program_step& s : p.steps)
    for (value_index a : s.args) ++readers[a];
  std::vector<char> tiled(p.steps.size(), 0);
  for (const pipeline_chain& c : p.pipelines)
    for (std::uint32_t k : c.steps) tiled[k] = 1;
  for (std::uint32_t k = 0; k < p.steps.size(); ++k) {
    const program_step& s = p.steps[k];
    if (s.kind() != op_kind::dynamic_update_slice || tiled[k]) continue;
    const program_value& out = p.values[s.result];
    const value_index in = s.args[0];
    const program_value& operand = p.values[in];
    if (out.role != value_role::output || operand.role != value_role::input) continue;
    if (p.outputs[out.index] != s.result || readers[in] != 1) continue;
    if (std::find(p.outputs.begin(), p.outputs.end(), in) != p.outputs.end()) continue;
    from[out.index] = operand.index;
  }
  return from;
}

}  // namespace nax::NAX_ISA::graph
#endif  // NAX_RUNTIME_DEFINITIONS
