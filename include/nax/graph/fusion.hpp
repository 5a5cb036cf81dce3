#pragma once
// The level-1 fusion passes (seed 003): which builder nodes compile_program turns into one fused
// step. Shape-independent: every decision is made on symbolic shapes, once per graph.
//
//  - patterns first, each replaced by a kernel that exists: softmax (reduce_max, sub, exp, sum,
//    div) and layer_norm (mean, sub, square, mean, + eps, rsqrt, mul, * gamma, + beta) spelled
//    from primitives, in their common variants, become the row kernels; dot_general -> add(bias)
//    -> unary activation becomes one GEMM whose epilogue adds the bias and applies the activation
//    while the C tile is in L1. A pattern is not taken when one of its intermediates is used
//    outside it (or requested as a result), or when its reductions are over different axes.
//  - then generic elementwise groups: maximal connected sets of elementwise nodes over one
//    iteration shape (operands of other shapes are read broadcast, and so are explicit
//    broadcast nodes to that shape read only inside), grown from the last node back through its
//    operands. A member used outside the group becomes an extra result of the
//    fused step (one write, where splitting the group there would cost the same write and a
//    read back); a member whose joining would make a path leave the group and come back (a
//    cycle between fused steps) is left out.
//  - last, a group (or a single elementwise node) whose result only a reduction over a contiguous
//    run of its axes reads (trailing: row sums; leading: a sum over the batch), with no other
//    result, joins the reduction: the fused step computes the group a piece at a time into a
//    buffer in cache and reduces it there (the group's result is never written to memory).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <nax/core/small_vector.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/decomposition.hpp>

namespace nax::graph {

/// Which fusion passes compile runs (compile_options::fuse).
struct fusion_options {
  bool elementwise = true;  // groups of elementwise ops -> one elementwise program
  bool dense = true;        // dot_general -> add(bias) -> activation -> one GEMM with epilogue
  bool softmax = true;      // softmax from primitives -> the softmax kernel
  bool layer_norm = true;   // layer_norm from primitives -> the layer_norm kernel
  bool reduce = true;       // elementwise group -> reduction over a run of its axes -> one step
};

/// A set of builder nodes that becomes one step. The step's kind, code, ints and scalar follow
/// its kind:
///  - elementwise: op_kind::fused_elementwise.
///  - reduce: op_kind::fused_reduce; code, ints: the reduction's (its kind, its axes, a
///    contiguous ascending run of the group's shape's).
///  - dense: op_kind::fused_dense; ints: the dot_general's; code: the activation's op index, or
///    no_activation; args: lhs, rhs, then the bias if there is one.
///  - softmax: op_kind::softmax, ints {axis}; args: x.
///  - layer_norm: op_kind::layer_norm, ints {axis, has gamma, has beta}, scalar epsilon; args:
///    x, then gamma and beta where present.
/// After those, args hold every other node a member reads (the constants of a pattern).
struct fusion_group {
  fusion_kind kind = fusion_kind::elementwise;
  op_kind step_kind = op_kind::fused_elementwise;
  std::uint8_t code = 0;
  nax::detail::small_vector<std::int32_t, 6> ints;
  double scalar = 0;
  std::vector<node_id> members;  // ascending (a topological order)
  node_id root = 0;              // the member whose value is the step's result
  std::vector<node_id> extra;    // other members whose values are used outside, ascending
  std::vector<node_id> args;     // the nodes outside the group its members read, in first use
};

inline constexpr std::uint8_t no_activation = 255;

namespace detail {

inline constexpr std::int32_t unassigned = -1;

class fusion_pass {
 public:
  fusion_pass(const builder& g, const std::vector<bool>& live, std::span<const value> outputs)
      : nodes_(g.nodes()),
        live_(live),
        users_(nodes_.size()),
        requested_(nodes_.size(), false),
        group_of_(nodes_.size(), unassigned) {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (live_[i])
        for (node_id in : nodes_[i].inputs) users_[in].push_back(static_cast<node_id>(i));
    for (const value& v : outputs) requested_[v.id()] = true;
  }

