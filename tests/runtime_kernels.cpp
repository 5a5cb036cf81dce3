// runtime_kernels.cpp: the runtime's kernels, in exactly one file of a program built with
// NAX_SEPARATE_RUNTIME (see nax/runtime/linkage.hpp).
#define NAX_RUNTIME_IMPLEMENTATION
#include <nax/runtime/step_kernels.hpp>
