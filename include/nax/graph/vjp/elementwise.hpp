#pragma once
// The VJP of an elementwise node: the op's own derivative (ops/elementwise.hpp, next to its
// body) over graph values, each operand's part summed back over the axes it was broadcast along.

#include <array>
#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/graph/vjp/common.hpp>
#include <nax/ops/elementwise.hpp>

namespace nax::NAX_ISA::graph::detail {

inline void vjp(const elementwise_op& e, const vjp_context& c) {
  ops::with_op(e.op, [&](auto op) {
    using O = decltype(op);
    if constexpr (O::differentiable) {
      graph_calculator d;
      const auto part = [&] {
        if constexpr (O::arity == 1) {
          return O::vjp(d, c.dy, c.y, c.operand(0));
        } else if constexpr (O::arity == 2) {
          return O::vjp(d, c.dy, c.y, c.operand(0), c.operand(1));
        } else {
          return O::vjp(d, c.dy, c.y, c.operand(0), c.operand(1), c.operand(2));
        }
      }();
      for (std::size_t i = 0; i < O::arity; ++i)
        if (c.wants[i]) c.give(i, unbroadcast(conform(part[i], c.y.shape()), c.shape_of(i)));
    }
  });
}

}  // namespace nax::graph::detail
