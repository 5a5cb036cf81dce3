#pragma once
// Shape inference of dot_general: contracting pairs unify and go, batch pairs unify and lead,
// then lhs's free axes, then rhs's.

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of the contraction of nodes a and b of g over `contract` pairs, `batch` pairs
/// matched; nax::shape_error naming both operands and the axes that do not pair.
NAX_RUNTIME_INLINE node infer_dot_general(const ir& g, node_id a, node_id b,
                                          std::span<const axis_pair> contract,
                                          std::span<const axis_pair> batch);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/unify.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_dot_general(const ir& g, node_id a, node_id b,
                                          std::span<const axis_pair> contract,
                                          std::span<const axis_pair> batch) {
  constexpr std::string_view op = "dot_general";
  const nax::shape &as = g[a].shape, &bs = g[b].shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::dot_general(", as.to_string(), ", ", bs.to_string(),
                                   "): ", why...);
  };
  if (as.dtype() != bs.dtype())
    fail("element types differ: ", name(as.dtype()), " vs ", name(bs.dtype()));
  if (!ops::is_floating(as.dtype())) fail("needs f32 or f64 elements, not ", name(as.dtype()));
  std::vector<int> a_role(as.rank(), 0), b_role(bs.rank(), 0);  // 0 free, 1 contracted, 2 batch
  dot_general_op attrs;
  nax::detail::small_vector<dim, 6> out;
  auto pairs = [&](std::span<const axis_pair> ps, int role, axis_pairs& to) {
    for (const axis_pair& p : ps) {
      const std::size_t i = resolve_axis(op, 0, as, p.lhs), j = resolve_axis(op, 1, bs, p.rhs);
      if (a_role[i] || b_role[j])
        fail("axis ", a_role[i] ? i : j, " of operand ", a_role[i] ? 0 : 1, " is paired twice");
      a_role[i] = b_role[j] = role;
      dim d;
      try {
        d = unify_dims(as[i], bs[j]);
      } catch (const shape_error& e) {
        fail(role == 1 ? "contracting" : "batch", " axes ", i, " and ", j, ": ", e.what());
      }
      if (role == 2) out.push_back(d);
      to.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
    }
  };
  pairs(contract, 1, attrs.contract);
  pairs(batch, 2, attrs.batch);
  for (std::size_t i = 0; i < as.rank(); ++i)
    if (!a_role[i]) out.push_back(as[i]);
  for (std::size_t j = 0; j < bs.rank(); ++j)
    if (!b_role[j]) out.push_back(bs[j]);
  node n;
  n.op = std::move(attrs);
  n.inputs.push_back(a);
  n.inputs.push_back(b);
  n.shape = nax::shape(as.dtype(), std::span<const dim>(out.data(), out.size()));
  check_unique_names(n, op);
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
