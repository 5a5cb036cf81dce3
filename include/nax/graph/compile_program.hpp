#pragma once
// Level 1 of the two-level JIT: a builder's graph compiled once per symbolic shape pattern into
// a program. The part the outputs need is copied out of the builder, the pass list rewrites it
// (graph/pass_list.hpp), and it is lowered to a linear program (graph/lower.hpp) whose chains
// that can run tile by tile are then found (graph/pipeline_chains.hpp).

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/pass.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::graph {

/// The program computing `outputs` of g, after options.passes, or if that is empty, the passes
/// options.fusion and options.fuse choose (make_pass_list).
NAX_RUNTIME_INLINE program compile_program(const builder& g, std::span<const value> outputs,
                                           const compile_options& options = {});

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/lower.hpp>
#include <nax/graph/pass_list.hpp>
#include <nax/graph/pipeline_chains.hpp>

namespace nax::NAX_ISA::graph {

NAX_RUNTIME_INLINE program compile_program(const builder& g, std::span<const value> outputs,
                                           const compile_options& options) {
  if (outputs.empty()) nax::detail::throw_shape_error("nax::graph::compile: no outputs requested");
  std::vector<node_id> ids;
  for (const value& v : outputs) {
    if (&v.owner() != &g)
      nax::detail::throw_shape_error("nax::graph::compile: an output belongs to another builder");
    ids.push_back(v.id());
  }
  ir work = g.graph();
  work.set_outputs(std::move(ids));
  for (const pass& p : options.passes.empty() ? make_pass_list(options) : options.passes)
    p.run(work);
  program p = lower(work);
  for (const axis_alias& a : g.axis_aliases()) {
    if (std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), a.alias) != p.dynamic_axes.end())
      nax::detail::throw_shape_error("nax::graph::compile: axis '", a.alias.view(),
                                     "' is both an input's axis and axis '", a.source.view(),
                                     "' renamed");
    p.axis_aliases.push_back(a);
  }
  // The value axes the program has: of a value of it, or read by the size of one it has (a run
  // computes only these; the size of one the outputs do not reach is never read).
  const std::span<const value_axis> made = g.value_axes();
  std::vector<char> kept(made.size(), 0);
  for (std::size_t i = made.size(); i-- > 0;) {
    for (const program_value& v : p.values)
      for (const dim& d : v.shape.dims())
        kept[i] = kept[i] || (d.is_dynamic() && d.name() == made[i].name);
    for (std::size_t j = i + 1; j < made.size() && !kept[i]; ++j)
      for (const size_term& t : made[j].size)
        kept[i] = kept[i] || (kept[j] && t.k == size_term::kind::extent && t.axis == made[i].name);
  }
  for (std::size_t i = 0; i < made.size(); ++i) {
    if (!kept[i]) continue;
    const value_axis& a = made[i];
    if (std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), a.name) != p.dynamic_axes.end())
      nax::detail::throw_shape_error("nax::graph::compile: axis '", a.name.view(),
                                     "' is both an input's axis and the axis of a ", a.op);
    p.dynamic_axes.push_back(a.name);
    p.value_axes.push_back(a);
  }
  if (options.pipeline != pipelining::off) p.pipelines = find_pipeline_chains(p);
  p.gradient_begin = g.gradient_begin();
  return p;
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
