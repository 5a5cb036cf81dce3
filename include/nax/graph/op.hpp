#pragma once
// What a node of the runtime graph computes: its op and that op's attributes, one struct per
// kind of op. A node holds exactly one of these (graph::attributes, a variant); its kind is which
// one. Elementwise ops are not redefined here: a node names one by its nax::ops::id, so the
// runtime runs the very bodies the typed evaluator runs.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include <nax/core/small_vector.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::graph {

class external_kernel;

/// A list of axis positions of an operand (or of a result).
using axis_list = nax::detail::small_vector<std::uint32_t, 6>;

/// A pair of axes of dot_general's operands: lhs's axis `lhs` with rhs's axis `rhs`.
struct axis_pair_index {
  std::uint32_t lhs = 0, rhs = 0;
  friend bool operator==(const axis_pair_index&, const axis_pair_index&) = default;
};
using axis_pairs = nax::detail::small_vector<axis_pair_index, 4>;

// --- one attribute struct per op -----------------------------------------------------------------

/// An input of the graph, by name; `index` is its position among the parameters.
struct parameter_op {
  std::string name;
  std::uint32_t index = 0;
  friend bool operator==(const parameter_op&, const parameter_op&) = default;
};
/// A scalar, broadcast wherever it is used.
struct constant_op {
  double value = 0;
  friend bool operator==(const constant_op& a, const constant_op& b) noexcept;
};
/// An elementwise op over the node's inputs (broadcast: core/broadcast.hpp).
struct elementwise_op {
  ops::id op = ops::id::add;
  friend bool operator==(const elementwise_op&, const elementwise_op&) = default;
};
/// A reduction of the input over `axes` (ascending); the other axes are kept in order.
struct reduce_op {
  ops::reduce_kind kind = ops::reduce_kind::sum;
  axis_list axes;
  friend bool operator==(const reduce_op&, const reduce_op&) = default;
};
/// The contraction of the inputs over `contract` pairs, `batch` pairs matched (not summed). The
/// result has the batch axes (lhs order of the pairs), then lhs's free axes, then rhs's.
struct dot_general_op {
  axis_pairs contract, batch;
  friend bool operator==(const dot_general_op&, const dot_general_op&) = default;
};
/// The input with its axes reordered: result axis i is input axis perm[i].
struct transpose_op {
  axis_list perm;
  friend bool operator==(const transpose_op&, const transpose_op&) = default;
};
/// Softmax along `axis`.
struct softmax_op {
  std::uint32_t axis = 0;
  friend bool operator==(const softmax_op&, const softmax_op&) = default;
};
/// Layer norm along `axis`: inputs x, then gamma and beta where present (a fused layer norm
/// recognized from primitives may lack them: then 1 and 0).
struct layer_norm_op {
  std::uint32_t axis = 0;
  double epsilon = 1e-5;
  bool has_gamma = true, has_beta = true;
  friend bool operator==(const layer_norm_op& a, const layer_norm_op& b) noexcept;
};
/// The input's elements, in row-major order, in the node's shape.
struct reshape_op {
  friend bool operator==(const reshape_op&, const reshape_op&) = default;
};
/// The input repeated to the node's shape; input axis i goes to result axis axis_map[i].
struct broadcast_op {
  axis_list axis_map;
  friend bool operator==(const broadcast_op&, const broadcast_op&) = default;
};
/// Entries start, start + step, ... below stop of the input along `axis` (stop resolved).
struct slice_op {
  std::uint32_t axis = 0;
  std::int64_t start = 0, stop = 0, step = 1;
  friend bool operator==(const slice_op&, const slice_op&) = default;
};
/// The inputs joined along `axis`, in order.
struct concat_op {
  std::uint32_t axis = 0;
  friend bool operator==(const concat_op&, const concat_op&) = default;
};
/// A node computed by a kernel from outside the graph layer (nax::jit's fused expressions).
/// Nodes with different kernel objects are different.
struct external_op {
  std::shared_ptr<const external_kernel> kernel;
  friend bool operator==(const external_op&, const external_op&) = default;
};

// Made only by the fusion passes (graph/passes/), never by the builder; such a node keeps the
// ops it replaces (node::fused).

/// A group of elementwise ops (and broadcasts read only inside it) run as one program.
struct fused_elementwise_op {
  friend bool operator==(const fused_elementwise_op&, const fused_elementwise_op&) = default;
};
/// dot_general, then optionally + bias (the node's third input), then a unary activation.
struct fused_dense_op {
  dot_general_op dot;
  bool has_bias = false;
  bool has_activation = false;
  ops::id activation = ops::id::relu;
  friend bool operator==(const fused_dense_op&, const fused_dense_op&) = default;
};
/// An elementwise group reduced over a contiguous run of its result's axes (the group's result
/// never reaches memory).
struct fused_reduce_op {
  reduce_op reduce;
  friend bool operator==(const fused_reduce_op&, const fused_reduce_op&) = default;
};
/// Extra result `index` (from 1) of the fused node that is this node's one input: a member of
/// the group whose value is also used outside it.
struct extra_result_op {
  std::uint32_t index = 1;
  friend bool operator==(const extra_result_op&, const extra_result_op&) = default;
};

/// What a node computes. The alternatives are in op_kind's order.
using attributes =
    std::variant<parameter_op, constant_op, elementwise_op, reduce_op, dot_general_op, transpose_op,
                 softmax_op, layer_norm_op, reshape_op, broadcast_op, slice_op, concat_op,
                 external_op, fused_elementwise_op, fused_dense_op, fused_reduce_op,
                 extra_result_op>;

/// The kinds of node: attributes' alternatives, in order.
enum class op_kind : std::uint8_t {
  parameter,
  constant,
  elementwise,
  reduce,
  dot_general,
  transpose,
  softmax,
  layer_norm,
  reshape,
  broadcast,
  slice,
  concat,
  external,
  fused_elementwise,
  fused_dense,
  fused_reduce,
  extra_result,
};

constexpr op_kind kind_of(const attributes& a) noexcept { return static_cast<op_kind>(a.index()); }

inline std::string_view name(op_kind k) noexcept {
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
    case op_kind::extra_result: return "extra_result";
  }
  return "?";
}

/// What an op is called in messages and in Graphviz: the elementwise op's own name ("tanh"),
/// "reduce_sum", or the kind's name.
inline std::string op_label(const attributes& a) {
  if (const auto* e = std::get_if<elementwise_op>(&a)) return std::string(ops::name(e->op));
  if (const auto* r = std::get_if<reduce_op>(&a))
    return "reduce_" + std::string(ops::name(r->kind));
  return std::string(name(kind_of(a)));
}

// Compared by bits: the CSE pass must not merge constants 0.0 and -0.0, and must merge NaNs.
inline bool operator==(const constant_op& a, const constant_op& b) noexcept {
  return std::bit_cast<std::uint64_t>(a.value) == std::bit_cast<std::uint64_t>(b.value);
}
inline bool operator==(const layer_norm_op& a, const layer_norm_op& b) noexcept {
  return a.axis == b.axis && a.has_gamma == b.has_gamma && a.has_beta == b.has_beta &&
         std::bit_cast<std::uint64_t>(a.epsilon) == std::bit_cast<std::uint64_t>(b.epsilon);
}

}  // namespace nax::graph
