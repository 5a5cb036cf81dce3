#pragma once
// The VJP of a reduction: the cotangent repeated over the reduced axes; for the mean, divided by
// their count; for max and min, given to the elements equal to the result (a tie shares it).

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

inline void vjp(const reduce_op& r, const vjp_context& c) {
  const value x = c.operand(0);
  const nax::shape xs = c.shape_of(0);
  switch (r.kind) {
    case ops::reduce_kind::sum: c.give(0, expand(c.dy, xs, r.axes)); break;
    case ops::reduce_kind::mean: c.give(0, expand(c.dy / count_of(x, r.axes), xs, r.axes)); break;
    case ops::reduce_kind::max:
    case ops::reduce_kind::min: {
      // A tie of k elements shares dy evenly (dy / k each), as JAX and torch.amax do: the
      // gradient's sum is dy's, and a symmetric function's gradient stays symmetric.
      const value hit = graph::equal(x, expand(c.y, xs, r.axes));
      builder& b = x.owner();
      const value ones = graph::where(hit, b.constant(1, xs.dtype()), b.constant(0, xs.dtype()));
      std::vector<axis_ref> reduced;
      for (std::uint32_t a : r.axes) reduced.push_back(std::size_t{a});
      const value ties = b.reduce(ops::reduce_kind::sum, ones, reduced);
      c.give(0, graph::where(hit, expand(c.dy / ties, xs, r.axes), 0.0));
      break;
    }
  }
}

}  // namespace nax::graph::detail
