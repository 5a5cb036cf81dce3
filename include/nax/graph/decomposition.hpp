#pragma once
// What a fused step of a program replaces: the builder's ops it stands for, as a small graph of
// its own over the step's operands (seed 003: the fused node keeps its decomposed subgraph, so
// autodiff can run through the decomposition, as vjpAlternateOutput does). Self-contained: it
// needs neither the builder nor the program to be read.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/op.hpp>

namespace nax::graph {

/// Which pass made a fused step (the compile_options::fuse toggles name the same kinds).
enum class fusion_kind : std::uint8_t { elementwise, dense, softmax, layer_norm, reduce };

inline std::string_view name(fusion_kind k) {
  switch (k) {
    case fusion_kind::elementwise: return "fused_elementwise";
    case fusion_kind::dense: return "fused_dense";
    case fusion_kind::softmax: return "fused_softmax";
    case fusion_kind::layer_norm: return "fused_layer_norm";
    case fusion_kind::reduce: return "fused_reduce";
  }
  return "?";
}

/// One op of a decomposition, as the builder made it. Operand i < num_args is the fused step's
/// argument i; i >= num_args is the result of op i - num_args (an earlier op).
struct decomposed_op {
  op_kind kind = op_kind::elementwise;
  std::uint8_t code = 0;
  nax::detail::small_vector<std::uint32_t, 3> inputs;
  nax::detail::small_vector<std::int32_t, 6> ints;
  double scalar = 0;
  nax::shape shape;          // symbolic, as the builder inferred it
  std::uint32_t origin = 0;  // the builder node (node_id)
};

/// A fused step's decomposition: ops in topological order over the step's `num_args` arguments;
/// results[0] is the op whose value is the step's result, results[1 + i] the op of its extra
/// result i (program_step::extra_results).
struct decomposition {
  fusion_kind kind = fusion_kind::elementwise;
  std::size_t num_args = 0;
  std::vector<decomposed_op> ops;
  std::vector<std::uint32_t> results;

  /// Whether an operand of an op is one of the step's arguments (else op operand - num_args).
  [[nodiscard]] bool is_arg(std::uint32_t operand) const noexcept { return operand < num_args; }
};

}  // namespace nax::graph
