#pragma once
// Shape inference of an elementwise op: the operands' element types by the op's dtype rule
// (ops/dtype_rules.hpp), their shapes broadcast by the one broadcast rule (core/broadcast.hpp).

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of elementwise op `op` over nodes `args` of g; nax::shape_error
/// "nax::graph::<op>(<operand shapes>): <why>" if the op does not take them.
NAX_RUNTIME_INLINE node infer_elementwise(const ir& g, ops::id op, std::span<const node_id> args);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/broadcast.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_elementwise(const ir& g, ops::id op, std::span<const node_id> args) {
  const std::string_view name = ops::name(op);
  const std::size_t arity = ops::arity(op);
  if (args.size() != arity)
    nax::detail::throw_shape_error("nax::graph::", name, ": takes ", arity, " operand",
                                   arity == 1 ? "" : "s", ", given ", args.size());
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::", name, "(", shapes_of(g, args), "): ", why...);
  };
  nax::detail::small_vector<dtype, 3> types;
  for (node_id a : args) types.push_back(g[a].shape.dtype());
  const std::span<const dtype> ts(types.data(), types.size());
  const ops::dtype_check c = ops::check_dtypes(op, ts);
  if (!c.ok()) fail(ops::describe(op, c, ts));
  node n;
  n.op = elementwise_op{op};
  for (node_id a : args) n.inputs.push_back(a);
  nax::shape s(c.result, {});
  try {
    for (node_id a : args) s = broadcast_shapes(s, g[a].shape, c.result);
  } catch (const shape_error& e) {
    fail(e.what());
  }
  n.shape = std::move(s);
  check_unique_names(n, name);
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