  std::vector<fusion_group> run(const fusion_options& o) {
    for (std::size_t i = nodes_.size(); i-- > 0;) {
      if (!live_[i] || group_of_[i] != unassigned) continue;
      const auto id = static_cast<node_id>(i);
      if (o.layer_norm && try_layer_norm(id)) continue;
      if (o.softmax) (void)try_softmax(id);
    }
    if (o.dense)
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (live_[i] && group_of_[i] == unassigned) (void)try_dense(static_cast<node_id>(i));
    if (o.elementwise)
      for (std::size_t i = nodes_.size(); i-- > 0;)
        if (live_[i] && group_of_[i] == unassigned) grow_elementwise(static_cast<node_id>(i));
    if (o.reduce)
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (live_[i] && group_of_[i] == unassigned) try_reduce(static_cast<node_id>(i));
    for (fusion_group& gr : groups_) finish(gr);
    return std::move(groups_);
  }

 private:
  const node& at(node_id i) const { return nodes_[i]; }

  bool is_ew(node_id i, std::size_t op) const {
    return at(i).kind == op_kind::elementwise && at(i).code == op;
  }
  template <class Op>
  bool is(node_id i) const {
    return is_ew(i, elementwise_index<Op>);
  }
  bool is_reduce(node_id i, reduce_kind k, std::int32_t axis) const {
    const node& n = at(i);
    return n.kind == op_kind::reduce && n.code == static_cast<std::uint8_t>(k) &&
           n.ints.size() == 1 && n.ints[0] == axis;
  }
  bool is_constant(node_id i, double v) const {
    return at(i).kind == op_kind::constant && at(i).scalar == v;
  }
  static bool same_dims(const nax::shape& a, const nax::shape& b) {
    return a.rank() == b.rank() && std::equal(a.dims().begin(), a.dims().end(), b.dims().begin());
  }
  bool free(node_id i) const { return live_[i] && group_of_[i] == unassigned; }

  // Takes `members` as a group if none of them but `root` is used outside it or requested.
  bool take(fusion_group gr, std::vector<node_id> members, node_id root) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    for (node_id m : members) {
      if (!free(m)) return false;
      if (m == root) continue;
      if (requested_[m]) return false;
      for (node_id u : users_[m])
        if (!std::binary_search(members.begin(), members.end(), u)) return false;
    }
    gr.members = std::move(members);
    gr.root = root;
    for (node_id m : gr.members) group_of_[m] = static_cast<std::int32_t>(groups_.size());
    lowest_member_ = std::min(lowest_member_, gr.members.front());
    groups_.push_back(std::move(gr));
    return true;
  }

  // --- softmax: y = e / sum(e) or e * (1 / sum(e)), e = exp(x - reduce_max(x)) or exp(x) -----

  bool try_softmax(node_id y) {
    const node& yn = at(y);
    if (yn.kind != op_kind::elementwise || yn.inputs.size() != 2) return false;
    std::vector<node_id> members{y};
    node_id e = 0, s = 0;
    if (is<ops::div>(y)) {
      e = yn.inputs[0];
      s = yn.inputs[1];
    } else if (is<ops::mul>(y)) {
      for (int swap = 0; swap < 2 && members.size() == 1; ++swap) {
        const node_id a = yn.inputs[swap], r = yn.inputs[1 - swap];
        if (is<ops::div>(r) && is_constant(at(r).inputs[0], 1.0)) {
          e = a;
          s = at(r).inputs[1];
          members.push_back(r);
        }
      }
      if (members.size() == 1) return false;
    } else {
      return false;
    }
    if (!is<ops::exp>(e) || at(s).kind != op_kind::reduce || at(s).inputs[0] != e ||
        at(s).ints.size() != 1 || !is_reduce(s, reduce_kind::sum, at(s).ints[0]))
      return false;
    const std::int32_t axis = at(s).ints[0];
    members.push_back(e);
    members.push_back(s);
    node_id x = at(e).inputs[0];
    if (is<ops::sub>(x)) {
      const node_id d = x, m = at(d).inputs[1];
      if (is_reduce(m, reduce_kind::max, axis) && at(m).inputs[0] == at(d).inputs[0]) {
        members.push_back(d);
        members.push_back(m);
        x = at(d).inputs[0];
      }
    }
    const nax::shape& xs = at(x).shape;
    if (!detail::is_floating(xs.dtype()) || !same_dims(at(y).shape, xs) ||
        !same_dims(at(e).shape, xs) || at(y).shape.dtype() != xs.dtype())
      return false;
    fusion_group gr;
    gr.kind = fusion_kind::softmax;
    gr.step_kind = op_kind::softmax;
    gr.ints.push_back(axis);
    gr.args.push_back(x);
    return take(std::move(gr), std::move(members), y);
  }

