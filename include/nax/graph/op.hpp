#pragma once
// What a node of the runtime graph computes: its op and that op's attributes, one struct per
// kind of op, each with its record (graph/op_record.hpp: its name and the rules autodiff, the
// pipeline chains and level 2 read). A node holds exactly one of these (graph::attributes, a
// tagged union); its kind is which one. Elementwise ops are not redefined here: a node names one
// by its nax::ops::id, so the runtime runs the very bodies the typed evaluator runs.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/op_record.hpp>
#include <nax/ops/cumsum.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/random.hpp>
#include <nax/ops/reduce_kind.hpp>

namespace nax::NAX_ISA::graph {

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
  static constexpr op_record record{"parameter", gradient_rule::none, kernel_rule::none,
                                    tiling_rule::never};
  friend bool operator==(const parameter_op&, const parameter_op&) = default;
};
/// A scalar, broadcast wherever it is used.
struct constant_op {
  double value = 0;
  static constexpr op_record record{"constant", gradient_rule::none, kernel_rule::none,
                                    tiling_rule::never};
  friend bool operator==(const constant_op& a, const constant_op& b) noexcept;
};
/// An elementwise op over the node's inputs (broadcast: core/broadcast.hpp).
struct elementwise_op {
  ops::id op = ops::id::add;
  static constexpr op_record record{"elementwise", gradient_rule::vjp, kernel_rule::shared,
                                    tiling_rule::by_operands};
  friend bool operator==(const elementwise_op&, const elementwise_op&) = default;
};
/// A reduction of the input over `axes` (ascending); the other axes are kept in order.
struct reduce_op {
  ops::reduce_kind kind = ops::reduce_kind::sum;
  axis_list axes;
  static constexpr op_record record{"reduce", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::keeps_axes};
  friend bool operator==(const reduce_op&, const reduce_op&) = default;
};
/// The contraction of the inputs over `contract` pairs, `batch` pairs matched (not summed). The
/// result has the batch axes (lhs order of the pairs), then lhs's free axes, then rhs's.
struct dot_general_op {
  axis_pairs contract, batch;
  static constexpr op_record record{"dot_general", gradient_rule::vjp, kernel_rule::shared,
                                    tiling_rule::by_operands};
  friend bool operator==(const dot_general_op&, const dot_general_op&) = default;
};
/// The input with its axes reordered: result axis i is input axis perm[i].
struct transpose_op {
  axis_list perm;
  static constexpr op_record record{"transpose", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::keeps_axes};
  friend bool operator==(const transpose_op&, const transpose_op&) = default;
};
/// Softmax along `axis`, or its logarithm (`log`: log_softmax, (x - max) - log(sum(exp(x -
/// max))), from the same row kernel as the typed nax::log_softmax). One the softmax fusion pass
/// recognized from primitives (`primitives`) keeps how they spelled it, and its kernel gives
/// their bits (kernels/spelled_rows.hpp): the max subtracted or not, the sum divided into each
/// exp or its reciprocal multiplied.
struct softmax_op {
  std::uint32_t axis = 0;
  bool log = false;
  bool primitives = false;
  bool subtract_max = true, divide = true;
  static constexpr op_record record{"softmax", gradient_rule::vjp, kernel_rule::shared,
                                    tiling_rule::not_axis_0};
  friend bool operator==(const softmax_op&, const softmax_op&) = default;
};
/// Layer norm along `axis`: inputs x, then gamma and beta where present (a builder's layer_norm
/// has both; one the fusion pass recognized from primitives may lack them). One recognized from
/// primitives (`primitives`) keeps how they spelled it, and its kernel gives their bits
/// (kernels/spelled_rows.hpp): the square as pow(d, 2) or d * d, and d / sqrt(var + eps) or
/// d * rsqrt(var + eps).
struct layer_norm_op {
  std::uint32_t axis = 0;
  double epsilon = 1e-5;
  bool has_gamma = true, has_beta = true;
  bool primitives = false;
  bool square_by_pow = false, divide_by_sqrt = false;
  // false: RMSNorm, x * rsqrt(mean(x * x) + eps), no mean subtracted (recognized from primitives).
  bool centered = true;
  static constexpr op_record record{"layer_norm", gradient_rule::vjp, kernel_rule::shared,
                                    tiling_rule::not_axis_0};
  friend bool operator==(const layer_norm_op& a, const layer_norm_op& b) noexcept;
};
/// The input's elements, in row-major order, in the node's shape.
struct reshape_op {
  static constexpr op_record record{"reshape", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never, true};
  friend bool operator==(const reshape_op&, const reshape_op&) = default;
};
/// The input repeated to the node's shape; input axis i goes to result axis axis_map[i].
struct broadcast_op {
  axis_list axis_map;
  static constexpr op_record record{"broadcast", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::by_operands};
  friend bool operator==(const broadcast_op&, const broadcast_op&) = default;
};
/// Entries start, start + step, ... below stop of the input along `axis` (stop resolved).
struct slice_op {
  std::uint32_t axis = 0;
  std::int64_t start = 0, stop = 0, step = 1;
  static constexpr op_record record{"slice", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::not_axis_0};
  friend bool operator==(const slice_op&, const slice_op&) = default;
};
/// The inputs joined along `axis`, in order.
struct concat_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"concat", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::by_operands};
  friend bool operator==(const concat_op&, const concat_op&) = default;
};
/// The run-time extent of the input's axis `axis`, as a rank-0 integer of the node's type (i32
/// or i64): StableHLO's get_dimension_size.
struct dimension_size_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"get_dimension_size", gradient_rule::none, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const dimension_size_op&, const dimension_size_op&) = default;
};
/// The node's extent of entries of input 0 along `axis` from the run-time start, input 1 (a
/// rank-0 integer), clamped to [0, extent - size] as XLA's dynamic_slice does.
struct dynamic_slice_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"dynamic_slice", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const dynamic_slice_op&, const dynamic_slice_op&) = default;
};
/// Input 0 with input 1 written along `axis` from the run-time start, input 2 (a rank-0
/// integer), clamped to [0, extent - the update's extent] as XLA's dynamic_update_slice does.
struct dynamic_update_slice_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"dynamic_update_slice", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const dynamic_update_slice_op&, const dynamic_update_slice_op&) = default;
};
/// Input 0's elements converted to the node's element type, as C++'s static_cast does (nax::cast
/// in typed code: truncation toward zero to an integer type, bool true for a nonzero value).
struct convert_op {
  static constexpr op_record record{"convert", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const convert_op&, const convert_op&) = default;
};
/// Input 0's entries along `axis` at the run-time indices, input 1 (i32 or i64, any rank): the
/// result has input 0's axes with `axis` replaced, in place, by the indices' axes (ONNX Gather,
/// numpy.take). An index outside [0, extent) is an error when the step runs.
struct take_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"take", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const take_op&, const take_op&) = default;
};
/// Input 0 with input 2 added along `axis` at the run-time indices, input 1 (a take's indices;
/// input 2 has the shape of take(input 0, axis, input 1)); repeated indices add up (XLA's scatter
/// with an add). The VJP of take.
struct scatter_add_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"scatter_add", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const scatter_add_op&, const scatter_add_op&) = default;
};
/// Input 0 with its axis `axis` replaced by a value axis (graph/value_axis.hpp) whose extent is
/// the run-time size, input 1: StableHLO's set_dimension_size. The first min(size, extent)
/// entries are input 0's; entries past its extent are zeros.
struct set_dimension_size_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"set_dimension_size", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::never, true};
  friend bool operator==(const set_dimension_size_op&, const set_dimension_size_op&) = default;
};
/// The positions along `axis` of the node's shape: element (..., j, ...) is j (no inputs).
struct iota_op {
  std::uint32_t axis = 0;
  static constexpr op_record record{"iota", gradient_rule::none, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const iota_op&, const iota_op&) = default;
};
/// A random tensor of the node's shape (no inputs): element i, in row-major order, is
/// ops::random_sample(random_key(key), distribution, a, b, i) (ops/random.hpp). Nodes with other
/// keys, distributions or parameters are different (the CSE pass keeps them apart).
struct random_op {
  ops::distribution distribution = ops::distribution::uniform;
  nax::rng key;
  double a = 0, b = 1;  // (lo, hi) or (mean, stddev)
  static constexpr op_record record{"random", gradient_rule::none, kernel_rule::made,
                                    tiling_rule::never};
  friend bool operator==(const random_op& x, const random_op& y) noexcept;
};
/// The cumulative sum of the input along `axis` (ONNX CumSum; nax::cumsum_options says which
/// positions each element sums), of the input's shape and element type.
struct cumsum_op {
  std::uint32_t axis = 0;
  cumsum_options options;
  static constexpr op_record record{"cumsum", gradient_rule::vjp, kernel_rule::made,
                                    tiling_rule::not_axis_0};
  friend bool operator==(const cumsum_op&, const cumsum_op&) = default;
};
/// Which position arg_reduce finds: of the first largest or of the first smallest element.
enum class arg_kind : std::uint8_t { argmax, argmin };
/// The position (i64) of the first largest (smallest) element of the input along `axis`, which
/// the result lacks; a NaN wins over every number.
struct arg_reduce_op {
  arg_kind kind = arg_kind::argmax;
  std::uint32_t axis = 0;
  static constexpr op_record record{"arg_reduce", gradient_rule::none, kernel_rule::made,
                                    tiling_rule::keeps_axes};
  friend bool operator==(const arg_reduce_op&, const arg_reduce_op&) = default;
};
/// A node computed by a kernel from outside the graph layer (nax::jit's fused expressions).
/// Nodes with different kernel objects are different.
struct external_op {
  std::shared_ptr<const external_kernel> kernel;
  static constexpr op_record record{"external", gradient_rule::refused, kernel_rule::made,
                                    tiling_rule::by_operands};
  friend bool operator==(const external_op&, const external_op&) = default;
};

