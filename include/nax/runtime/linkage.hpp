#pragma once
// How the runtime's kernels are compiled. By default nax is header-only: every translation unit
// that specializes a graph (graph::compile, nax::jit) instantiates every runtime kernel (each
// elementwise op, reduction, row op, copy and GEMM for each dtype), which costs tens of seconds
// of compile time per translation unit.
//
// Opt-in separate compilation: define NAX_SEPARATE_RUNTIME in the whole program (e.g.
// `target_compile_definitions(app PRIVATE NAX_SEPARATE_RUNTIME)`), and in exactly one .cpp file
//
//     #define NAX_RUNTIME_IMPLEMENTATION
//     #include <nax/runtime/step_kernels.hpp>
//
// Every other file then only declares nax::runtime::make_step_kernels, so it does not instantiate
// the kernels. (A link error naming make_step_kernels means no file defines
// NAX_RUNTIME_IMPLEMENTATION; a duplicate symbol, more than one.)

#if defined(NAX_SEPARATE_RUNTIME) && !defined(NAX_RUNTIME_IMPLEMENTATION)
#define NAX_RUNTIME_DEFINES_KERNELS 0
#else
#define NAX_RUNTIME_DEFINES_KERNELS 1
#endif

#if defined(NAX_SEPARATE_RUNTIME)
#define NAX_RUNTIME_INLINE
#else
#define NAX_RUNTIME_INLINE inline
#endif