  // --- layer_norm -------------------------------------------------------------------------------

  struct ln_match {
    std::vector<node_id> members;
    node_id x = 0, gamma = 0, beta = 0;
    bool has_gamma = false, has_beta = false;
    std::int32_t axis = 0;
    double epsilon = 0;
  };

  // A per-feature parameter of x's `axis`: rank 1, that axis, x's dtype; not in the pattern.
  bool is_feature_param(node_id p, const ln_match& m) const {
    if (std::find(m.members.begin(), m.members.end(), p) != m.members.end()) return false;
    const nax::shape& ps = at(p).shape;
    const nax::shape& xs = at(m.x).shape;
    return ps.rank() == 1 && ps.dtype() == xs.dtype() &&
           ps[0] == xs[static_cast<std::size_t>(m.axis)] && all_named(ps) && all_named(xs);
  }

  // n = (x - mean(x)) * rsqrt(var + eps), or (x - mean) / sqrt(var + eps), with
  // var = mean((x - mean)^2) (d * d or pow(d, 2)); eps optional.
  bool match_norm(node_id n, ln_match& m) const {
    const node& nn = at(n);
    if (nn.kind != op_kind::elementwise || nn.inputs.size() != 2) return false;
    std::vector<node_id> mem{n};
    node_id d = 0, ve = 0;
    bool found = false;
    if (is<ops::mul>(n)) {
      for (int swap = 0; swap < 2 && !found; ++swap) {
        const node_id a = nn.inputs[swap], r = nn.inputs[1 - swap];
        if (is<ops::rsqrt>(r)) {
          d = a;
          ve = at(r).inputs[0];
          mem.push_back(r);
          found = true;
        }
      }
    } else if (is<ops::div>(n) && is<ops::sqrt>(nn.inputs[1])) {
      d = nn.inputs[0];
      ve = at(nn.inputs[1]).inputs[0];
      mem.push_back(nn.inputs[1]);
      found = true;
    }
    if (!found || !is<ops::sub>(d)) return false;
    const node_id x = at(d).inputs[0], mu = at(d).inputs[1];
    if (at(mu).kind != op_kind::reduce || at(mu).ints.size() != 1 ||
        !is_reduce(mu, reduce_kind::mean, at(mu).ints[0]) || at(mu).inputs[0] != x)
      return false;
    const std::int32_t axis = at(mu).ints[0];
    double eps = 0;
    node_id var = ve;
    if (is<ops::add>(ve)) {
      const node_id a = at(ve).inputs[0], b = at(ve).inputs[1];
      const node_id c = at(a).kind == op_kind::constant ? a : b;
      if (at(c).kind != op_kind::constant) return false;
      eps = at(c).scalar;
      var = c == a ? b : a;
      mem.push_back(ve);
    }
    if (!is_reduce(var, reduce_kind::mean, axis)) return false;
    const node_id sq = at(var).inputs[0];
    const bool square =
        (is<ops::mul>(sq) && at(sq).inputs[0] == d && at(sq).inputs[1] == d) ||
        (is<ops::pow>(sq) && at(sq).inputs[0] == d && is_constant(at(sq).inputs[1], 2));
    if (!square) return false;
    const nax::shape& xs = at(x).shape;
    if (!detail::is_floating(xs.dtype()) || !same_dims(at(n).shape, xs) ||
        !same_dims(at(d).shape, xs) || at(n).shape.dtype() != xs.dtype())
      return false;
    for (node_id k : {var, sq, d, mu}) mem.push_back(k);
    m.members.insert(m.members.end(), mem.begin(), mem.end());
    m.x = x;
    m.axis = axis;
    m.epsilon = eps;
    return true;
  }

