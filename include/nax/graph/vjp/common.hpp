#pragma once
// What the vector-Jacobian products of graph/vjp/ share: the context a node's VJP gets (its
// value, its cotangent, which operands need one, where to give them), the calculator the op
// bodies' derivatives (ops/elementwise.hpp) are written against, and the shape work every VJP
// does: reshaping a cotangent to the exact shape of its value, summing it over the axes its
// operand was broadcast along, and broadcasting it back over the axes a reduction removed.
// Included by graph/grad.hpp's definitions only.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nax/core/broadcast.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>

namespace nax::NAX_ISA::graph::detail {

/// builder's autodiff hook: x reshaped to exactly `target` (names and aliases included).
struct grad_access {
  static value reshape(const value& x, const nax::shape target) {
    return x.owner().reshape_unchecked(x, target);
  }
  static void mark_gradient_begin(builder& b, node_id first) { b.mark_gradient_begin(first); }
  static builder::state saved(const builder& b) { return b.saved(); }
  static void restore(builder& b, const builder::state& s) { b.restore(s); }
};

/// One node's VJP: its value y, its cotangent dy (of y's shape), and per operand whether it
/// needs a cotangent; give(i, v) adds v (of operand i's shape) to operand i's cotangent.
struct vjp_context {
  builder& b;
  const node& n;  // a copy: adding nodes moves the builder's
  value y, dy;
  std::span<const char> wants;                   // per operand
  std::vector<std::optional<value>>* cotangent;  // per node of the builder

  value operand(std::size_t i) const { return b.value_of(n.inputs[i]); }
  // (Shapes by value here and below: a reference to a node's shape dies when a node is added.)
  nax::shape shape_of(std::size_t i) const { return b.at(n.inputs[i]).shape; }
  void give(std::size_t i, const value& v) const {
    std::optional<value>& c = (*cotangent)[n.inputs[i]];
    c = c ? *c + v : v;
  }
};

/// The functions the ops' derivatives call (ops/elementwise.hpp's file comment), over graph
/// values: each adds nodes to the values' builder.
struct graph_calculator {
  static value exp(const value& v) { return graph::exp(v); }
  static value log(const value& v) { return graph::log(v); }
  static value tanh(const value& v) { return graph::tanh(v); }
  static value sigmoid(const value& v) { return graph::sigmoid(v); }
  static value erf(const value& v) { return graph::erf(v); }
  static value sin(const value& v) { return graph::sin(v); }
  static value cos(const value& v) { return graph::cos(v); }
  static value pow(const value& a, const value& b) { return graph::pow(a, b); }
  static value zeros_like(const value& v) { return graph::zeros_like(v); }
  static value greater(const value& a, double b) { return graph::greater(a, b); }
  static value equal(const value& a, double b) { return graph::equal(a, b); }
  static value less(const value& a, double b) { return graph::less(a, b); }
  static value less_equal(const value& a, const value& b) { return graph::less_equal(a, b); }
  static value greater_equal(const value& a, const value& b) { return graph::greater_equal(a, b); }
  static value where(const value& m, const value& a, const value& b) {
    return graph::where(m, a, b);
  }
  static value where(const value& m, const value& a, double b) { return graph::where(m, a, b); }
  static value where(const value& m, double a, const value& b) { return graph::where(m, a, b); }
};

/// v in exactly `target`'s shape (v has its elements, in row-major order).
inline value reshaped(const value& v, const nax::shape target) {
  return grad_access::reshape(v, target);
}

/// v (the cotangent of a result) summed into the shape `target` of an operand that was
/// broadcast to it: operand axis i went to v's axis to[i]. v's other axes are summed away, and
/// so are those an operand's static 1 was repeated along; the rest are put in target's order.
inline value unbroadcast(const value& v, const nax::shape target, std::span<const std::size_t> to) {
  const nax::shape vs = v.shape();
  std::vector<char> kept(vs.rank(), 0);
  auto repeated = [&](std::size_t i) {  // target axis i is a static 1 that v has more of
    return nax::detail::is_static_one(target[i]) && !nax::detail::is_static_one(vs[to[i]]);
  };
  for (std::size_t i = 0; i < target.rank(); ++i)
    if (!repeated(i)) kept[to[i]] = 1;
  std::vector<axis_ref> summed;
  std::vector<std::size_t> position(vs.rank(), 0);  // of each kept axis of v, after the sum
  std::size_t next = 0;
  for (std::size_t a = 0; a < vs.rank(); ++a) {
    if (kept[a])
      position[a] = next++;
    else
      summed.push_back(a);
  }
  value s = summed.empty() ? v : v.owner().reduce(ops::reduce_kind::sum, v, summed);
  std::vector<axis_ref> perm;
  bool moved = false;
  for (std::size_t i = 0; i < target.rank(); ++i) {
    if (repeated(i)) continue;
    moved = moved || position[to[i]] != perm.size();
    perm.push_back(position[to[i]]);
  }
  if (moved) s = s.owner().transpose(s, perm);
  return reshaped(s, target);
}

/// unbroadcast by the broadcast rule (core/broadcast.hpp) of an operand of shape `target` read
/// over a result of v's shape.
inline value unbroadcast(const value& v, const nax::shape target) {
  if (v.shape() == target) return v;
  std::vector<std::size_t> to(target.rank());
  broadcast_axis_map(target, v.shape(), to);
  return unbroadcast(v, target, to);
}

/// v, whose axes are target's but the `removed` ones (ascending positions of target), repeated
/// along those: a reduction's cotangent back over its operand.
inline value expand(const value& v, const nax::shape target,
                    std::span<const std::uint32_t> removed) {
  std::vector<dim> dims(target.dims().begin(), target.dims().end());
  for (std::uint32_t a : removed) dims[a] = dim(1);
  const value ones_in = reshaped(v, nax::shape(target.dtype(), std::span<const dim>(dims)));
  return v.owner().broadcast(ones_in, target);
}

/// v of some shape with target's axes, in target's shape and axis order (a derivative of an
/// elementwise op may put its operand's axes first).
inline value conform(const value& v, const nax::shape target) {
  return v.shape() == target ? v : v.owner().broadcast(v, target);
}

/// The product of the extents of x's axes `axes`, as a value of x's element type: a constant
/// when they are static, else counted at run time (a sum of ones over those axes alone).
inline value count_of(const value& x, std::span<const std::uint32_t> axes) {
  const nax::shape xs = x.shape();
  std::size_t n = 1;
  bool known = true;
  std::vector<dim> dims;
  for (std::uint32_t a : axes) {
    known = known && xs[a].is_static();
    if (xs[a].is_static()) n *= xs[a].extent();
    dims.push_back(xs[a]);
  }
  builder& b = x.owner();
  if (known) return b.constant(static_cast<double>(n), xs.dtype());
  const value ones = full(b, nax::shape(xs.dtype(), std::span<const dim>(dims)), 1.0);
  std::vector<axis_ref> all;
  for (std::size_t i = 0; i < dims.size(); ++i) all.push_back(i);
  return b.reduce(ops::reduce_kind::sum, ones, all);
}

}  // namespace nax::graph::detail
