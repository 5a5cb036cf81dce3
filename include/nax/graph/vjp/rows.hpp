#pragma once
// The VJPs of the row ops, in closed form (not re-derived through primitives):
//   softmax y along an axis:  dx = y (dy - sum(dy y))
//   log_softmax y:            dx = dy - exp(y) sum(dy)
//   layer_norm, x^ = (x - mean) r with r = 1 / sqrt(var + eps), y = x^ gamma + beta:
//     g = dy gamma,  dx = r (g - mean(g) - x^ mean(g x^)),
//     dgamma = sum of dy x^ and dbeta = sum of dy over every axis but the normalized one.
// The sums and means are along the axis, repeated back over it.

#include <cstdint>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

// v reduced by `kind` along `axis` and repeated back over it.
inline value along_and_back(ops::reduce_kind kind, const value& v, std::uint32_t axis) {
  const axis_ref a[1] = {axis_ref(std::size_t{axis})};
  const std::uint32_t removed[1] = {axis};
  return expand(v.owner().reduce(kind, v, a), v.shape(), removed);
}

inline void vjp(const softmax_op& op, const vjp_context& c) {
  const std::uint32_t axis = op.axis;
  if (op.log) {
    c.give(0, c.dy - graph::exp(c.y) * along_and_back(ops::reduce_kind::sum, c.dy, axis));
    return;
  }
  const value dot = along_and_back(ops::reduce_kind::sum, c.dy * c.y, axis);
  c.give(0, c.y * (c.dy - dot));
}

// p (over the normalized axis alone) repeated over the other axes of shape s.
inline value over_rows(const value& p, const nax::shape s, std::uint32_t axis) {
  std::vector<std::uint32_t> others;
  for (std::uint32_t a = 0; a < s.rank(); ++a)
    if (a != axis) others.push_back(a);
  return expand(p, s, others);
}

// v summed over every axis but `axis`, in the shape `target` (gamma's or beta's).
inline value sum_but(const value& v, std::uint32_t axis, const nax::shape target) {
  std::vector<axis_ref> others;
  for (std::size_t a = 0; a < v.shape().rank(); ++a)
    if (a != axis) others.push_back(a);
  const value s = others.empty() ? v : v.owner().reduce(ops::reduce_kind::sum, v, others);
  return reshaped(s, target);
}

inline void vjp(const layer_norm_op& ln, const vjp_context& c) {
  const std::uint32_t axis = ln.axis;
  const value x = c.operand(0);
  const nax::shape xs = x.shape();
  // The statistics again, as the kernel has them: the mean, then the mean squared deviation
  // (an RMSNorm subtracts no mean).
  const value centred = ln.centered ? x - along_and_back(ops::reduce_kind::mean, x, axis) : x;
  const value var = along_and_back(ops::reduce_kind::mean, centred * centred, axis);
  const value r = graph::rsqrt(var + ln.epsilon);
  const value normed = centred * r;
  std::size_t next = 1;
  const std::size_t gamma_at = ln.has_gamma ? next++ : 0, beta_at = ln.has_beta ? next++ : 0;
  const value g = ln.has_gamma ? c.dy * over_rows(c.operand(gamma_at), xs, axis) : c.dy;
  if (c.wants[0]) {
    const value mean_gx = along_and_back(ops::reduce_kind::mean, g * normed, axis);
    // Centered, the mean's own dependence on x takes g's mean off too.
    const value g_c = ln.centered ? g - along_and_back(ops::reduce_kind::mean, g, axis) : g;
    c.give(0, r * (g_c - normed * mean_gx));
  }
  if (ln.has_gamma && c.wants[gamma_at])
    c.give(gamma_at, sum_but(c.dy * normed, axis, c.shape_of(gamma_at)));
  if (ln.has_beta && c.wants[beta_at]) c.give(beta_at, sum_but(c.dy, axis, c.shape_of(beta_at)));
}

}  // namespace nax::graph::detail
