#pragma once
// The last step of level 1: the graph, after its passes, lowered to a linear program. Nodes
// become steps in the graph's (topological) order, values get their roles and lifetimes, and
// the outputs their values.

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::graph {

/// The program of g (whose outputs are set): parameters are inputs, in parameter order, used or
/// not; constants are constant values; every other node is one step (an extra_result node is
/// one of its fused node's results). The first request of a computed value is written in place
/// by its step; an input, a constant or a value requested again is copied into its result.
/// nax::shape_error for a parameter with an unnamed dynamic dimension (runs bind by name).
NAX_RUNTIME_INLINE program lower(const ir& g);

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <vector>

#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::graph {
namespace detail {

inline void check_bindable(const node& n) {
  for (std::size_t i = 0; i < n.shape.rank(); ++i)
    if (n.shape[i].is_dynamic() && !n.shape[i].has_name())
      nax::detail::throw_shape_error(
          "nax::graph::compile: parameter '", n.as<parameter_op>().name, "' (", n.shape.to_string(),
          "): dimension ", i,
          " is dynamic without a name; name it (e.g. \"batch\") so that runs can bind its extent");
}

}  // namespace detail

NAX_RUNTIME_INLINE program lower(const ir& g) {
  const std::span<const node> nodes = g.nodes();
  program p;
  p.values.reserve(nodes.size());  // one value per node, but fused steps' unread extra results
  p.steps.reserve(nodes.size());
  std::vector<value_index> value_of(nodes.size(), no_value);
  auto add_value = [&](node_id i, value_role role, std::uint32_t step) {
    program_value v;
    v.shape = nodes[i].shape;
    v.role = role;
    v.origin = nodes[i].origin;
    v.first_step = v.last_step = step;
    value_of[i] = static_cast<value_index>(p.values.size());
    p.values.push_back(std::move(v));
    return value_of[i];
  };

  // Inputs first, by parameter position.
  std::vector<node_id> params;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].kind() == op_kind::parameter) params.push_back(static_cast<node_id>(i));
  std::sort(params.begin(), params.end(), [&](node_id a, node_id b) {
    return nodes[a].as<parameter_op>().index < nodes[b].as<parameter_op>().index;
  });
  for (node_id i : params) {
    const node& n = nodes[i];
    detail::check_bindable(n);
    const value_index v = add_value(i, value_role::input, 0);
    p.values[v].index = static_cast<std::uint32_t>(p.input_names.size());
    p.input_names.push_back(n.as<parameter_op>().name);
    for (const dim& d : n.shape.dims())
      if (d.is_dynamic() &&
          std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), d.name()) == p.dynamic_axes.end())
        p.dynamic_axes.push_back(d.name());
  }
  std::sort(p.dynamic_axes.begin(), p.dynamic_axes.end(),
            [](axis_name a, axis_name b) { return a.view() < b.view(); });

  // A fused node's extra results, by index, so that its step lists them in order.
  std::vector<std::vector<node_id>> extras(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (const auto* e = nodes[i].op.get_if<extra_result_op>()) {
      std::vector<node_id>& list = extras[nodes[i].inputs[0]];
      if (list.size() < e->index) list.resize(e->index, ir::no_node);
      list[e->index - 1] = static_cast<node_id>(i);
    }

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const node& n = nodes[i];
    const auto id = static_cast<node_id>(i);
    switch (n.kind()) {
      case op_kind::parameter:
      case op_kind::extra_result: continue;  // an input; a value of its fused node's step
      case op_kind::constant: {
        const value_index v = add_value(id, value_role::constant, 0);
        p.values[v].scalar = n.as<constant_op>().value;
        continue;
      }
      default: break;
    }
    const auto step = static_cast<std::uint32_t>(p.steps.size());
    program_step s;
    s.op = n.op;
    s.fused = n.fused;
    s.origin = n.origin;
    for (node_id in : n.inputs) {
      s.args.push_back(value_of[in]);
      p.values[value_of[in]].last_step = step;
    }
    s.result = add_value(id, value_role::intermediate, step);
    // Every extra result of a fused step gets a value, read or not (the step writes them all).
    const std::size_t count = n.fused ? n.fused->results.size() - 1 : 0;
    for (std::size_t k = 0; k < count; ++k) {
      if (k < extras[i].size() && extras[i][k] != ir::no_node) {
        s.extra_results.push_back(add_value(extras[i][k], value_role::intermediate, step));
        continue;
      }
      const node& op = n.fused->ops[n.fused->results[k + 1]];
      program_value v;
      v.shape = op.shape;
      v.origin = op.origin;
      v.first_step = v.last_step = step;
      s.extra_results.push_back(static_cast<value_index>(p.values.size()));
      p.values.push_back(std::move(v));
    }
    p.steps.push_back(std::move(s));
  }

  for (node_id o : g.outputs()) {
    const value_index id = value_of[o];
    program_value& v = p.values[id];
    if (v.role == value_role::intermediate) {
      v.role = value_role::output;
      v.index = static_cast<std::uint32_t>(p.outputs.size());
    }
    p.outputs.push_back(id);
  }
  return p;
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
