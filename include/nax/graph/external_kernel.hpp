#pragma once
// A graph node's kernel supplied from outside the graph layer: nax::jit's fused typed
// expressions, whose loops are instantiated at C++ compile time. The graph knows the node's
// operands and result shape only; the object makes the step kernel for each specialization.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/kernels/step_kernel.hpp>

namespace nax::NAX_ISA::graph {

class external_kernel {
 public:
  virtual ~external_kernel() = default;
  /// What the node computes, for to_dot and error messages ("fused: add, gelu").
  virtual std::string label() const = 0;
  /// Whether the result's element at each position depends only on the operands' elements at
  /// that position (operands broadcast by name): then the kernel made for a block of rows
  /// computes those rows, and the step can be pipelined (graph/pipeline_chains.hpp).
  virtual bool elementwise() const { return false; }
  /// The step's kernel for concrete shapes: operand i is value args[i] of shape shapes[args[i]],
  /// the result is value `result`. nax::shape_error if the shapes do not fit the kernel. The
  /// step kernel must not refer to this object (a specialization may outlive it).
  virtual std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                                     std::uint32_t result,
                                                     std::span<const nax::shape> shapes) const = 0;
};

}  // namespace nax::graph
