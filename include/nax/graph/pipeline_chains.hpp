#pragma once
// The last analysis of level 1: chains of steps that can run tile by tile along one axis (seed
// 003, "Pipelined Execution Design"). A tile is a block of consecutive positions of that axis; a
// step can run on a tile of its operands when the axis is the first of every operand and result
// that has it (a tile is then a contiguous block of rows), and the step never mixes positions
// along it: no reduction over it, no softmax or layer_norm along it, no slice or concat along
// it, no transpose that moves it, no contraction over it, nothing that generates positions
// (iota, random) and no reshape. Chains are runs of consecutive steps that can each be tiled
// along the same axis of the same extent (a step need not read the chain: independent steps
// run tile by tile too); level 2 chooses per binding whether and how finely to tile them
// (runtime/pipeline.hpp).

#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>

namespace nax::graph {

/// Whether step s of p can run on tiles along `axis` (see the file comment).
NAX_RUNTIME_INLINE bool tileable(const program& p, const program_step& s, axis_name axis);

/// The chains of p's steps that can be tiled, each of two steps or more.
NAX_RUNTIME_INLINE std::vector<pipeline_chain> find_pipeline_chains(const program& p);

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <nax/graph/external_kernel.hpp>

namespace nax::graph {
namespace detail {

// Where `axis` is among the axes of shape s: 0, another position, or absent.
enum class axis_place { first, elsewhere, absent };
inline axis_place place_of(const nax::shape& s, axis_name axis) {
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (s[i].has_name() && s[i].name() == axis)
      return i == 0 ? axis_place::first : axis_place::elsewhere;
  return axis_place::absent;
}

// Whether the op itself keeps positions along its operands' axis 0 apart (the operands' and
// results' places are checked by the caller).
inline bool keeps_axis_0_apart(const program_step& s, bool lhs_tiled, bool rhs_tiled) {
  switch (s.kind()) {
    case op_kind::elementwise:
    case op_kind::fused_elementwise:
    case op_kind::broadcast:
    case op_kind::transpose:
    case op_kind::reduce:
    case op_kind::fused_reduce:
    case op_kind::arg_reduce: return true;  // the result having the axis first says the rest
    case op_kind::softmax: return s.as<softmax_op>().axis != 0;
    case op_kind::layer_norm: return s.as<layer_norm_op>().axis != 0;
    case op_kind::slice: return s.as<slice_op>().axis != 0;
    case op_kind::concat: return s.as<concat_op>().axis != 0;
    case op_kind::external: return s.as<external_op>().kernel->elementwise();
    case op_kind::dot_general:
    case op_kind::fused_dense: {
      const auto* fused = s.op.get_if<fused_dense_op>();
      const dot_general_op& d = fused ? fused->dot : s.as<dot_general_op>();
      for (const axis_pair_index& c : d.contract)
        if ((lhs_tiled && c.lhs == 0) || (rhs_tiled && c.rhs == 0)) return false;
      if (lhs_tiled && rhs_tiled)  // both tiled: the axis must be a batch pair
        for (const axis_pair_index& b : d.batch)
          if (b.lhs == 0 && b.rhs == 0) return true;
      return !(lhs_tiled && rhs_tiled);
    }
    case op_kind::parameter:
    case op_kind::constant:
    case op_kind::extra_result:
    case op_kind::reshape:
    case op_kind::iota:
    case op_kind::random: return false;
  }
  return false;
}

}  // namespace detail

NAX_RUNTIME_INLINE bool tileable(const program& p, const program_step& s, axis_name axis) {
  using detail::axis_place;
  using detail::place_of;
  if (place_of(p.values[s.result].shape, axis) != axis_place::first) return false;
  for (value_index e : s.extra_results)
    if (place_of(p.values[e].shape, axis) != axis_place::first) return false;
  const dim& extent = p.values[s.result].shape[0];
  bool tiled[2] = {false, false};
  for (std::size_t i = 0; i < s.args.size(); ++i) {
    const nax::shape& a = p.values[s.args[i]].shape;
    switch (place_of(a, axis)) {
      case axis_place::elsewhere: return false;
      case axis_place::absent: break;
      case axis_place::first:
        if (!(a[0] == extent)) return false;
        if (i < 2) tiled[i] = true;
        break;
    }
  }
  return detail::keeps_axis_0_apart(s, tiled[0], tiled[1]);
}

NAX_RUNTIME_INLINE std::vector<pipeline_chain> find_pipeline_chains(const program& p) {
  std::vector<pipeline_chain> chains;
  pipeline_chain chain;
  const dim* along = nullptr;  // the tile axis as the chain's first result has it
  for (std::uint32_t k = 0; k < p.steps.size(); ++k) {
    const program_step& s = p.steps[k];
    const nax::shape& r = p.values[s.result].shape;
    // A step joins if it can be tiled along the chain's axis, with the chain's extent (a step
    // reading a value of the chain has it; one that does not might have another).
    if (!chain.steps.empty() && r.rank() > 0 && r[0] == *along && tileable(p, s, chain.axis)) {
      chain.steps.push_back(k);
      continue;
    }
    if (chain.steps.size() >= 2) chains.push_back(chain);
    chain.steps.clear();
    if (r.rank() == 0 || !r[0].has_name() || !tileable(p, s, r[0].name())) continue;
    chain.axis = r[0].name();
    along = &r[0];
    chain.steps.push_back(k);
  }
  if (chain.steps.size() >= 2) chains.push_back(chain);
  return chains;
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
