#pragma once
// Graphviz of a program: one box per step, inputs and constants as ellipses, outputs doubled;
// edges carry the symbolic shapes. A fused step is a cluster of the ops it replaces; a chain that
// can run tile by tile (graph/pipeline_chains.hpp) is a dashed cluster around its steps, labelled
// with its tile axis and, if given, what a specialization chose.

#include <span>
#include <string>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::graph {

/// The program as a Graphviz digraph. `pipeline_notes[c]`, if present and not empty, is added to
/// the label of chain c ("tile 512 of 4096, 2 lanes"); `step_notes[k]` to fused step k's
/// ("native").
NAX_RUNTIME_INLINE std::string to_dot(const program& p,
                                      std::span<const std::string> pipeline_notes = {},
                                      std::span<const std::string> step_notes = {});

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <string_view>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/external_kernel.hpp>

namespace nax::NAX_ISA::graph {
namespace detail {

inline std::string dot_escaped(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

// Appends only: g++ 12 -O3 warns (-Wrestrict, a false positive) on `"literal" + string`.
template <class... Parts>
void dot_put(std::string& out, const Parts&... parts) {
  (out.append(std::string_view(parts)), ...);
}

inline std::string dot_cat(std::initializer_list<std::string_view> parts) {
  std::string r;
  for (std::string_view p : parts) r.append(p);
  return r;
}

inline void dot_box(std::string& out, const std::string& id, bool is_output,
                    const std::string& label) {
  dot_put(out, "  ", id, " [shape=box", is_output ? ", peripheries=2" : "", ", label=\"",
          dot_escaped(label), "\"];\n");
}

// A fused step: a cluster of the ops it replaces (into `out`); its results are the ops that
// compute them. Its edges go to `edges`: written inside an enclosing cluster (a pipeline's), an
// edge would draw its far end inside that cluster too.
inline void dot_fused_step(std::string& out, std::string& edges, const program& p, std::size_t k,
                           std::string_view note) {
  const program_step& s = p.steps[k];
  const decomposition& d = *s.fused;
  auto id = [](std::size_t v) { return std::to_string(v); };
  std::vector<std::string> op_node(d.ops.size());
  std::vector<value_index> op_value(d.ops.size(), no_value);
  op_value[d.results[0]] = s.result;
  for (std::size_t r = 1; r < d.results.size(); ++r)
    op_value[d.results[r]] = s.extra_results[r - 1];
  for (std::size_t j = 0; j < d.ops.size(); ++j)
    op_node[j] = op_value[j] == no_value ? dot_cat({"f", id(k), "_", id(j)})
                                         : dot_cat({"v", id(op_value[j])});
  dot_put(out, "  subgraph cluster_", id(k), " {\n    label=\"", name(d.kind),
          note.empty() ? "" : ", ", note, "\";\n    style=rounded;\n  ");
  for (std::size_t j = 0; j < d.ops.size(); ++j) {
    const bool is_output =
        op_value[j] != no_value && p.values[op_value[j]].role == value_role::output;
    dot_box(out, op_node[j], is_output, op_label(d.ops[j].op));
    dot_put(out, "  ");
  }
  dot_put(out, "}\n");
  for (std::size_t j = 0; j < d.ops.size(); ++j)
    for (std::uint32_t in : d.ops[j].inputs) {
      if (d.is_arg(in)) {
        const value_index a = s.args[in];
        dot_put(edges, "  v", id(a), " -> ", op_node[j], " [label=\"",
                dot_escaped(p.values[a].shape.to_string()), "\"];\n");
      } else {
        dot_put(edges, "  ", op_node[in - d.num_args], " -> ", op_node[j], ";\n");
      }
    }
}

}  // namespace detail

NAX_RUNTIME_INLINE std::string to_dot(const program& p, std::span<const std::string> pipeline_notes,
                                      std::span<const std::string> step_notes) {
  using detail::dot_escaped;
  using detail::dot_put;
  std::string out = "digraph nax {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  auto id = [](std::size_t v) { return std::to_string(v); };
  for (value_index v = 0; v < p.values.size(); ++v) {
    const program_value& pv = p.values[v];
    if (pv.role == value_role::input)
      dot_put(out, "  v", id(v), " [shape=ellipse, label=\"", dot_escaped(p.input_names[pv.index]),
              "\\n", dot_escaped(pv.shape.to_string()), "\"];\n");
    else if (pv.role == value_role::constant)
      dot_put(out, "  v", id(v), " [shape=ellipse, style=dashed, label=\"",
              nax::detail::message(pv.scalar), "\"];\n");
  }
  std::size_t chain = 0;  // the next chain of p.pipelines
  std::string edges;      // of the steps since the last one written
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const program_step& s = p.steps[k];
    const bool in_chain = chain < p.pipelines.size() && p.pipelines[chain].steps.front() <= k;
    if (chain < p.pipelines.size() && p.pipelines[chain].steps.front() == k) {
      std::string label =
          "pipeline " + id(chain) + ": tiles along " + std::string(p.pipelines[chain].axis.view());
      if (chain < pipeline_notes.size() && !pipeline_notes[chain].empty())
        label += ", " + pipeline_notes[chain];
      dot_put(out, "  subgraph cluster_pipeline_", id(chain), " {\n    label=\"",
              dot_escaped(label), "\";\n    style=dashed;\n");
    }
    if (s.fused) {
      detail::dot_fused_step(out, edges, p, k,
                             k < step_notes.size() ? std::string_view(step_notes[k]) : "");
    } else {
      std::string label = op_label(s.op);
      if (const auto* e = s.op.get_if<external_op>()) label = e->kernel->label();
      detail::dot_box(out, detail::dot_cat({"v", id(s.result)}),
                      p.values[s.result].role == value_role::output, label);
      for (value_index a : s.args)
        dot_put(edges, "  v", id(a), " -> v", id(s.result), " [label=\"",
                dot_escaped(p.values[a].shape.to_string()), "\"];\n");
    }
    const bool closes = chain < p.pipelines.size() && p.pipelines[chain].steps.back() == k;
    if (closes) {
      out += "  }\n";
      ++chain;
    }
    if (closes || !in_chain) {  // a chain's edges after its cluster (see dot_fused_step)
      out += edges;
      edges.clear();
    }
  }
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    dot_put(out, "  out", id(k), " [shape=plaintext, label=\"result ", id(k), "\"];\n");
    dot_put(out, "  v", id(p.outputs[k]), " -> out", id(k), " [label=\"",
            dot_escaped(p.values[p.outputs[k]].shape.to_string()), "\"];\n");
  }
  out += "}\n";
  return out;
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