  // t = n * gamma (either order), or n.
  bool match_scale(node_id t, ln_match& m) const {
    if (is<ops::mul>(t))
      for (int swap = 0; swap < 2; ++swap) {
        ln_match c = m;
        const node_id a = at(t).inputs[swap], p = at(t).inputs[1 - swap];
        if (match_norm(a, c) && is_feature_param(p, c) && same_dims(at(t).shape, at(c.x).shape)) {
          c.members.push_back(t);
          c.gamma = p;
          c.has_gamma = true;
          m = std::move(c);
          return true;
        }
      }
    return match_norm(t, m);
  }

  bool try_layer_norm(node_id y) {
    if (at(y).kind != op_kind::elementwise) return false;
    ln_match m;
    bool found = false;
    if (is<ops::add>(y))
      for (int swap = 0; swap < 2 && !found; ++swap) {
        ln_match c;
        const node_id a = at(y).inputs[swap], p = at(y).inputs[1 - swap];
        if (match_scale(a, c) && is_feature_param(p, c) && same_dims(at(y).shape, at(c.x).shape)) {
          c.members.push_back(y);
          c.beta = p;
          c.has_beta = true;
          m = std::move(c);
          found = true;
        }
      }
    if (!found && !match_scale(y, m)) return false;
    fusion_group gr;
    gr.kind = fusion_kind::layer_norm;
    gr.step_kind = op_kind::layer_norm;
    gr.ints = {m.axis, m.has_gamma ? 1 : 0, m.has_beta ? 1 : 0};
    gr.scalar = m.epsilon;
    gr.args.push_back(m.x);
    if (m.has_gamma) gr.args.push_back(m.gamma);
    if (m.has_beta) gr.args.push_back(m.beta);
    return take(std::move(gr), std::move(m.members), y);
  }

  // --- dense: dot_general -> add(bias) -> unary activation --------------------------------------

  // The node's only user, if it has exactly one and is not requested.
  std::optional<node_id> only_user(node_id i) const {
    if (requested_[i] || users_[i].size() != 1) return std::nullopt;
    return users_[i][0];
  }

  bool try_dense(node_id dot) {
    const node& dn = at(dot);
    if (dn.kind != op_kind::dot_general || !detail::is_floating(dn.shape.dtype())) return false;
    const node& bn = at(dn.inputs[1]);
    const auto nc = static_cast<std::size_t>(dn.ints[0]);
    const auto nb = static_cast<std::size_t>(dn.ints[1 + 2 * nc]);
    const std::size_t nfree = bn.shape.rank() - nc - nb;  // b's free axes: the result's last
    std::vector<node_id> members{dot};
    node_id cur = dot;
    fusion_group gr;
    gr.kind = fusion_kind::dense;
    gr.step_kind = op_kind::fused_dense;
    gr.ints = dn.ints;
    gr.code = no_activation;
    gr.args = {dn.inputs[0], dn.inputs[1]};
    if (auto u = only_user(cur); u && is<ops::add>(*u) && same_dims(at(*u).shape, dn.shape)) {
      const node_id bias = at(*u).inputs[0] == cur ? at(*u).inputs[1] : at(*u).inputs[0];
      const nax::shape& bs = at(bias).shape;
      // (Never one of the product's operands: the step's third argument is the bias.)
      bool fits = bias != cur && bias != dn.inputs[0] && bias != dn.inputs[1] &&
                  bs.dtype() == dn.shape.dtype() && bs.rank() == nfree && all_named(bs) &&
                  all_named(dn.shape);
      for (std::size_t j = 0; fits && j < nfree; ++j)
        fits = bs[j] == dn.shape[dn.shape.rank() - nfree + j];
      if (fits) {
        members.push_back(*u);
        gr.args.push_back(bias);
        cur = *u;
      }
    }
    if (auto v = only_user(cur); v && at(*v).kind == op_kind::elementwise &&
                                 elementwise_arity(at(*v).code) == 1 && !is<ops::logical_not>(*v) &&
                                 same_dims(at(*v).shape, dn.shape) &&
                                 at(*v).shape.dtype() == dn.shape.dtype()) {
      members.push_back(*v);
      gr.code = at(*v).code;
      cur = *v;
    }
    if (members.size() == 1) return false;
    return take(std::move(gr), std::move(members), cur);
  }

