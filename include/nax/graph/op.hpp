#pragma once
// What a node of the runtime graph computes. Elementwise ops are not redefined here: a node
// names one of the op structs of nax/ops/elementwise.hpp by its index in `elementwise_ops` (shared with
// the runtime kernels), so the graph's kernels run the very bodies the typed evaluator runs.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nax/kernels/elementwise_ops.hpp>
#include <nax/ops/reduce_kind.hpp>
#include <nax/ops/elementwise.hpp>

namespace nax::graph {

/// The elementwise ops a graph node can name, by index (`elementwise_index<ops::tanh>`): the
/// runtime kernels' list (nax/kernels/elementwise_ops.hpp).
using kernels::elementwise_arity;
using kernels::elementwise_index;
using kernels::elementwise_name;
using kernels::elementwise_ops;
using kernels::with_elementwise_op;

/// The kinds of node. Attributes live in node::ints (axis indices) and node::scalar.
enum class op_kind : std::uint8_t {
  parameter,    // an input, by name
  constant,     // a scalar (broadcast wherever it is used)
  elementwise,  // code: index in elementwise_ops
  reduce,       // code: reduce_kind; ints: the reduced axes of the input, ascending
  dot_general,  // ints: count c, then c (lhs, rhs) contracting pairs, then count b, b batch pairs
  transpose,    // ints: the permutation (output axis i is input axis ints[i])
  softmax,      // ints: the axis
  layer_norm,   // ints: the axis; inputs x, gamma, beta; scalar: epsilon
  reshape,      // ints: none (the node's shape is the target; elements keep row-major order)
  broadcast,    // ints: for each input axis i, the output axis it goes to (ints[i])
  slice,        // ints: axis, start, stop, step (stop is never "to the end": it is resolved)
  concat,       // ints: the axis; inputs: the operands in order (two or more)
  external,     // node::kernel computes it (nax::jit's fused expressions); inputs: its operands
  // Made only by the fusion passes (nax/graph/fusion.hpp), never by the builder; each such step
  // keeps the ops it replaces (program_step::fused).
  fused_elementwise,  // a group of elementwise ops run as one elementwise program
  fused_dense,        // dot_general, then optionally add(bias), then a unary activation
  fused_reduce,       // an elementwise group, then a reduction of its result over a run of axes
};

using ops::name;
using ops::reduce_kind;

inline std::string_view name(op_kind k) {
  switch (k) {
    case op_kind::parameter: return "parameter";
    case op_kind::constant: return "constant";
    case op_kind::elementwise: return "elementwise";
    case op_kind::reduce: return "reduce";
    case op_kind::dot_general: return "dot_general";
    case op_kind::transpose: return "transpose";
    case op_kind::softmax: return "softmax";
    case op_kind::layer_norm: return "layer_norm";
    case op_kind::reshape: return "reshape";
    case op_kind::broadcast: return "broadcast";
    case op_kind::slice: return "slice";
    case op_kind::concat: return "concat";
    case op_kind::external: return "external";
    case op_kind::fused_elementwise: return "fused_elementwise";
    case op_kind::fused_dense: return "fused_dense";
    case op_kind::fused_reduce: return "fused_reduce";
  }
  return "?";
}

}  // namespace nax::graph