// Made only by the fusion passes (graph/passes/), never by the builder; such a node keeps the
// ops it replaces (node::fused).

/// A group of elementwise ops (and broadcasts read only inside it) run as one program.
struct fused_elementwise_op {
  static constexpr op_record record{"fused_elementwise", gradient_rule::refused, kernel_rule::made,
                                    tiling_rule::by_operands};
  friend bool operator==(const fused_elementwise_op&, const fused_elementwise_op&) = default;
};
/// dot_general, then optionally + bias (the node's third input), then a unary activation.
struct fused_dense_op {
  dot_general_op dot;
  bool has_bias = false;
  bool has_activation = false;
  ops::id activation = ops::id::relu;
  static constexpr op_record record{"fused_dense", gradient_rule::refused, kernel_rule::shared,
                                    tiling_rule::by_operands};
  friend bool operator==(const fused_dense_op&, const fused_dense_op&) = default;
};
/// An elementwise group reduced over a contiguous run of its result's axes (the group's result
/// never reaches memory).
struct fused_reduce_op {
  reduce_op reduce;
  static constexpr op_record record{"fused_reduce", gradient_rule::refused, kernel_rule::made,
                                    tiling_rule::by_operands};
  friend bool operator==(const fused_reduce_op&, const fused_reduce_op&) = default;
};
/// Extra result `index` (from 1) of the fused node that is this node's one input: a member of
/// the group whose value is also used outside it.
struct extra_result_op {
  std::uint32_t index = 1;
  static constexpr op_record record{"extra_result", gradient_rule::refused, kernel_rule::none,
                                    tiling_rule::never};
  friend bool operator==(const extra_result_op&, const extra_result_op&) = default;
};

