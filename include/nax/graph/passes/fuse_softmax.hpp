#pragma once
// The softmax fusion pass: softmax spelled from primitives, in its common variants,
//   e = exp(x - reduce_max(x, a)) or exp(x);   y = e / sum(e, a) or e * (1 / sum(e, a)),
// becomes one softmax node along axis a, which keeps the spelling: its kernel gives the
// primitives' bits (kernels/spelled_rows.hpp). Not taken when an intermediate is read outside
// the pattern or is an output.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void fuse_softmax(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/graph/passes/fusion_group.hpp>
#include <nax/graph/passes/pattern.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

inline bool try_softmax(pattern_matcher& m, node_id y) {
  const node& yn = m.at(y);
  if (!yn.is<elementwise_op>() || yn.inputs.size() != 2) return false;
  std::vector<node_id> members{y};
  node_id e = 0, s = 0;
  if (m.is(y, ops::id::div)) {
    e = yn.inputs[0];
    s = yn.inputs[1];
  } else if (m.is(y, ops::id::mul)) {
    for (int swap = 0; swap < 2 && members.size() == 1; ++swap) {
      const node_id a = yn.inputs[swap], r = yn.inputs[1 - swap];
      if (m.is(r, ops::id::div) && m.is_constant(m.at(r).inputs[0], 1.0)) {
        e = a;
        s = m.at(r).inputs[1];
        members.push_back(r);
      }
    }
    if (members.size() == 1) return false;
  } else {
    return false;
  }
  const auto axis = m.single_axis_reduce(s, ops::reduce_kind::sum);
  if (!m.is(e, ops::id::exp) || !axis || m.at(s).inputs[0] != e) return false;
  members.push_back(e);
  members.push_back(s);
  node_id x = m.at(e).inputs[0], largest = 0;
  bool subtract_max = false;
  if (m.is(x, ops::id::sub)) {
    const node_id d = x, mx = m.at(d).inputs[1];
    if (m.is_reduce(mx, ops::reduce_kind::max, *axis) && m.at(mx).inputs[0] == m.at(d).inputs[0]) {
      members.push_back(d);
      members.push_back(mx);
      x = m.at(d).inputs[0];
      largest = mx;
      subtract_max = true;
    }
  }
  const nax::shape& xs = m.at(x).shape;
  if (!ops::is_floating(xs.dtype()) || !m.same_dims(m.at(y).shape, xs) ||
      !m.same_dims(m.at(e).shape, xs) || m.at(y).shape.dtype() != xs.dtype())
    return false;
  // The maximum and the sum each go back along the axis they were taken over.
  if ((subtract_max && !m.broadcasts_back(largest, xs, *axis)) || !m.broadcasts_back(s, xs, *axis))
    return false;
  // Every op in x's type, as the kernel computes (an op in another type would round otherwise).
  for (node_id k : members)
    if (m.at(k).shape.dtype() != xs.dtype()) return false;
  fusion_group gr;
  gr.kind = fusion_kind::softmax;
  gr.op = softmax_op{.axis = *axis,
                     .primitives = true,
                     .subtract_max = subtract_max,
                     .divide = m.is(y, ops::id::div)};
  gr.args.push_back(x);
  return m.take(std::move(gr), std::move(members), y);
}

}  // namespace detail

NAX_RUNTIME_INLINE void fuse_softmax(ir& g) {
  std::vector<fusion_group> groups;
  {
    pattern_matcher m(g);
    for (node_id i = static_cast<node_id>(g.size()); i-- > 0;)
      if (m.free(i)) (void)detail::try_softmax(m, i);
    groups = m.finish();
  }
  replace_groups(g, groups);
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
