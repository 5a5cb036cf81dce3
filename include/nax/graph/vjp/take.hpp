#pragma once
// The VJPs of take, scatter_add and convert. take's cotangent is added into zeros of the
// operand's shape at the same indices (scatter_add: repeated indices add up); scatter_add's goes
// to its operand whole and, read at the indices (take), to its updates. Indices have none.
// convert's is the cotangent converted back.

#include <nax/core/isa.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

inline void vjp(const take_op& op, const vjp_context& c) {
  if (!c.wants[0]) return;
  c.give(0, c.b.scatter_add(zeros(c.b, c.shape_of(0)), std::size_t{op.axis}, c.operand(1), c.dy));
}

// convert's: dy converted back to the operand's type, if that is f32 or f64 (an integer or bool
// operand carries no gradient), for a floating-point result; none from an integer result.
inline void vjp(const convert_op&, const vjp_context& c) {
  const nax::dtype from = c.shape_of(0).dtype(), to = c.n.shape.dtype();
  auto floating = [](nax::dtype t) { return t == nax::dtype::f32 || t == nax::dtype::f64; };
  if (!c.wants[0] || !floating(from) || !floating(to)) return;
  c.give(0, c.b.convert(c.dy, from));
}

inline void vjp(const scatter_add_op& op, const vjp_context& c) {
  const std::size_t axis = op.axis;
  if (c.wants[0]) c.give(0, c.dy);
  if (c.wants[2]) c.give(2, c.b.take(c.dy, axis, c.operand(1)));
}

}  // namespace nax::graph::detail