/// Every op struct, in op_kind's order: X(kind) for the struct kind_op. A new op is its struct
/// above, with its record, and one line here (docs/architecture.md, "A new graph op").
#define NAX_GRAPH_OP_KINDS(X) \
  X(parameter)                \
  X(constant)                 \
  X(elementwise)              \
  X(reduce)                   \
  X(dot_general)              \
  X(transpose)                \
  X(softmax)                  \
  X(layer_norm)               \
  X(reshape)                  \
  X(broadcast)                \
  X(slice)                    \
  X(concat)                   \
  X(dimension_size)           \
  X(set_dimension_size)       \
  X(dynamic_slice)            \
  X(dynamic_update_slice)     \
  X(take)                     \
  X(convert)                  \
  X(scatter_add)              \
  X(iota)                     \
  X(random)                   \
  X(arg_reduce)               \
  X(cumsum)                   \
  X(external)                 \
  X(fused_elementwise)        \
  X(fused_dense)              \
  X(fused_reduce)             \
  X(extra_result)

/// The kinds of node, one per op struct.
enum class op_kind : std::uint8_t {
#define NAX_GRAPH_OP_ENUM(k) k,
  NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_ENUM)
#undef NAX_GRAPH_OP_ENUM
};

/// op_kind_for<A>: the kind whose struct is A.
template <class A>
inline constexpr bool is_op_struct = false;
template <class A>
inline constexpr op_kind op_kind_for = op_kind::parameter;
#define NAX_GRAPH_OP_TRAITS(k)                       \
  template <>                                        \
  inline constexpr bool is_op_struct<k##_op> = true; \
  template <>                                        \
  inline constexpr op_kind op_kind_for<k##_op> = op_kind::k;
NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_TRAITS)
#undef NAX_GRAPH_OP_TRAITS

inline std::string_view name(op_kind k) noexcept;

/// What a node computes: exactly one op struct (a tagged union; a default one is a
/// parameter_op). Written out rather than a std::variant of the op structs: the variant's copy,
/// move, destruction and comparison cost about 2 s of g++ time in every translation unit that
/// copies a node, and these are one switch each.
class attributes {
 public:
  attributes() : attributes(parameter_op{}) {}
  /// From an op struct (implicit, as a variant's: `node{reduce_op{...}, ...}`).
  template <class A, class S = std::remove_cvref_t<A>>
  requires is_op_struct<S> attributes(A&& a) : kind_(op_kind_for<S>) {
    ::new (static_cast<void*>(&slot<S>())) S(std::forward<A>(a));
  }
  attributes(const attributes& o) : kind_(o.kind_) {
    switch (kind_) {
#define NAX_GRAPH_OP_COPY(k) \
  case op_kind::k: ::new (static_cast<void*>(&k##_)) k##_op(o.k##_); break;
      NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_COPY)
#undef NAX_GRAPH_OP_COPY
    }
  }
  attributes(attributes&& o) noexcept : kind_(o.kind_) {
    switch (kind_) {
#define NAX_GRAPH_OP_MOVE(k) \
  case op_kind::k: ::new (static_cast<void*>(&k##_)) k##_op(std::move(o.k##_)); break;
      NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_MOVE)
#undef NAX_GRAPH_OP_MOVE
    }
  }
  attributes& operator=(const attributes& o) {
    if (this != &o) *this = attributes(o);  // the copy may throw: *this is untouched then
    return *this;
  }
  attributes& operator=(attributes&& o) noexcept {
    if (this != &o) {
      destroy();
      ::new (static_cast<void*>(this)) attributes(std::move(o));
    }
    return *this;
  }
  ~attributes() { destroy(); }

  op_kind kind() const noexcept { return kind_; }
  /// The op struct A, or null if this holds another one.
  template <class A>
  A* get_if() noexcept {
    return kind_ == op_kind_for<A> ? &slot<A>() : nullptr;
  }
  template <class A>
  const A* get_if() const noexcept {
    return kind_ == op_kind_for<A> ? &const_cast<attributes*>(this)->slot<A>() : nullptr;
  }
  template <class A>
  bool is() const noexcept {
    return kind_ == op_kind_for<A>;
  }
  /// The op struct A, which this must hold (std::logic_error naming both kinds otherwise: a
  /// pass's mistake).
  template <class A>
  const A& get() const {
    if (kind_ != op_kind_for<A>) wrong_kind(op_kind_for<A>);
    return *get_if<A>();
  }
  template <class A>
  A& get() {
    if (kind_ != op_kind_for<A>) wrong_kind(op_kind_for<A>);
    return *get_if<A>();
  }

  /// f(the op struct held), for a generic f whose result type is the same for every op struct:
  /// how the rest of nax reaches an op's record and the overloads on its struct.
  template <class F>
  decltype(auto) visit(F&& f) const {
    switch (kind_) {
#define NAX_GRAPH_OP_VISIT(k) \
  case op_kind::k: return std::forward<F>(f)(k##_);
      NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_VISIT)
#undef NAX_GRAPH_OP_VISIT
    }
    unknown_kind();
  }

  friend bool operator==(const attributes& a, const attributes& b) {
    if (a.kind_ != b.kind_) return false;
    switch (a.kind_) {
#define NAX_GRAPH_OP_EQUAL(k) \
  case op_kind::k: return a.k##_ == b.k##_;
      NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_EQUAL)
#undef NAX_GRAPH_OP_EQUAL
    }
    return false;
  }

 private:
  void destroy() noexcept {
    switch (kind_) {
#define NAX_GRAPH_OP_DESTROY(k) \
  case op_kind::k: k##_.~k##_op(); break;
      NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_DESTROY)
#undef NAX_GRAPH_OP_DESTROY
    }
  }
  [[noreturn]] static void unknown_kind() {
    throw std::logic_error("nax::graph: a node of no kind");
  }
  [[noreturn]] void wrong_kind(op_kind wanted) const {
    throw std::logic_error(std::string("nax::graph: a node's op is ") + std::string(name(kind_)) +
                           ", not " + std::string(name(wanted)));
  }
  template <class A>
  A& slot() noexcept {
#define NAX_GRAPH_OP_SLOT(k) \
  if constexpr (std::is_same_v<A, k##_op>) return k##_;
    NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_SLOT)
#undef NAX_GRAPH_OP_SLOT
  }

