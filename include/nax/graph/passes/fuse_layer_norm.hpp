#pragma once
// The layer_norm fusion pass: layer_norm spelled from primitives, in its common variants,
//   d = x - mean(x, a);  var = mean(d * d or pow(d, 2), a);
//   n = d * rsqrt(var [+ eps]) or d / sqrt(var [+ eps]);  y = n [* gamma] [+ beta]
// and RMSNorm, the same with d = x (no mean subtracted: `centered` false),
// (gamma, beta: rank-1 parameters over axis a, either operand order) becomes one layer_norm node,
// which holds whether gamma and beta are present and how the rest was spelled: its kernel gives
// the primitives' bits (kernels/spelled_rows.hpp). Not taken when an
// intermediate is read outside the pattern or is an output.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void fuse_layer_norm(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <optional>
#include <vector>

#include <nax/core/broadcast.hpp>
#include <nax/graph/passes/fusion_group.hpp>
#include <nax/graph/passes/pattern.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

struct ln_match {
  std::vector<node_id> members;
  node_id x = 0, gamma = 0, beta = 0;
  bool has_gamma = false, has_beta = false;
  bool square_by_pow = false, divide_by_sqrt = false, centered = true;
  std::uint32_t axis = 0;
  double epsilon = 0;
};

// A per-feature parameter of x's `axis`: rank 1, that axis, x's dtype; not in the pattern.
inline bool is_feature_param(const pattern_matcher& m, node_id p, const ln_match& match) {
  if (std::find(match.members.begin(), match.members.end(), p) != match.members.end()) return false;
  const nax::shape& ps = m.at(p).shape;
  const nax::shape& xs = m.at(match.x).shape;
  return ps.rank() == 1 && ps.dtype() == xs.dtype() && ps[0] == xs[match.axis] &&
         all_axes_named(ps) && all_axes_named(xs);
}

// n = (x - mean(x)) * rsqrt(var + eps), or (x - mean) / sqrt(var + eps), with
// var = mean((x - mean)^2) (d * d or pow(d, 2)); eps optional. Or RMSNorm: d = x, when d is not
// x - mean(x) or var is not its square's mean (then the mean of x * x, of the x multiplied).
inline bool match_norm(const pattern_matcher& m, node_id n, ln_match& match) {
  const node& nn = m.at(n);
  if (!nn.is<elementwise_op>() || nn.inputs.size() != 2) return false;
  std::vector<node_id> mem{n};
  node_id d = 0, ve = 0;
  bool found = false;
  if (m.is(n, ops::id::mul)) {
    for (int swap = 0; swap < 2 && !found; ++swap) {
      const node_id a = nn.inputs[swap], r = nn.inputs[1 - swap];
      if (m.is(r, ops::id::rsqrt)) {
        d = a;
        ve = m.at(r).inputs[0];
        mem.push_back(r);
        found = true;
      }
    }
  } else if (m.is(n, ops::id::div) && m.is(nn.inputs[1], ops::id::sqrt)) {
    d = nn.inputs[0];
    ve = m.at(nn.inputs[1]).inputs[0];
    mem.push_back(nn.inputs[1]);
    found = true;
  }
  if (!found) return false;
  double eps = 0;
  node_id var = ve;
  if (m.is(ve, ops::id::add)) {
    const node_id a = m.at(ve).inputs[0], b = m.at(ve).inputs[1];
    const node_id c = m.at(a).is<constant_op>() ? a : b;
    if (!m.at(c).is<constant_op>()) return false;
    eps = m.at(c).as<constant_op>().value;
    var = c == a ? b : a;
    mem.push_back(ve);
  }
  const auto axis = m.single_axis_reduce(var, ops::reduce_kind::mean);
  if (!axis) return false;
  const node_id sq = m.at(var).inputs[0];
  const bool square =
      (m.is(sq, ops::id::mul) && m.at(sq).inputs[0] == d && m.at(sq).inputs[1] == d) ||
      (m.is(sq, ops::id::pow) && m.at(sq).inputs[0] == d && m.is_constant(m.at(sq).inputs[1], 2));
  if (!square) return false;
  // Centered: d = x - mean(x) over the same axis; otherwise d is x itself (RMSNorm).
  node_id x = d, mu = 0;
  bool centered = false;
  if (m.is(d, ops::id::sub)) {
    const node_id c = m.at(d).inputs[0], r = m.at(d).inputs[1];
    if (m.single_axis_reduce(r, ops::reduce_kind::mean) == axis && m.at(r).inputs[0] == c) {
      x = c;
      mu = r;
      centered = true;
    }
  }
  const nax::shape& xs = m.at(x).shape;
  if (!ops::is_floating(xs.dtype()) || !m.same_dims(m.at(n).shape, xs) ||
      !m.same_dims(m.at(d).shape, xs) || m.at(n).shape.dtype() != xs.dtype())
    return false;
  // The mean and the variance each go back along the axis they were taken over.
  if ((centered && !m.broadcasts_back(mu, xs, *axis)) || !m.broadcasts_back(var, xs, *axis))
    return false;
  mem.push_back(var);
  mem.push_back(sq);
  if (centered) {
    mem.push_back(d);
    mem.push_back(mu);
  }
  // Every op in x's type, as the kernel computes (an op in another type would round otherwise).
  for (node_id k : mem)
    if (m.at(k).shape.dtype() != xs.dtype()) return false;
  match.members.insert(match.members.end(), mem.begin(), mem.end());
  match.x = x;
  match.axis = *axis;
  match.square_by_pow = m.is(sq, ops::id::pow);
  match.divide_by_sqrt = m.is(n, ops::id::div);
  match.centered = centered;
  match.epsilon = eps;
  return true;
}

