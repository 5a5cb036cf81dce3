#pragma once
// Level 1 of the two-level JIT (seed 000): a builder's graph, compiled once per symbolic shape
// pattern into a linear program (seed 004's plan of steps): the nodes the outputs need, in
// topological order, each value with its role and the steps between which it must stay alive.
// Nothing here depends on extents; level 2 (nax/runtime/specialization.hpp) resolves them per
// axis binding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/decomposition.hpp>
#include <nax/graph/fusion.hpp>

namespace nax::graph {

/// Options of nax::graph::compile.
struct compile_options {
  /// Specializations kept per executable; the least recently used is dropped beyond this.
  std::size_t max_specializations = 64;
  /// Fusion passes at level 1 (nax/graph/fusion.hpp): `false` turns them all off, `fuse` each.
  bool fusion = true;
  fusion_options fuse = {};
};

using value_index = std::uint32_t;
inline constexpr value_index no_value = std::numeric_limits<value_index>::max();

/// What a value of the program is, which decides where its memory comes from at run time.
enum class value_role : std::uint8_t {
  input,         // the caller's tensor for parameter `index`
  constant,      // a scalar held by the specialization
  intermediate,  // a slice of the run's arena, live over [first_step, last_step]
  output,        // the caller's result `index`, written by the step that computes it
};

struct program_value {
  nax::shape shape;  // symbolic
  value_role role = value_role::intermediate;
  std::uint32_t index = 0;  // input: the parameter's position; output: the result's position
  double scalar = 0;        // a constant's value
  node_id origin = 0;       // the builder node
  std::uint32_t first_step = 0, last_step = 0;
};

/// One op of the linear plan: `result = kind(args...)` with the node's attributes.
struct program_step {
  op_kind kind = op_kind::elementwise;
  std::uint8_t code = 0;
  nax::detail::small_vector<value_index, 3> args;
  value_index result = no_value;
  nax::detail::small_vector<std::int32_t, 6> ints;
  double scalar = 0;
  node_id origin = 0;                                      // a fused step's: its result's node
  std::shared_ptr<const graph::external_kernel> kernel;  // op_kind::external's
  std::shared_ptr<const decomposition> fused;              // a fused step's: the ops it replaces
  std::vector<value_index> extra_results;                  // a fused step's values besides `result`
};

/// A compiled graph: values (inputs first, in the builder's parameter order), steps in execution
/// order, and for each requested result the value it is.
struct program {
  std::vector<program_value> values;
  std::vector<program_step> steps;
  std::vector<std::string> input_names;  // by parameter position
  std::vector<value_index> outputs;      // by result position
  std::vector<axis_name> dynamic_axes;   // the named dynamic axes of the inputs, sorted

