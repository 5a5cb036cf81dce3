#pragma once
// The ops of the runtime graph as free functions and operators on graph values:
// `nax::graph::tanh(nax::graph::dot_general(a, w, {{1, 0}}) + b)`. Each adds a node to the
// builder its operands belong to. The elementwise functions are made from the op list
// (ops/list.hpp), one per op: `f(x)`, `f(a, b)` (either may be a double: a constant of the other
// operand's element type), `f(mask, a, b)`.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nax/core/dim.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/builder.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/random.hpp>

namespace nax::NAX_ISA::graph {
namespace detail {

inline value apply(ops::id op, std::initializer_list<value> args) {
  return args.begin()->owner().elementwise(op, std::span(args.begin(), args.size()));
}

// A number given as an operand of an elementwise op.
template <class S>
concept scalar = std::is_arithmetic_v<S>;

// A scalar operand: a constant of the other operand's element type.
inline value scalar_like(const value& like, double v) {
  return like.owner().constant(v, like.shape().dtype());
}

}  // namespace detail

// One function per elementwise op, by its arity.
#define NAX_GRAPH_OP_1(name) \
  inline value name(const value& x) { return detail::apply(ops::id::name, {x}); }
// (The scalar forms are templates so that a braced list is never a scalar: max(x, {1}) is the
// reduction over axis 1 below, not max(x, 1.0).)
#define NAX_GRAPH_OP_2(name)                                        \
  inline value name(const value& a, const value& b) {               \
    return detail::apply(ops::id::name, {a, b});                    \
  }                                                                 \
  template <detail::scalar S>                                       \
  value name(const value& a, S b) {                                 \
    return name(a, detail::scalar_like(a, static_cast<double>(b))); \
  }                                                                 \
  template <detail::scalar S>                                       \
  value name(S a, const value& b) {                                 \
    return name(detail::scalar_like(b, static_cast<double>(a)), b); \
  }
#define NAX_GRAPH_OP_3(name)                                          \
  inline value name(const value& m, const value& a, const value& b) { \
    return detail::apply(ops::id::name, {m, a, b});                   \
  }                                                                   \
  inline value name(const value& m, const value& a, double b) {       \
    return name(m, a, detail::scalar_like(a, b));                     \
  }                                                                   \
  inline value name(const value& m, double a, const value& b) {       \
    return name(m, detail::scalar_like(b, a), b);                     \
  }
#define NAX_GRAPH_OP(name, arity, operands, result) NAX_GRAPH_OP_##arity(name)
NAX_ELEMENTWISE_OPS(NAX_GRAPH_OP)
#undef NAX_GRAPH_OP
#undef NAX_GRAPH_OP_1
#undef NAX_GRAPH_OP_2
#undef NAX_GRAPH_OP_3

// Operators: syntax for some of the ops above.
inline value operator-(const value& x) { return neg(x); }
inline value operator+(const value& a, const value& b) { return add(a, b); }
inline value operator-(const value& a, const value& b) { return sub(a, b); }
inline value operator*(const value& a, const value& b) { return mul(a, b); }
inline value operator/(const value& a, const value& b) { return div(a, b); }
inline value operator+(const value& a, double b) { return add(a, b); }
inline value operator-(const value& a, double b) { return sub(a, b); }
inline value operator*(const value& a, double b) { return mul(a, b); }
inline value operator/(const value& a, double b) { return div(a, b); }
inline value operator+(double a, const value& b) { return add(a, b); }
inline value operator-(double a, const value& b) { return sub(a, b); }
inline value operator*(double a, const value& b) { return mul(a, b); }
inline value operator/(double a, const value& b) { return div(a, b); }

// Comparisons, as on typed tensors: elementwise, a bool tensor (less, greater, ... by name).
inline value operator<(const value& a, const value& b) { return less(a, b); }
inline value operator<=(const value& a, const value& b) { return less_equal(a, b); }
inline value operator>(const value& a, const value& b) { return greater(a, b); }
inline value operator>=(const value& a, const value& b) { return greater_equal(a, b); }
inline value operator==(const value& a, const value& b) { return equal(a, b); }
inline value operator!=(const value& a, const value& b) { return not_equal(a, b); }
inline value operator<(const value& a, double b) { return less(a, b); }
inline value operator<=(const value& a, double b) { return less_equal(a, b); }
inline value operator>(const value& a, double b) { return greater(a, b); }
inline value operator>=(const value& a, double b) { return greater_equal(a, b); }
inline value operator==(const value& a, double b) { return equal(a, b); }
inline value operator!=(const value& a, double b) { return not_equal(a, b); }
inline value operator<(double a, const value& b) { return less(a, b); }
inline value operator<=(double a, const value& b) { return less_equal(a, b); }
inline value operator>(double a, const value& b) { return greater(a, b); }
inline value operator>=(double a, const value& b) { return greater_equal(a, b); }
inline value operator==(double a, const value& b) { return equal(a, b); }
inline value operator!=(double a, const value& b) { return not_equal(a, b); }

/// Reductions over the listed axes (by name or position); the other axes are kept in order.
inline value sum(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::sum, x, std::span(axes.begin(), axes.size()));
}
inline value mean(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::mean, x, std::span(axes.begin(), axes.size()));
}
inline value max(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::max, x, std::span(axes.begin(), axes.size()));
}
inline value min(const value& x, std::initializer_list<axis_ref> axes) {
  return x.owner().reduce(ops::reduce_kind::min, x, std::span(axes.begin(), axes.size()));
}
/// XLA's names for max and min over axes (the same nodes), for code written against them.
inline value reduce_max(const value& x, std::initializer_list<axis_ref> axes) {
  return max(x, axes);
}
inline value reduce_min(const value& x, std::initializer_list<axis_ref> axes) {
  return min(x, axes);
}

