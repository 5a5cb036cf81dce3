#pragma once
// nax::graph::compile: both levels of the two-level JIT behind one call. Level 1 (the passes and
// the lowering, graph/compile_program.hpp) runs now, once per symbolic shape pattern; level 2
// (specialization per axis binding) runs in the executable it returns, on a run's miss. It is
// declared in namespace nax::graph, where users look for it, and lives here, in the runtime
// layer, because the executable does (graph/ cannot see the runtime).

#include <initializer_list>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/compile_program.hpp>
#include <nax/runtime/executable.hpp>

namespace nax::NAX_ISA::graph {

/// Compiles the part of `g` that `outputs` need (level 1); runs specialize it per binding.
NAX_RUNTIME_INLINE executable compile(const builder& g, std::span<const value> outputs,
                                      const compile_options& options = {});
inline executable compile(const builder& g, std::initializer_list<value> outputs,
                          const compile_options& options = {}) {
  return compile(g, std::span<const value>(outputs.begin(), outputs.size()), options);
}

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::graph {

NAX_RUNTIME_INLINE executable compile(const builder& g, std::span<const value> outputs,
                                      const compile_options& options) {
  return executable(compile_program(g, outputs, options), options);
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