  // --- generic elementwise groups ---------------------------------------------------------------

  // Whether a walk from `starts` (users outside the group being grown, whose members are
  // flagged in in_group_ and are at most `root`) comes back into it: a path leaving the group and
  // re-entering, a cycle once fused steps are single nodes. Other groups are crossed as whole
  // units. Ids grow along edges, so past `root` the walk can only come back by entering a group
  // with a member at most `root`; without such a group it stops there.
  bool comes_back(const std::vector<node_id>& starts, node_id root) {
    const bool bounded = lowest_member_ > root;
    ++generation_;
    std::vector<node_id>& stack = stack_;
    stack.assign(starts.begin(), starts.end());
    while (!stack.empty()) {
      const node_id x = stack.back();
      stack.pop_back();
      if (in_group_[x]) return true;
      if ((bounded && x > root) || seen_[x] == generation_) continue;
      seen_[x] = generation_;
      for (node_id u : users_[x]) stack.push_back(u);
      const std::int32_t h = group_of_[x];
      if (h != unassigned && group_seen_[static_cast<std::size_t>(h)] != generation_) {
        group_seen_[static_cast<std::size_t>(h)] = generation_;
        for (node_id m : groups_[static_cast<std::size_t>(h)].members) stack.push_back(m);
      }
    }
    return false;
  }

  void grow_elementwise(node_id root) {
    if (at(root).kind != op_kind::elementwise) return;
    const nax::shape& iter = at(root).shape;
    in_group_.resize(nodes_.size(), 0);
    seen_.resize(nodes_.size(), 0);
    group_seen_.resize(groups_.size() + 1, 0);
    std::vector<node_id> members{root};
    in_group_[root] = 1;
    // The users of members outside the group: where a path leaving it starts.
    std::vector<node_id> exits(users_[root].begin(), users_[root].end()), trial;
    std::vector<node_id> work;
    for (node_id in : at(root).inputs) work.push_back(in);
    while (!work.empty()) {
      const node_id u = work.back();
      work.pop_back();
      if (!free(u) || in_group_[u] || !same_dims(at(u).shape, iter)) continue;
      // A broadcast to the iteration shape joins when only members read it: the program then
      // reads its operand through its axis map (it never becomes a result of the step).
      const bool bcast = at(u).kind == op_kind::broadcast;
      if (bcast) {
        bool inside = !requested_[u];
        for (node_id e : users_[u]) inside = inside && in_group_[e];
        if (!inside) continue;
      } else if (at(u).kind != op_kind::elementwise) {
        continue;
      }
      in_group_[u] = 1;
      trial.clear();
      for (node_id e : exits)
        if (e != u) trial.push_back(e);
      for (node_id e : users_[u])
        if (!in_group_[e]) trial.push_back(e);
      if (comes_back(trial, root)) {
        in_group_[u] = 0;
        continue;
      }
      exits.swap(trial);
      members.insert(std::upper_bound(members.begin(), members.end(), u), u);
      if (!bcast)  // (a broadcast's operand has another shape: never a member)
        for (node_id in : at(u).inputs) work.push_back(in);
    }
    for (node_id m : members) in_group_[m] = 0;
    if (members.size() < 2) return;
    fusion_group gr;
    gr.kind = fusion_kind::elementwise;
    gr.step_kind = op_kind::fused_elementwise;
    gr.members = std::move(members);
    gr.root = root;
    for (node_id m : gr.members) group_of_[m] = static_cast<std::int32_t>(groups_.size());
    lowest_member_ = std::min(lowest_member_, gr.members.front());
    groups_.push_back(std::move(gr));
  }