/// The position (i64) of the first largest (smallest) element along an axis; a NaN wins.
inline value argmax(const value& x, axis_ref axis) {
  return x.owner().arg_reduce(arg_kind::argmax, x, axis);
}
inline value argmin(const value& x, axis_ref axis) {
  return x.owner().arg_reduce(arg_kind::argmin, x, axis);
}

/// The cumulative sum along an axis (ONNX CumSum; `options`: nax::cumsum_options).
inline value cumsum(const value& x, axis_ref axis, cumsum_options options = {}) {
  return x.owner().cumsum(x, axis, options);
}

/// dot_general(a, b, {{1, 0}}): contract a's axis 1 with b's axis 0; `batch` pairs are matched.
inline value dot_general(const value& a, const value& b, std::initializer_list<axis_pair> contract,
                         std::initializer_list<axis_pair> batch = {}) {
  return a.owner().dot_general(a, b, std::span(contract.begin(), contract.size()),
                               std::span(batch.begin(), batch.size()));
}

/// dot(a, b, {"hidden"}): a and b contracted along the named axes, as nax::dot<hidden>(a, b):
/// the other axes both have (by name) are batch axes, matched and kept once; the result's axes
/// are the batch axes (in a's order), then a's other axes, then b's. Axes by name only (they
/// are found in both operands); dot_general takes pairs by position.
NAX_RUNTIME_INLINE value dot(const value& a, const value& b,
                             std::initializer_list<axis_ref> contract);

/// permute(x, {"batch", "seq", "hidden"}): x's axes in the order given (every axis once, by name
/// or position), as nax::permute<batch, seq, hidden>(x). transpose, XLA's name, is the same.
inline value permute(const value& x, std::initializer_list<axis_ref> order) {
  return x.owner().transpose(x, std::span(order.begin(), order.size()));
}
inline value transpose(const value& x, std::initializer_list<axis_ref> perm) {
  return permute(x, perm);
}
inline value softmax(const value& x, axis_ref axis) { return x.owner().softmax(x, axis); }
/// log_softmax(x, "vocab"): (x - max) - log(sum(exp(x - max))) along the axis, one node run by
/// nax::log_softmax<vocab>'s row kernel (the same bits).
inline value log_softmax(const value& x, axis_ref axis) { return x.owner().log_softmax(x, axis); }
inline value layer_norm(const value& x, const value& gamma, const value& beta, axis_ref axis,
                        double epsilon = 1e-5) {
  return x.owner().layer_norm(x, gamma, beta, axis, epsilon);
}

/// reshape(x, {"batch", 3, 4}): x's elements in row-major order in the given dimensions (of x's
/// element type), or in a shape. See builder::reshape for the rules on dynamic axes.
inline value reshape(const value& x, const nax::shape& target) {
  return x.owner().reshape(x, target);
}
inline value reshape(const value& x, std::initializer_list<nax::dim> dims) {
  return reshape(x, nax::shape(x.shape().dtype(), dims));
}

/// broadcast(x, {"batch", "seq", 768}): x repeated to the given dimensions (of x's element type),
/// or to a shape; axes match by name when all are named, else from the right.
inline value broadcast(const value& x, const nax::shape& target) {
  return x.owner().broadcast(x, target);
}
inline value broadcast(const value& x, std::initializer_list<nax::dim> dims) {
  return broadcast(x, nax::shape(x.shape().dtype(), dims));
}

