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
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::graph {

/// Whether step s of p can run on tiles along `axis` (see the file comment).
NAX_RUNTIME_INLINE bool tileable(const program& p, const program_step& s, axis_name axis);

/// The chains of p's steps that can be tiled, each of two steps or more.
NAX_RUNTIME_INLINE std::vector<pipeline_chain> find_pipeline_chains(const program& p);

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <span>
#include <type_traits>

#include <nax/core/broadcast.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/external_kernel.hpp>

namespace nax::NAX_ISA::graph {
namespace detail {

// Where `axis` is among the axes of shape s: 0, another position, or absent.
enum class axis_place { first, elsewhere, absent };
inline axis_place place_of(const nax::shape& s, axis_name axis) {
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (s[i].has_name() && s[i].name() == axis)
      return i == 0 ? axis_place::first : axis_place::elsewhere;
  return axis_place::absent;
}

// Whether axis i of operand shape `a`, which lands on the result's axis 0, is the operand's
// named tile axis at position 0: an unnamed axis can land there too (by position, in a batch
// pair or a concat) and adopt the result's name, and a tile of the result would then read the
// whole operand. A static 1 broadcast along the tile axis (`broadcasts`) reads one row anyway.
inline bool lands_as_tile_axis(const nax::shape& a, std::size_t i, axis_name axis,
                               bool broadcasts) {
  if (broadcasts && a[i].is_static() && a[i].extent() == 1) return true;
  return i == 0 && a[0].has_name() && a[0].name() == axis;
}

// The same for every axis of `a` that lands on the result's axis 0 by the broadcast rule
// (core/broadcast.hpp), or by `map` if given (a broadcast op's).
inline bool broadcast_lands_as_tile_axis(const nax::shape& a, const nax::shape& result,
                                         axis_name axis, const axis_list* map = nullptr) {
  nax::detail::small_vector<std::size_t, 6> to;
  to.resize(a.rank());
  if (map) {
    for (std::size_t i = 0; i < a.rank(); ++i) to[i] = (*map)[i];
  } else {
    try {
      broadcast_axis_map(a, result, std::span(to.data(), to.size()));
    } catch (const shape_error&) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.rank(); ++i)
    if (to[i] == 0 && !lands_as_tile_axis(a, i, axis, true)) return false;
  return true;
}

// Whether dot_general d gets its result's axis 0 from the operands' tile axes, and only there
// reads an operand's tile axis: from the first batch pair (both operands tiled), else from
// lhs's first free axis (rhs not tiled), else from rhs's (lhs not tiled). (A tiled operand
// whose tile axis is contracted or paired elsewhere fails: a tile would sum over part of it.)
inline bool dot_lands_as_tile_axis(const dot_general_op& d, const nax::shape& lhs,
                                   const nax::shape& rhs, axis_name axis) {
  if (!d.batch.empty())
    return lands_as_tile_axis(lhs, d.batch[0].lhs, axis, false) &&
           lands_as_tile_axis(rhs, d.batch[0].rhs, axis, false);
  const bool lhs_tiled = place_of(lhs, axis) == axis_place::first,
             rhs_tiled = place_of(rhs, axis) == axis_place::first;
  auto first_free = [&](const nax::shape& x, bool is_lhs) -> std::size_t {
    for (std::size_t i = 0; i < x.rank(); ++i) {
      bool paired = false;
      for (const axis_pair_index& c : d.contract) paired = paired || (is_lhs ? c.lhs : c.rhs) == i;
      if (!paired) return i;
    }
    return x.rank();
  };
  if (const std::size_t f = first_free(lhs, true); f < lhs.rank())
    return !rhs_tiled && lands_as_tile_axis(lhs, f, axis, false);
  const std::size_t f = first_free(rhs, false);
  return !lhs_tiled && f < rhs.rank() && lands_as_tile_axis(rhs, f, axis, false);
}

inline bool all_args_named(const program& p, const program_step& s) {
  for (value_index a : s.args)
    if (!all_axes_named(p.values[a].shape)) return false;
  return true;
}

// A step whose op decides by its operands (tiling_rule::by_operands), asked once the places of
// the tile axis in its operands and results are checked.
struct tile_query {
  const program& p;
  const program_step& s;
  axis_name axis;

  const nax::shape& operand(std::size_t i) const { return p.values[s.args[i]].shape; }
  const nax::shape& result() const { return p.values[s.result].shape; }
  // Every operand, broadcast to the result, has the tile axis land on the result's first.
  bool operands_broadcast() const {
    for (std::size_t i = 0; i < s.args.size(); ++i)
      if (!broadcast_lands_as_tile_axis(operand(i), result(), axis)) return false;
    return true;
  }
};

inline bool tiles_along(const elementwise_op&, const tile_query& q) {
  return q.operands_broadcast();
}
inline bool tiles_along(const concat_op& op, const tile_query& q) {
  return op.axis != 0 && q.operands_broadcast();
}
inline bool tiles_along(const broadcast_op& op, const tile_query& q) {
  return broadcast_lands_as_tile_axis(q.operand(0), q.result(), q.axis, &op.axis_map);
}
// A group's operands broadcast inside it (by name when every axis is named): with every axis
// named, the places checked before say where the tile axis lands.
inline bool tiles_along(const fused_elementwise_op&, const tile_query& q) {
  return all_args_named(q.p, q.s);
}
inline bool tiles_along(const fused_reduce_op&, const tile_query& q) {
  return all_args_named(q.p, q.s);
}
inline bool tiles_along(const external_op& op, const tile_query& q) {
  return op.kernel->elementwise() && all_args_named(q.p, q.s);
}
inline bool tiles_along(const dot_general_op& op, const tile_query& q) {
  return dot_lands_as_tile_axis(op, q.operand(0), q.operand(1), q.axis);
}
inline bool tiles_along(const fused_dense_op& op, const tile_query& q) {
  return tiles_along(op.dot, q);
}

}  // namespace detail

NAX_RUNTIME_INLINE bool tileable(const program& p, const program_step& s, axis_name axis) {
  using detail::axis_place;
  using detail::place_of;
  const nax::shape& r = p.values[s.result].shape;
  if (place_of(r, axis) != axis_place::first) return false;
  for (value_index e : s.extra_results) {
    const nax::shape& x = p.values[e].shape;
    if (place_of(x, axis) != axis_place::first || !(x[0] == r[0])) return false;
  }
  // An operand with the tile axis has it first, with the result's extent.
  for (value_index v : s.args) {
    const nax::shape& a = p.values[v].shape;
    const axis_place at = place_of(a, axis);
    if (at == axis_place::elsewhere || (at == axis_place::first && !(a[0] == r[0]))) return false;
  }
  // The op keeps positions along the axis apart, and the operand axes that land on the
  // result's axis 0 are the operands' tile axes: by the op's record (graph/op_record.hpp). An
  // error here naming an op struct means its record says tiling_rule::by_operands and there is
  // no tiles_along for it above (or not_axis_0, and it has no `axis`).
  return s.op.visit([&](const auto& op) {
    constexpr tiling_rule rule = std::remove_cvref_t<decltype(op)>::record.tiling;
    if constexpr (rule == tiling_rule::never)
      return false;
    else if constexpr (rule == tiling_rule::keeps_axes)
      return true;
    else if constexpr (rule == tiling_rule::not_axis_0)
      return op.axis != 0;
    else
      return detail::tiles_along(op, detail::tile_query{p, s, axis});
  });
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
