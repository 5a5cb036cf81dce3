#pragma once
// An external node (external_kernel.hpp) that says how to differentiate it. Layers above the
// graph (nax::gnn's kernels) derive from it so that their nodes take part in nax::graph::grad and
// nax::value_and_grad: grad asks the kernel for its operands' cotangents, which it builds as
// ordinary nodes of the same builder (often external nodes of its own backward kernels).

#include <optional>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/external_kernel.hpp>

namespace nax::NAX_ISA::graph {

class differentiable_kernel : public external_kernel {
 public:
  /// The cotangent of each of the node's operands args (args.size() entries, each of its
  /// operand's shape; nullopt for an operand without one), built in args' builder from the
  /// node's result y and its cotangent dy (of y's shape).
  virtual std::vector<std::optional<value>> vjp(std::span<const value> args, const value& y,
                                                const value& dy) const = 0;
};

}  // namespace nax::graph
