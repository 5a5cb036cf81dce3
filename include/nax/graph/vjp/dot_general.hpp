#pragma once
// The VJP of dot_general: two dot_generals, batch axes kept. With C = A . B (C's axes: the batch
// pairs, A's free axes, B's free axes), dA is dC contracted with B over B's free axes and dB is
// A contracted with dC over A's free axes; each is then transposed into its operand's axis
// order and given its exact shape (a contracted axis takes its name from the other operand).

#include <algorithm>
#include <cstdint>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/vjp/common.hpp>

namespace nax::NAX_ISA::graph::detail {

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
  // Two ways to the same products: dot_general(dC, other) has the batch axes, self's free axes
  // (dC's), then other's contracted axes in other's order; dot_general(other, dC) has the batch
  // axes, other's contracted axes, then self's free axes. The one already in self's axis order
  // is taken (a weight [in, out] has its contracted axis first: no transpose of its gradient).
  auto order = [&](bool dc_first) {
    std::vector<axis_ref> perm(ss.rank(), axis_ref(std::size_t{0}));
    const std::size_t free_at = dc_first ? nb : nb + s_con.size(),
                      con_at = dc_first ? nb + s_free.size() : nb;
    for (std::size_t k = 0; k < nb; ++k) perm[s_batch[k]] = k;
    for (std::size_t j = 0; j < s_free.size(); ++j) perm[s_free[j]] = free_at + j;
    for (std::size_t k = 0; k < s_con.size(); ++k)
      perm[s_con[k]] = con_at + rank_among(o_con[k], o_con);
    return perm;
  };
  auto in_order = [](const std::vector<axis_ref>& perm) {
    for (std::size_t i = 0; i < perm.size(); ++i)
      if (perm[i].index != i) return false;
    return true;
  };
  const std::vector<axis_ref> dc_first = order(true), other_first = order(false);
  const bool swap = !in_order(dc_first) && in_order(other_first);
  std::vector<axis_pair> contract, batch;
  for (std::size_t j = 0; j < o_free.size(); ++j) {
    const axis_ref in_dc(o_first + j), in_other(std::size_t{o_free[j]});
    contract.push_back(swap ? axis_pair{in_other, in_dc} : axis_pair{in_dc, in_other});
  }
  for (std::size_t k = 0; k < nb; ++k) {
    const axis_ref in_dc(k), in_other(std::size_t{o_batch[k]});
    batch.push_back(swap ? axis_pair{in_other, in_dc} : axis_pair{in_dc, in_other});
  }
  const value g = swap ? c.b.dot_general(other, c.dy, contract, batch)
                       : c.b.dot_general(c.dy, other, contract, batch);
  const std::vector<axis_ref>& perm = swap ? other_first : dc_first;
  return reshaped(in_order(perm) ? g : c.b.transpose(g, perm), ss);
}

inline void vjp(const dot_general_op& d, const vjp_context& c) {
  for (int side = 0; side < 2; ++side)
    if (c.wants[side]) c.give(side, dot_operand_cotangent(c, d, side));
}

}  // namespace nax::graph::detail