// t = inner `op` p in either operand order, where `inner` matches its operand (extending a copy
// of `match`) and p is a feature parameter over the matched x: then `match` takes the extended
// match with t among its members, and p is returned.
inline std::optional<node_id> match_with_parameter(const pattern_matcher& m, node_id t, ops::id op,
                                                   ln_match& match,
                                                   bool (*inner)(const pattern_matcher&, node_id,
                                                                 ln_match&)) {
  if (!m.is(t, op)) return std::nullopt;
  for (int swap = 0; swap < 2; ++swap) {
    ln_match c = match;
    const node_id a = m.at(t).inputs[swap], p = m.at(t).inputs[1 - swap];
    if (inner(m, a, c) && is_feature_param(m, p, c) &&
        m.same_dims(m.at(t).shape, m.at(c.x).shape)) {
      c.members.push_back(t);
      match = std::move(c);
      return p;
    }
  }
  return std::nullopt;
}

// t = n * gamma (either order), or n.
inline bool match_scale(const pattern_matcher& m, node_id t, ln_match& match) {
  if (const auto gamma = match_with_parameter(m, t, ops::id::mul, match, match_norm)) {
    match.gamma = *gamma;
    match.has_gamma = true;
    return true;
  }
  return match_norm(m, t, match);
}

inline bool try_layer_norm(pattern_matcher& m, node_id y) {
  if (!m.at(y).is<elementwise_op>()) return false;
  ln_match match;
  if (const auto beta = match_with_parameter(m, y, ops::id::add, match, match_scale)) {
    match.beta = *beta;
    match.has_beta = true;
  } else if (!match_scale(m, y, match)) {
    return false;
  }
  fusion_group gr;
  gr.kind = fusion_kind::layer_norm;
  layer_norm_op op;
  op.axis = match.axis;
  op.epsilon = match.epsilon;
  op.has_gamma = match.has_gamma;
  op.has_beta = match.has_beta;
  op.primitives = true;
  op.square_by_pow = match.square_by_pow;
  op.divide_by_sqrt = match.divide_by_sqrt;
  op.centered = match.centered;
  gr.op = op;
  gr.args.push_back(match.x);
  if (match.has_gamma) gr.args.push_back(match.gamma);
  if (match.has_beta) gr.args.push_back(match.beta);
  return m.take(std::move(gr), std::move(match.members), y);
}

}  // namespace detail

NAX_RUNTIME_INLINE void fuse_layer_norm(ir& g) {
  std::vector<fusion_group> groups;
  {
    pattern_matcher m(g);
    for (node_id i = static_cast<node_id>(g.size()); i-- > 0;)
      if (m.free(i)) (void)detail::try_layer_norm(m, i);
    groups = m.finish();
  }
  replace_groups(g, groups);
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