/// x with axis `from` named `to` (builder::rename): a renamed dynamic axis is bound as its source.
inline value rename(const value& x, axis_ref from, std::string_view to) {
  return x.owner().rename(x, from, to);
}
/// x with its static axis `whole` split into `outer` then `inner` (builder::split).
inline value split(const value& x, axis_ref whole, dim outer, dim inner) {
  return x.owner().split(x, whole, outer, inner);
}
/// x with its static axes a and b merged into one axis named `to` (builder::merge).
inline value merge(const value& x, axis_ref a, axis_ref b, std::string_view to) {
  return x.owner().merge(x, a, b, to);
}

/// slice(x, "seq", 0, 128): entries [start, stop) of an axis, every step-th (slice_end: to the
/// end; on a dynamic axis only for all of it).
inline value slice(const value& x, axis_ref axis, std::int64_t start, std::int64_t stop,
                   std::int64_t step = 1) {
  return x.owner().slice(x, axis, start, stop, step);
}

/// concat({a, b}, "hidden"): the operands joined along a static axis, in order.
inline value concat(std::span<const value> xs, axis_ref axis) {
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  return xs[0].owner().concat(xs, axis);
}
inline value concat(std::initializer_list<value> xs, axis_ref axis) {
  return concat(std::span(xs.begin(), xs.size()), axis);
}
/// concat({a, b}, "seq", "joined"): the same along static or bounded axes, the joined axis named
/// `name`: bounded by the sum of the operands' extents and bounds, its extent their sum at run
/// time (docs/bounded.md).
inline value concat(std::initializer_list<value> xs, axis_ref axis, std::string_view name) {
  if (xs.size() == 0)
    nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  return xs.begin()->owner().concat(std::span(xs.begin(), xs.size()), axis, name);
}

/// pad(x, "seq", 1, 2, 0.0): x with 1 entry before and 2 after along a static axis, all 0.
inline value pad(const value& x, axis_ref axis, std::int64_t low, std::int64_t high, double v) {
  return x.owner().pad(x, axis, low, high, v);
}

/// pad(x, "seq", low, high, 0.0, "padded", 512): x with low entries before and high after along
/// a static or bounded axis, the amounts rank-0 integers of the graph (run-time values), the
/// padded axis a new axis of at most 512 entries (docs/bounded.md).
inline value pad(const value& x, axis_ref axis, const value& low, const value& high, double v,
                 std::string_view name, std::size_t bound) {
  return x.owner().pad(x, axis, low, high, v, name, bound);
}

// --- places along an axis that are run-time values (docs/bounded.md) ---------------------------

/// size(x, "seq"): x's run-time extent along seq, a rank-0 i32 (or `type`: i64), as
/// nax::size<seq>(x). get_dimension_size, XLA's name, is the same.
inline value size(const value& x, axis_ref axis, nax::dtype type = nax::dtype::i32) {
  return x.owner().get_dimension_size(x, axis, type);
}
inline value get_dimension_size(const value& x, axis_ref axis, nax::dtype type = nax::dtype::i32) {
  return size(x, axis, type);
}

/// set_dimension_size(x, "slots", count, "batch"): x with its static or bounded axis `slots`
/// replaced by the axis `batch` whose extent is the run-time `count` (at most the axis's extent or
/// bound; zeros past x's extent). count is made from parameters, constants and
/// get_dimension_size by add, sub, mul, min and max.
inline value set_dimension_size(const value& x, axis_ref axis, const value& size,
                                std::string_view name) {
  return x.owner().set_dimension_size(x, axis, size, name);
}

/// dynamic_slice(x, "seq", start, 16): 16 entries along seq from the run-time start (a rank-0
/// integer), clamped to [0, extent - 16].
inline value dynamic_slice(const value& x, axis_ref axis, const value& start, std::int64_t size) {
  return x.owner().dynamic_slice(x, axis, start, size);
}

/// dynamic_update_slice(x, u, "seq", start): x with u written along seq from the run-time start,
/// clamped to [0, extent - u's extent].
inline value dynamic_update_slice(const value& x, const value& update, axis_ref axis,
                                  const value& start) {
  return x.owner().dynamic_update_slice(x, update, axis, start);
}

/// take(embedding, "vocab", ids): embedding's entries along vocab at the run-time indices (i32
/// or i64, any rank), whose axes replace vocab in place (ONNX Gather). An index outside
/// [0, extent) throws nax::shape_error when the executable runs.
inline value take(const value& x, axis_ref axis, const value& indices) {
  return x.owner().take(x, axis, indices);
}

