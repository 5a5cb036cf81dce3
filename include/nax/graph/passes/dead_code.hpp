#pragma once
// The dead-code pass: drops the nodes no output needs. Parameters stay (they are the compiled
// graph's inputs, used or not, so that run() takes them all in order).

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void dead_code(ir& g);

}  // namespace nax::graph::passes

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::graph::passes {

NAX_RUNTIME_INLINE void dead_code(ir& g) { g.sort_and_prune(); }

}  // namespace nax::graph::passes
#endif  // NAX_RUNTIME_DEFINITIONS
