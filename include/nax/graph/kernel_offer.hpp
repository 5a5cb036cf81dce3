#pragma once
// A kernel offered for a value the graph also has as elementwise nodes: nax::jit lowers a typed
// elementwise expression op by op, so that the fusion passes see each op (a bias and activation
// join the GEMM before them, a group joins the reduction after it), and offers the expression's
// own loop, compiled with the C++ program, for the case where fusion leaves those ops a group of
// their own. The pass use_offered_kernels (graph/passes/) takes the offer then.

#include <memory>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/graph/node.hpp>

namespace nax::NAX_ISA::graph {

struct kernel_offer {
  /// The node whose value the kernel computes.
  node_id root = 0;
  std::shared_ptr<const external_kernel> kernel;
  /// The nodes the kernel reads, in the order of its operands.
  std::vector<node_id> operands;
  /// The nodes made for the value, root among them: ids [interior_begin, root].
  node_id interior_begin = 0;
  /// The kernel's result: root's shape with its axes in the order the kernel writes them.
  nax::shape result;
};

}  // namespace nax::graph