/// convert(x, dtype::f32): x's elements converted, as nax::cast does (static_cast: toward zero to
/// an integer type, true for nonzero to bool); x itself if it has that type already.
inline value convert(const value& x, nax::dtype type) { return x.owner().convert(x, type); }

/// scatter_add(x, "vocab", ids, updates): x with updates (take(x, "vocab", ids)'s shape) added
/// along vocab at the indices; repeated indices add up.
inline value scatter_add(const value& x, axis_ref axis, const value& indices,
                         const value& updates) {
  return x.owner().scatter_add(x, axis, indices, updates);
}

// --- tensors made from a rule (docs/graph.md, "Making tensors") ----------------------------------
// Shapes are given, or taken from an operand (the `_like` forms and those with axes of x): no
// node reads the operand, so it is not computed for them.

namespace detail {

// Dimension `axis` of x (by position or name), for the forms that take their shape from x.
inline nax::dim dim_of(std::string_view op, const value& x, axis_ref axis) {
  const nax::shape& s = x.shape();
  if (axis.index == axis_ref::by_name) {
    if (auto i = s.index_of(axis.name)) return s[*i];
    nax::detail::throw_shape_error("nax::graph::", op, ": ", s.to_string(), " has no axis '",
                                   axis.name, "'");
  }
  if (axis.index >= s.rank())
    nax::detail::throw_shape_error("nax::graph::", op, ": axis ", axis.index,
                                   " is out of range for ", s.to_string());
  return s[axis.index];
}

inline nax::shape with_dtype(const nax::shape& s, nax::dtype t) { return nax::shape(t, s.dims()); }

}  // namespace detail

/// Every element `v`: a constant broadcast to s. (s by value: it may be a shape of b's, which
/// adding the constant can move.)
inline value full(builder& b, nax::shape s, double v) {
  const value c = b.constant(v, s.dtype());
  return b.broadcast(c, std::move(s));
}
inline value zeros(builder& b, const nax::shape& s) { return full(b, s, 0); }
inline value ones(builder& b, const nax::shape& s) { return full(b, s, 1); }
/// x's shape and element type, every element `v` (x itself is not read).
inline value full_like(const value& x, double v) { return full(x.owner(), x.shape(), v); }
inline value zeros_like(const value& x) { return full_like(x, 0); }
inline value ones_like(const value& x) { return full_like(x, 1); }

/// The positions along `axis` of shape s: element (..., j, ...) is j.
inline value iota(builder& b, const nax::shape& s, axis_ref axis) { return b.iota(s, axis); }
/// 0, 1, ..., n - 1 over x's axis `axis` alone (n its extent), of element type t.
inline value iota(const value& x, axis_ref axis, nax::dtype t = nax::dtype::i64) {
  return x.owner().iota(nax::shape(t, {detail::dim_of("iota", x, axis)}), 0);
}

/// Over [row, col]: true where the positions are equal (eye) or where col's is at most row's
/// (tril, the causal mask: query i sees keys 0..i); of element type t (1 and 0 unless bool). Made
/// of iota over each axis, a comparison and, for a t other than bool, a where.
inline value eye(builder& b, nax::dim row, nax::dim col, nax::dtype t = nax::dtype::f32) {
  const value r = b.iota(nax::shape(nax::dtype::i64, {row}), 0);
  const value c = b.iota(nax::shape(nax::dtype::i64, {col}), 0);
  const value mask = equal(reshape(r, {row, 1}), c);
  if (t == nax::dtype::boolean) return mask;
  return where(mask, b.constant(1, t), b.constant(0, t));
}
inline value tril(builder& b, nax::dim row, nax::dim col, nax::dtype t = nax::dtype::boolean) {
  const value r = b.iota(nax::shape(nax::dtype::i64, {row}), 0);
  const value c = b.iota(nax::shape(nax::dtype::i64, {col}), 0);
  const value mask = less_equal(c, reshape(r, {row, 1}));
  if (t == nax::dtype::boolean) return mask;
  return where(mask, b.constant(1, t), b.constant(0, t));
}
/// eye and tril over two axes of x, with x's extents for them: `tril(scores, "seq", "kseq")`.
inline value eye(const value& x, axis_ref row, axis_ref col, nax::dtype t) {
  return eye(x.owner(), detail::dim_of("eye", x, row), detail::dim_of("eye", x, col), t);
}
inline value tril(const value& x, axis_ref row, axis_ref col, nax::dtype t = nax::dtype::boolean) {
  return tril(x.owner(), detail::dim_of("tril", x, row), detail::dim_of("tril", x, col), t);
}

