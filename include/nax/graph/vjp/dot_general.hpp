#pragma once
// The VJP of dot_general: two dot_generals, batch axes kept. With C = A . B (C's axes: the batch
// pairs, A's free axes, B's free axes), dA is dC contracted with B over B's free axes and dB is
// A contracted with dC over A's free axes; each is then transposed into its operand's axis
// order and given its exact shape (a contracted axis takes its name from the other operand).

#include <algorithm>
#include <cstdint>
#include <vector>

#include <nax/graph/vjp/common.hpp>

namespace nax::graph::detail {

// The free axes of an operand of `rank` axes: those in no pair of `paired`.
inline std::vector<std::uint32_t> free_axes(std::size_t rank,
                                            std::span<const std::uint32_t> paired) {
  std::vector<std::uint32_t> f;
  for (std::uint32_t a = 0; a < rank; ++a)
    if (std::find(paired.begin(), paired.end(), a) == paired.end()) f.push_back(a);
  return f;
}

// The rank of `a` among the values of `of` in ascending order.
inline std::size_t rank_among(std::uint32_t a, std::vector<std::uint32_t> of) {
  std::sort(of.begin(), of.end());
  return static_cast<std::size_t>(std::find(of.begin(), of.end(), a) - of.begin());
}

// The cotangent of one operand `self` (side 0: lhs, 1: rhs) of C = dot_general(lhs, rhs).
inline value dot_operand_cotangent(const vjp_context& c, const dot_general_op& d, int side) {
  const value self = c.operand(side), other = c.operand(1 - side);
  const nax::shape ss = self.shape();
  std::vector<std::uint32_t> s_batch, o_batch, s_con, o_con;
  for (const axis_pair_index& p : d.batch) {
    s_batch.push_back(side == 0 ? p.lhs : p.rhs);
    o_batch.push_back(side == 0 ? p.rhs : p.lhs);
  }
  for (const axis_pair_index& p : d.contract) {
    s_con.push_back(side == 0 ? p.lhs : p.rhs);
    o_con.push_back(side == 0 ? p.rhs : p.lhs);
  }
  std::vector<std::uint32_t> s_paired = s_batch, o_paired = o_batch;
  s_paired.insert(s_paired.end(), s_con.begin(), s_con.end());
  o_paired.insert(o_paired.end(), o_con.begin(), o_con.end());
  const std::vector<std::uint32_t> s_free = free_axes(ss.rank(), s_paired),
                                   o_free = free_axes(other.shape().rank(), o_paired);
  const std::size_t nb = s_batch.size(), lhs_free = side == 0 ? s_free.size() : o_free.size();
  // dC's axes: batch k at k, lhs's free axes from nb, rhs's after them.
  const std::size_t o_first = side == 0 ? nb + lhs_free : nb;
  std::vector<axis_pair> contract, batch;
  for (std::size_t j = 0; j < o_free.size(); ++j)
    contract.push_back({axis_ref(o_first + j), axis_ref(std::size_t{o_free[j]})});
  for (std::size_t k = 0; k < nb; ++k)
    batch.push_back({axis_ref(k), axis_ref(std::size_t{o_batch[k]})});
  // dot_general(dC, other): the batch axes, self's free axes (dC's free axes), then other's
  // contracted axes in other's order.
  const value g = c.b.dot_general(c.dy, other, contract, batch);
  std::vector<axis_ref> perm(ss.rank(), axis_ref(std::size_t{0}));
  for (std::size_t k = 0; k < nb; ++k) perm[s_batch[k]] = k;
  for (std::size_t j = 0; j < s_free.size(); ++j) perm[s_free[j]] = nb + j;
  for (std::size_t k = 0; k < s_con.size(); ++k)
    perm[s_con[k]] = nb + s_free.size() + rank_among(o_con[k], o_con);
  bool moved = false;
  for (std::size_t i = 0; i < perm.size(); ++i) moved = moved || perm[i].index != i;
  return reshaped(moved ? c.b.transpose(g, perm) : g, ss);
}

inline void vjp_dot_general(const vjp_context& c) {
  const dot_general_op& d = c.n.as<dot_general_op>();
  for (int side = 0; side < 2; ++side)
    if (c.wants[side]) c.give(side, dot_operand_cotangent(c, d, side));
}

}  // namespace nax::graph::detail
