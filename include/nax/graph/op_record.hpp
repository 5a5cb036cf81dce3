#pragma once
// What the rest of nax reads of a graph op besides its attributes: every op struct of
// graph/op.hpp states its record (`static constexpr op_record record`), and the passes, autodiff
// and level 2 read it instead of keeping lists of op kinds. The rules an op brings as code are
// overloads on its struct, found when `attributes::visit` hands a node's op to a generic lambda:
//
//   vjp(const X_op&, const vjp_context&)               graph/vjp/      (gradient_rule::vjp)
//   tiles_along(const X_op&, const tile_query&)         graph/pipeline_chains.hpp
//                                                       (tiling_rule::by_operands)
//   make_step(const X_op&, const step_request&)         runtime/steps/  (kernel_rule::made)
//   copy_step(const X_op&, const step_copy_request&)    runtime/steps/  (kernel_rule::shared)
//
// An op whose record names a rule it has no overload for does not compile; the error names the
// op's struct.

#include <cstdint>
#include <string_view>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::graph {

/// How graph::grad treats a node of the op (graph/grad.hpp).
enum class gradient_rule : std::uint8_t {
  vjp,      // its VJP: vjp(const X_op&, const vjp_context&) in graph/vjp/
  none,     // no operand carries a gradient (or it has none): nothing to pass on
  refused,  // grad is an error naming the node (made by the fusion passes; an external node
            // whose kernel says nothing of its derivative)
};

/// How level 2 runs a step of the op (runtime/step_factory.hpp).
enum class kernel_rule : std::uint8_t {
  made,    // a kernel per step: make_step(const X_op&, const step_request&) in runtime/steps/
  shared,  // as made, and steps of equal attributes and shapes copy one kernel:
           // copy_step(const X_op&, const step_copy_request&) too
  none,    // a value of the program, not a step (parameter, constant, a fused step's extra result)
};

/// Whether a pipeline chain may hold a step of the op, run tile by tile along the first axis of
/// its result (graph/pipeline_chains.hpp checks the operands' places of that axis first).
enum class tiling_rule : std::uint8_t {
  never,        // it moves, generates or indexes along every axis
  keeps_axes,   // operand 0's axes carry over to the result in order
  not_axis_0,   // it works along its attribute `axis`, which must not be the tile axis
  by_operands,  // decided per step: tiles_along(const X_op&, const tile_query&)
};

/// An op's record (see the file comment).
struct op_record {
  std::string_view name;  // in messages and Graphviz, and its row in docs/ops.md
  gradient_rule gradient;
  kernel_rule kernel;
  tiling_rule tiling;
  /// Its result may be a view of operand 0's buffer instead of a copy (level 2 decides per
  /// step: runtime/specialization_recipe.hpp).
  bool may_alias;

  // (A constructor rather than an aggregate: every rule is stated, may_alias alone defaults.)
  constexpr op_record(std::string_view name, gradient_rule gradient, kernel_rule kernel,
                      tiling_rule tiling, bool may_alias = false) noexcept
      : name(name), gradient(gradient), kernel(kernel), tiling(tiling), may_alias(may_alias) {}
};

}  // namespace nax::NAX_ISA::graph