  // --- an elementwise group into the reduction that alone reads it ------------------------------

  void try_reduce(node_id r) {
    const node& rn = at(r);
    if (rn.kind != op_kind::reduce || !detail::is_floating(rn.shape.dtype())) return;
    const node_id e = rn.inputs[0];
    const node& en = at(e);
    if (en.kind != op_kind::elementwise || !live_[e] || requested_[e] || users_[e].size() != 1)
      return;
    // The reduced axes are a contiguous run (ints are ascending): the kernel sees the group's
    // result as [outer, reduced, inner].
    const std::size_t rank = en.shape.rank(), k = rn.ints.size();
    if (k == 0 || k > rank) return;
    for (std::size_t j = 1; j < k; ++j)
      if (rn.ints[j] != rn.ints[j - 1] + 1) return;
    std::int32_t gi = group_of_[e];
    if (gi == unassigned) {  // a single elementwise node
      fusion_group gr;
      gr.members = {e};
      gr.root = e;
      gi = static_cast<std::int32_t>(groups_.size());
      group_of_[e] = gi;
      lowest_member_ = std::min(lowest_member_, e);
      groups_.push_back(std::move(gr));
    }
    fusion_group& gr = groups_[static_cast<std::size_t>(gi)];
    if (gr.kind != fusion_kind::elementwise || gr.root != e) return;
    for (node_id m : gr.members) {  // no member but e is read outside or requested
      if (m == e) continue;
      if (requested_[m]) return;
      for (node_id u : users_[m])
        if (group_of_[u] != gi) return;
    }
    // Joining r, the only reader of the group, cannot make a cycle: every path out of the
    // group went through r.
    gr.kind = fusion_kind::reduce;
    gr.step_kind = op_kind::fused_reduce;
    gr.code = rn.code;
    gr.ints = rn.ints;
    gr.members.push_back(r);  // r follows every member
    gr.root = r;
    group_of_[r] = gi;
  }

  // Extra results and arguments: patterns set their leading arguments themselves (their kernels'
  // operands); the other nodes the members read (constants: epsilon, 1 of 1 / sum) follow, so
  // the decomposition names every operand.
  void finish(fusion_group& gr) const {
    auto member = [&](node_id i) {
      return std::binary_search(gr.members.begin(), gr.members.end(), i);
    };
    for (node_id m : gr.members) {
      if (m == gr.root) continue;
      bool outside = requested_[m];
      for (node_id u : users_[m]) outside = outside || !member(u);
      if (outside) gr.extra.push_back(m);
    }
    for (node_id m : gr.members)
      for (node_id in : at(m).inputs)
        if (!member(in) && std::find(gr.args.begin(), gr.args.end(), in) == gr.args.end())
          gr.args.push_back(in);
  }

  std::span<const node> nodes_;
  const std::vector<bool>& live_;
  std::vector<std::vector<node_id>> users_;
  std::vector<bool> requested_;
  std::vector<std::int32_t> group_of_;
  std::vector<fusion_group> groups_;
  // Scratch of the elementwise pass's walks (generation marks: no clearing between walks).
  std::vector<char> in_group_;
  std::vector<std::uint32_t> seen_, group_seen_;
  std::vector<node_id> stack_;
  std::uint32_t generation_ = 0;
  node_id lowest_member_ = std::numeric_limits<node_id>::max();  // over every group made
};

}  // namespace detail

/// The fusion groups of the live nodes of `g` (live[i]: node i is needed for `outputs`), each a
/// set of nodes with no path leaving it and coming back (a cycle once fused).
inline std::vector<fusion_group> find_fusion_groups(const builder& g, const std::vector<bool>& live,
                                                    std::span<const value> outputs,
                                                    const fusion_options& options) {
  return detail::fusion_pass(g, live, outputs).run(options);
}

}  // namespace nax::graph
