#pragma once
// Level 1 of the two-level JIT (seed 000): a builder's graph, compiled once per symbolic shape
// pattern into a linear program (seed 004's plan of steps): the nodes the outputs need, in
// topological order, each value with its role and the steps between which it must stay alive.
// Nothing here depends on extents; level 2 (nax/runtime/specialization.hpp) resolves them per
// axis binding.

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

namespace nax::graph {

/// Options of nax::graph::compile.
struct compile_options {
  /// Specializations kept per executable; the least recently used is dropped beyond this.
  std::size_t max_specializations = 64;
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
  node_id origin = 0;
  std::shared_ptr<const runtime::external_kernel> kernel;  // op_kind::external's
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

/// Compiles the part of `g` that `outputs` need: dead nodes are dropped, the survivors numbered
/// in topological order (the builder's order already is one), every intermediate given its
/// lifetime. Every parameter stays an input, used or not, so run() takes them all in order.
inline program compile_program(const builder& g, std::span<const value> outputs) {
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

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const node& n = nodes[i];
    if (!live[i] || n.kind == op_kind::parameter) continue;
    program_value v;
    v.shape = n.shape;
    v.origin = static_cast<node_id>(i);
    const auto id = static_cast<value_index>(p.values.size());
    index_of[i] = id;
    if (n.kind == op_kind::constant) {
      v.role = value_role::constant;
      v.scalar = n.scalar;
      p.values.push_back(std::move(v));
      continue;
    }
    program_step s;
    s.kind = n.kind;
    s.code = n.code;
    s.result = id;
    s.ints = n.ints;
    s.scalar = n.scalar;
    s.origin = static_cast<node_id>(i);
    s.kernel = n.kernel;
    const auto step = static_cast<std::uint32_t>(p.steps.size());
    for (node_id in : n.inputs) {
      const value_index a = index_of[in];
      s.args.push_back(a);
      p.values[a].last_step = step;
    }
    v.first_step = v.last_step = step;
    p.values.push_back(std::move(v));
    p.steps.push_back(std::move(s));
  }

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

/// Graphviz of a program: one box per step, inputs and constants as ellipses, outputs doubled;
/// edges carry the symbolic shapes.
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
  for (const program_step& s : p.steps) {
    std::string label(name(s.kind));
    if (s.kind == op_kind::elementwise) label = std::string(elementwise_name(s.code));
    if (s.kind == op_kind::reduce) {
      label = "reduce_";
      label += name(static_cast<reduce_kind>(s.code));
    }
    if (s.kernel) label = s.kernel->label();
    const bool is_output = p.values[s.result].role == value_role::output;
    put("  v", id(s.result), " [shape=box", is_output ? ", peripheries=2" : "", ", label=\"",
        escaped(label), "\"];\n");
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
