#pragma once
// The dense fusion pass: dot_general -> add(bias) -> unary activation (each step optional but
// one) becomes one fused_dense node: one GEMM whose epilogue adds the bias and applies the
// activation while a tile of the result is in L1. The bias has the product's trailing (rhs free)
// axes and is never one of the product's operands; each intermediate must have the next op as
// its only reader.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void fuse_dense(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/core/broadcast.hpp>
#include <nax/graph/passes/fusion_group.hpp>
#include <nax/graph/passes/pattern.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::passes {
namespace detail {

inline bool try_dense(pattern_matcher& m, node_id dot) {
  const node& dn = m.at(dot);
  if (!dn.is<dot_general_op>() || !ops::is_floating(dn.shape.dtype())) return false;
  const dot_general_op& dg = dn.as<dot_general_op>();
  const nax::shape& bs = m.at(dn.inputs[1]).shape;
  const std::size_t nfree = bs.rank() - dg.contract.size() - dg.batch.size();  // the result's last
  std::vector<node_id> members{dot};
  node_id cur = dot;
  fusion_group gr;
  gr.kind = fusion_kind::dense;
  fused_dense_op op;
  op.dot = dg;
  gr.args = {dn.inputs[0], dn.inputs[1]};
  if (auto u = m.only_user(cur);
      u && m.is(*u, ops::id::add) && m.same_dims(m.at(*u).shape, dn.shape)) {
    const node_id bias = m.at(*u).inputs[0] == cur ? m.at(*u).inputs[1] : m.at(*u).inputs[0];
    const nax::shape& bias_shape = m.at(bias).shape;
    bool fits = bias != cur && bias != dn.inputs[0] && bias != dn.inputs[1] &&
                bias_shape.dtype() == dn.shape.dtype() && bias_shape.rank() == nfree &&
                all_axes_named(bias_shape) && all_axes_named(dn.shape);
    for (std::size_t j = 0; fits && j < nfree; ++j)
      fits = bias_shape[j] == dn.shape[dn.shape.rank() - nfree + j];
    if (fits) {
      members.push_back(*u);
      gr.args.push_back(bias);
      op.has_bias = true;
      cur = *u;
    }
  }
  if (auto v = m.only_user(cur); v && m.at(*v).is<elementwise_op>()) {
    const ops::id act = m.at(*v).as<elementwise_op>().op;
    if (ops::arity(act) == 1 && act != ops::id::logical_not &&
        m.same_dims(m.at(*v).shape, dn.shape) && m.at(*v).shape.dtype() == dn.shape.dtype()) {
      members.push_back(*v);
      op.has_activation = true;
      op.activation = act;
      cur = *v;
    }
  }
  if (members.size() == 1) return false;
  gr.op = op;
  return m.take(std::move(gr), std::move(members), cur);
}

}  // namespace detail

NAX_RUNTIME_INLINE void fuse_dense(ir& g) {
  std::vector<fusion_group> groups;
  {
    pattern_matcher m(g);
    for (node_id i = 0; i < g.size(); ++i)
      if (m.free(i)) (void)detail::try_dense(m, i);
    groups = m.finish();
  }
  replace_groups(g, groups);
}

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