  const program_value& input(std::size_t k) const { return values[k]; }
  std::size_t num_inputs() const { return input_names.size(); }
};

namespace detail {

inline void check_bindable(const node& n) {
  for (std::size_t i = 0; i < n.shape.rank(); ++i)
    if (n.shape[i].is_dynamic() && !n.shape[i].has_name())
      nax::detail::throw_shape_error(
          "nax::graph::compile: parameter '", n.name, "' (", n.shape.to_string(), "): dimension ",
          i,
          " is dynamic without a name; name it (e.g. \"batch\") so that runs can bind its extent");
}

}  // namespace detail

namespace detail {

// The decomposition of group `gr`: its members as ops over its arguments.
inline std::shared_ptr<const decomposition> decompose(std::span<const node> nodes,
                                                      const fusion_group& gr) {
  auto d = std::make_shared<decomposition>();
  d->kind = gr.kind;
  d->num_args = gr.args.size();
  auto operand = [&](node_id in) -> std::uint32_t {
    const auto m = std::lower_bound(gr.members.begin(), gr.members.end(), in);
    if (m != gr.members.end() && *m == in)
      return static_cast<std::uint32_t>(d->num_args + (m - gr.members.begin()));
    return static_cast<std::uint32_t>(std::find(gr.args.begin(), gr.args.end(), in) -
                                      gr.args.begin());
  };
  for (node_id m : gr.members) {
    const node& n = nodes[m];
    decomposed_op op;
    op.kind = n.kind;
    op.code = n.code;
    for (node_id in : n.inputs) op.inputs.push_back(operand(in));
    op.ints = n.ints;
    op.scalar = n.scalar;
    op.shape = n.shape;
    op.origin = m;
    d->ops.push_back(std::move(op));
  }
  auto position = [&](node_id m) {
    return static_cast<std::uint32_t>(std::lower_bound(gr.members.begin(), gr.members.end(), m) -
                                      gr.members.begin());
  };
  d->results.push_back(position(gr.root));
  for (node_id m : gr.extra) d->results.push_back(position(m));
  return d;
}

}  // namespace detail

/// Compiles the part of `g` that `outputs` need: dead nodes are dropped, the fusion passes
/// (options.fusion, options.fuse) group nodes into fused steps, the steps are put in a
/// topological order (the builder's, fused steps where their last input is ready), every
/// intermediate given its lifetime. Every parameter stays an input, used or not, so run() takes
/// them all in order.
inline program compile_program(const builder& g, std::span<const value> outputs,
                               const compile_options& options) {
  if (outputs.empty()) nax::detail::throw_shape_error("nax::graph::compile: no outputs requested");
  const std::span<const node> nodes = g.nodes();
  for (const value& v : outputs)
    if (&v.owner() != &g)
      nax::detail::throw_shape_error("nax::graph::compile: an output belongs to another builder");

  // Liveness from the outputs back (inputs of a node precede it).
  std::vector<bool> live(nodes.size(), false);
  for (const value& v : outputs) live[v.id()] = true;
  for (std::size_t i = nodes.size(); i-- > 0;)
    if (live[i])
      for (node_id in : nodes[i].inputs) live[in] = true;

  program p;
  std::vector<value_index> index_of(nodes.size(), no_value);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const node& n = nodes[i];
    if (n.kind != op_kind::parameter) continue;
    detail::check_bindable(n);
    program_value v;
    v.shape = n.shape;
    v.role = value_role::input;
    v.index = static_cast<std::uint32_t>(p.input_names.size());
    v.origin = static_cast<node_id>(i);
    index_of[i] = static_cast<value_index>(p.values.size());
    p.values.push_back(std::move(v));
    p.input_names.push_back(n.name);
    for (const dim& d : n.shape.dims())
      if (d.is_dynamic() &&
          std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), d.name()) == p.dynamic_axes.end())
        p.dynamic_axes.push_back(d.name());
  }
  std::sort(p.dynamic_axes.begin(), p.dynamic_axes.end(),
            [](axis_name a, axis_name b) { return a.view() < b.view(); });

  // Units of work: a fusion group, or a live node of no group. A unit is ready once the units
  // computing its inputs are placed; among the ready ones the one with the earliest last node
  // goes first (without fusion: exactly the builder's order).
  std::vector<fusion_group> groups;
  if (options.fusion) groups = find_fusion_groups(g, live, outputs, options.fuse);
  const std::size_t no_unit = static_cast<std::size_t>(-1);
  std::vector<std::size_t> unit_of(nodes.size(), no_unit);
  std::vector<node_id> unit_key;  // the unit's last node
  for (std::size_t k = 0; k < groups.size(); ++k) {
    for (node_id m : groups[k].members) unit_of[m] = k;
    unit_key.push_back(groups[k].members.back());
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (live[i] && nodes[i].kind != op_kind::parameter && unit_of[i] == no_unit) {
      unit_of[i] = unit_key.size();
      unit_key.push_back(static_cast<node_id>(i));
    }
  const std::size_t units = unit_key.size();
  std::vector<std::size_t> waiting(units, 0);
  std::vector<std::vector<std::size_t>> next(units);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (unit_of[i] == no_unit) continue;
    for (node_id in : nodes[i].inputs)
      if (unit_of[in] != no_unit && unit_of[in] != unit_of[i]) {
        ++waiting[unit_of[i]];
        next[unit_of[in]].push_back(unit_of[i]);
      }
  }
  auto later = [&](std::size_t a, std::size_t b) { return unit_key[a] > unit_key[b]; };
  std::vector<std::size_t> ready;  // a min-heap by unit_key
  for (std::size_t u = 0; u < units; ++u)
    if (waiting[u] == 0) ready.push_back(u);
  std::make_heap(ready.begin(), ready.end(), later);

  auto add_value = [&](node_id i, std::uint32_t step) {
    program_value v;
    v.shape = nodes[i].shape;
    v.origin = i;
    v.first_step = v.last_step = step;
    index_of[i] = static_cast<value_index>(p.values.size());
    p.values.push_back(std::move(v));
    return index_of[i];
  };
  std::size_t placed = 0;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    const std::size_t u = ready.back();
    ready.pop_back();
    ++placed;
    for (std::size_t w : next[u])
      if (--waiting[w] == 0) {
        ready.push_back(w);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    const auto step = static_cast<std::uint32_t>(p.steps.size());
    program_step s;
    if (u < groups.size()) {
      const fusion_group& gr = groups[u];
      s.kind = gr.step_kind;
      s.code = gr.code;
      s.ints = gr.ints;
      s.scalar = gr.scalar;
      s.origin = gr.root;
      s.fused = detail::decompose(nodes, gr);
      for (node_id in : gr.args) s.args.push_back(index_of[in]);
      s.result = add_value(gr.root, step);
      for (node_id m : gr.extra) s.extra_results.push_back(add_value(m, step));
    } else {
      const node_id i = unit_key[u];
      const node& n = nodes[i];
      if (n.kind == op_kind::constant) {
        program_value v;
        v.shape = n.shape;
        v.origin = i;
        v.role = value_role::constant;
        v.scalar = n.scalar;
        index_of[i] = static_cast<value_index>(p.values.size());
        p.values.push_back(std::move(v));
        continue;
      }
      s.kind = n.kind;
      s.code = n.code;
      s.ints = n.ints;
      s.scalar = n.scalar;
      s.origin = i;
      s.kernel = n.kernel;
      for (node_id in : n.inputs) s.args.push_back(index_of[in]);
      s.result = add_value(i, step);
    }
    for (value_index a : s.args) p.values[a].last_step = step;
    p.steps.push_back(std::move(s));
  }
  if (placed != units)  // the passes never make a cycle; this is their safety net
    nax::detail::throw_shape_error("nax::graph::compile: the fusion groups form a cycle");

  // The first request of a computed value is written in place by its step; a value requested
  // again, an input or a constant is copied into its result after the last step.
  for (const value& o : outputs) {
    const value_index id = index_of[o.id()];
    program_value& v = p.values[id];
    if (v.role == value_role::intermediate) {
      v.role = value_role::output;
      v.index = static_cast<std::uint32_t>(p.outputs.size());
    }
    p.outputs.push_back(id);
  }
  return p;
}

