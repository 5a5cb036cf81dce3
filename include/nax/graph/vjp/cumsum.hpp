#pragma once
// The VJP of cumsum: element i of the operand reaches every result element whose sum counts it,
// so its cotangent is the cumulative sum of the result's cotangent in the other direction, with
// the same exclusivity (an inclusive sum counts i at i itself; an exclusive one does not).

#include <nax/core/isa.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

inline void vjp(const cumsum_op& op, const vjp_context& c) {
  if (!c.wants[0]) return;
  const cumsum_options back{.exclusive = op.options.exclusive, .reverse = !op.options.reverse};
  c.give(0, c.b.cumsum(c.dy, std::size_t{op.axis}, back));
}

}  // namespace nax::NAX_ISA::graph::detail
