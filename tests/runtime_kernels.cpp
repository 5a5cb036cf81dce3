// The runtime's kernels, compiled once for the whole test suite (NAX_SEPARATE_RUNTIME, see
// nax/runtime/linkage.hpp) rather than in every test that specializes a graph.
#define NAX_RUNTIME_IMPLEMENTATION
#include <nax/runtime/step_kernels.hpp>
