#pragma once
// What a fused node replaces: the builder's ops it stands for, as a small graph of their own over
// the fused node's operands. Fused ops keep their decomposition so that autodiff can run through
// it (as XLA's fusions keep their fused computation) and so that Graphviz can show it.
// Self-contained: it needs neither the builder nor the program to be read.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/node.hpp>

namespace nax::NAX_ISA::graph {

/// Which pass made a fused node (compile_options::fuse names the same passes).
enum class fusion_kind : std::uint8_t { elementwise, dense, softmax, layer_norm, reduce };

inline std::string_view name(fusion_kind k) noexcept {
  switch (k) {
    case fusion_kind::elementwise: return "fused_elementwise";
    case fusion_kind::dense: return "fused_dense";
    case fusion_kind::softmax: return "fused_softmax";
    case fusion_kind::layer_norm: return "fused_layer_norm";
    case fusion_kind::reduce: return "fused_reduce";
  }
  return "?";
}

/// A fused node's decomposition: ops in topological order over the node's `num_args` operands.
/// An op's input i < num_args is operand i; i >= num_args is the value of op i - num_args (an
/// earlier one). Each op's shape is symbolic, as the builder inferred it, and its origin is the
/// builder node. results[0] is the op whose value is the fused node's; results[k] the op of its
/// extra result k (extra_result_op::index k).
struct decomposition {
  fusion_kind kind = fusion_kind::elementwise;
  std::size_t num_args = 0;
  std::vector<node> ops;
  std::vector<std::uint32_t> results;

  /// Whether an op's input is one of the fused node's operands (else op input - num_args).
  [[nodiscard]] bool is_arg(std::uint32_t input) const noexcept { return input < num_args; }
};

}  // namespace nax::graph