/// The same with the default options (every fusion pass on).
inline program compile_program(const builder& g, std::span<const value> outputs) {
  return compile_program(g, outputs, compile_options{});
}

/// Graphviz of a program: one box per step, inputs and constants as ellipses, outputs doubled;
/// edges carry the symbolic shapes. A fused step is a cluster of the ops it replaces.
inline std::string to_dot(const program& p) {
  std::string out = "digraph nax {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  // Appends only: g++ 12 -O3 warns (-Wrestrict, a false positive) on `"literal" + string`.
  auto put = [&out](const auto&... parts) { (out.append(std::string_view(parts)), ...); };
  auto escaped = [](std::string_view s) {
    std::string r;
    for (char c : s) {
      if (c == '"' || c == '\\') r += '\\';
      r += c;
    }
    return r;
  };
  auto id = [](std::size_t v) { return std::to_string(v); };
  for (value_index v = 0; v < p.values.size(); ++v) {
    const program_value& pv = p.values[v];
    if (pv.role == value_role::input)
      put("  v", id(v), " [shape=ellipse, label=\"", escaped(p.input_names[pv.index]), "\\n",
          escaped(pv.shape.to_string()), "\"];\n");
    else if (pv.role == value_role::constant)
      put("  v", id(v), " [shape=ellipse, style=dashed, label=\"", nax::detail::message(pv.scalar),
          "\"];\n");
  }
  auto cat = [](const auto&... parts) {
    std::string r;
    (r.append(std::string_view(parts)), ...);
    return r;
  };
  auto op_label = [&](op_kind kind, std::uint8_t code) {
    if (kind == op_kind::elementwise) return std::string(elementwise_name(code));
    if (kind == op_kind::reduce) return cat("reduce_", name(static_cast<reduce_kind>(code)));
    return std::string(name(kind));
  };
  auto box = [&](const std::string& node, bool is_output, const std::string& label) {
    put("  ", node, " [shape=box", is_output ? ", peripheries=2" : "", ", label=\"", escaped(label),
        "\"];\n");
  };
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const program_step& s = p.steps[k];
    if (s.fused) {
      // A cluster of the ops the step replaces; its results are the ops that compute them.
      const decomposition& d = *s.fused;
      std::vector<std::string> op_node(d.ops.size());
      std::vector<value_index> op_value(d.ops.size(), no_value);
      op_value[d.results[0]] = s.result;
      for (std::size_t r = 1; r < d.results.size(); ++r)
        op_value[d.results[r]] = s.extra_results[r - 1];
      for (std::size_t j = 0; j < d.ops.size(); ++j)
        op_node[j] =
            op_value[j] == no_value ? cat("f", id(k), "_", id(j)) : cat("v", id(op_value[j]));
      put("  subgraph cluster_", id(k), " {\n    label=\"", name(d.kind),
          "\";\n    style=rounded;\n  ");
      for (std::size_t j = 0; j < d.ops.size(); ++j) {
        const bool is_output =
            op_value[j] != no_value && p.values[op_value[j]].role == value_role::output;
        box(op_node[j], is_output, op_label(d.ops[j].kind, d.ops[j].code));
        put("  ");
      }
      put("}\n");
      for (std::size_t j = 0; j < d.ops.size(); ++j)
        for (std::uint32_t in : d.ops[j].inputs) {
          if (d.is_arg(in)) {
            const value_index a = s.args[in];
            put("  v", id(a), " -> ", op_node[j], " [label=\"",
                escaped(p.values[a].shape.to_string()), "\"];\n");
          } else {
            put("  ", op_node[in - d.num_args], " -> ", op_node[j], ";\n");
          }
        }
      continue;
    }
    std::string label = op_label(s.kind, s.code);
    if (s.kernel) label = s.kernel->label();
    box(cat("v", id(s.result)), p.values[s.result].role == value_role::output, label);
    for (value_index a : s.args)
      put("  v", id(a), " -> v", id(s.result), " [label=\"", escaped(p.values[a].shape.to_string()),
          "\"];\n");
  }
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    put("  out", id(k), " [shape=plaintext, label=\"result ", id(k), "\"];\n");
    put("  v", id(p.outputs[k]), " -> out", id(k), " [label=\"",
        escaped(p.values[p.outputs[k]].shape.to_string()), "\"];\n");
  }
  out += "}\n";
  return out;
}

}  // namespace nax::graph