  op_kind kind_;
  union {
#define NAX_GRAPH_OP_MEMBER(k) k##_op k##_;
    NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_MEMBER)
#undef NAX_GRAPH_OP_MEMBER
  };
};

inline op_kind kind_of(const attributes& a) noexcept { return a.kind(); }

/// Every kind's record, by kind: a table, so that reading one is a load, not a branch (level 2
/// reads one per step).
inline constexpr const op_record* op_records[] = {
#define NAX_GRAPH_OP_RECORD(k) &k##_op::record,
    NAX_GRAPH_OP_KINDS(NAX_GRAPH_OP_RECORD)
#undef NAX_GRAPH_OP_RECORD
};

/// The record of op kind k (graph/op_record.hpp).
inline const op_record& record_of(op_kind k) noexcept {
  return *op_records[static_cast<std::size_t>(k)];
}

inline std::string_view name(op_kind k) noexcept { return record_of(k).name; }

/// What an op is called in messages and in Graphviz: the elementwise op's own name ("tanh"),
/// "reduce_sum", "argmax", "random_normal", or the kind's name.
inline std::string op_label(const attributes& a) {
  if (const auto* e = a.get_if<elementwise_op>()) return std::string(ops::name(e->op));
  if (const auto* r = a.get_if<reduce_op>()) return "reduce_" + std::string(ops::name(r->kind));
  if (const auto* r = a.get_if<arg_reduce_op>())
    return r->kind == arg_kind::argmax ? "argmax" : "argmin";
  if (const auto* r = a.get_if<random_op>())
    return "random_" + std::string(ops::name(r->distribution));
  if (const auto* s = a.get_if<softmax_op>(); s && s->log) return "log_softmax";
  return std::string(name(kind_of(a)));
}

// Compared by bits: the CSE pass must not merge constants 0.0 and -0.0, and must merge NaNs.
inline bool operator==(const constant_op& a, const constant_op& b) noexcept {
  return std::bit_cast<std::uint64_t>(a.value) == std::bit_cast<std::uint64_t>(b.value);
}
inline bool operator==(const random_op& x, const random_op& y) noexcept {
  return x.distribution == y.distribution && x.key == y.key &&
         std::bit_cast<std::uint64_t>(x.a) == std::bit_cast<std::uint64_t>(y.a) &&
         std::bit_cast<std::uint64_t>(x.b) == std::bit_cast<std::uint64_t>(y.b);
}
inline bool operator==(const layer_norm_op& a, const layer_norm_op& b) noexcept {
  return a.axis == b.axis && a.has_gamma == b.has_gamma && a.has_beta == b.has_beta &&
         a.primitives == b.primitives && a.square_by_pow == b.square_by_pow &&
         a.divide_by_sqrt == b.divide_by_sqrt && a.centered == b.centered &&
         std::bit_cast<std::uint64_t>(a.epsilon) == std::bit_cast<std::uint64_t>(b.epsilon);
}

}  // namespace nax::graph