/// Random tensors of shape s (f32 or f64), stream `key` (ops/random.hpp defines the bits).
inline value uniform(builder& b, const nax::shape& s, nax::rng key, double lo = 0, double hi = 1) {
  return b.random(s, ops::distribution::uniform, key, lo, hi);
}
inline value normal(builder& b, const nax::shape& s, nax::rng key, double mean = 0,
                    double stddev = 1) {
  return b.random(s, ops::distribution::normal, key, mean, stddev);
}
/// Normal, resampled within 2 standard deviations of the mean.
inline value truncated_normal(builder& b, const nax::shape& s, nax::rng key, double mean = 0,
                              double stddev = 1) {
  return b.random(s, ops::distribution::truncated_normal, key, mean, stddev);
}
/// The same with x's shape and element type (x itself is not read).
inline value uniform_like(const value& x, nax::rng key, double lo = 0, double hi = 1) {
  return uniform(x.owner(), x.shape(), key, lo, hi);
}
inline value normal_like(const value& x, nax::rng key, double mean = 0, double stddev = 1) {
  return normal(x.owner(), x.shape(), key, mean, stddev);
}
inline value truncated_normal_like(const value& x, nax::rng key, double mean = 0,
                                   double stddev = 1) {
  return truncated_normal(x.owner(), x.shape(), key, mean, stddev);
}

/// Over indices' axes and then `axis` (a named dimension: static, or a dynamic one bound when
/// the graph runs): 1 where the position along `axis` is the index, else 0, of element type t. An
/// index out of [0, extent) makes a row of zeros. indices: i32 or i64. Made of iota, equal and
/// where (bool: no where).
inline value one_hot(const value& indices, nax::dim axis, nax::dtype t = nax::dtype::f32) {
  builder& b = indices.owner();
  const nax::shape is = indices.shape();  // a copy: the nodes added below may move the builder's
  if (is.dtype() != nax::dtype::i32 && is.dtype() != nax::dtype::i64)
    nax::detail::throw_shape_error("nax::graph::one_hot: the indices must be i32 or i64, not ",
                                   is.to_string());
  if (!axis.has_name())
    nax::detail::throw_shape_error("nax::graph::one_hot: the new axis (", axis.to_string(),
                                   ") needs a name");
  if (is.index_of(axis.name().view()))
    nax::detail::throw_shape_error("nax::graph::one_hot: the indices ", is.to_string(),
                                   " already have an axis '", axis.name().view(), "'");
  nax::detail::small_vector<nax::dim, 6> dims;
  for (const nax::dim& d : is.dims()) dims.push_back(d);
  dims.push_back(nax::dim(1));
  const value column = b.reshape(
      indices, nax::shape(is.dtype(), std::span<const nax::dim>(dims.data(), dims.size())));
  const value mask = equal(column, b.iota(nax::shape(is.dtype(), {axis}), 0));
  if (t == nax::dtype::boolean) return mask;
  return where(mask, b.constant(1, t), b.constant(0, t));
}

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::graph {

NAX_RUNTIME_INLINE value dot(const value& a, const value& b,
                             std::initializer_list<axis_ref> contract) {
  std::vector<axis_pair> contracted, batch;
  for (const axis_ref& r : contract) {
    if (r.index != axis_ref::by_name)
      nax::detail::throw_shape_error("nax::graph::dot: axis ", r.index,
                                     " given by position; dot names the axes it contracts "
                                     "(dot_general takes positions)");
    for (const value* operand : {&a, &b})
      if (!operand->shape().index_of(r.name))
        nax::detail::throw_shape_error("nax::graph::dot: operand ", operand == &a ? 0 : 1, " (",
                                       operand->shape().to_string(), ") has no axis '", r.name,
                                       "'");
    contracted.push_back({r.name, r.name});
  }
  for (const nax::dim& d : a.shape().dims()) {
    if (!d.has_name() || !b.shape().index_of(d.name().view())) continue;
    bool is_contracted = false;
    for (const axis_ref& r : contract) is_contracted = is_contracted || r.name == d.name().view();
    if (!is_contracted) batch.push_back({d.name().view(), d.name().view()});
  }
  return a.owner().dot_general(a, b, contracted, batch);
}

}  // namespace nax::NAX_ISA::graph
#endif  // NAX_RUNTIME_DEFINITIONS
