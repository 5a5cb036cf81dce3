#pragma once
// How nax's compiled parts are linked. By default nax is header-only: every function is defined
// in its header, and every translation unit that builds or runs a graph compiles the graph
// layer, the runtime and every runtime kernel (each elementwise op, reduction, row op, copy and
// GEMM for each dtype): tens of seconds per translation unit.
//
// The compiled component: linking the CMake target nax::runtime defines NAX_SEPARATE_RUNTIME,
// and the non-template functions of graph/, runtime/, the runtime kernels and io/'s file formats
// are then only declared in the headers; the library nax_runtime (src/runtime/, whose parts define
// NAX_RUNTIME_IMPLEMENTATION) holds their one definition. Templates stay in the headers.
//
// A header marks such a function NAX_RUNTIME_INLINE and puts its definition in a block
// `#if NAX_RUNTIME_DEFINITIONS ... #endif` at its end. (A link error naming a nax function means
// NAX_SEPARATE_RUNTIME is defined but nax_runtime is not linked; a duplicate symbol, that
// NAX_RUNTIME_IMPLEMENTATION is defined in a file other than src/runtime/'s parts, or that a
// header is defined by two parts: src/runtime/parts.hpp says how a header lands in one.)

#include <nax/core/isa.hpp>

#if defined(NAX_SEPARATE_RUNTIME) && !defined(NAX_RUNTIME_IMPLEMENTATION)
#define NAX_RUNTIME_DEFINITIONS 0
#else
#define NAX_RUNTIME_DEFINITIONS 1
#endif

#if defined(NAX_SEPARATE_RUNTIME)
#define NAX_RUNTIME_INLINE
#else
#define NAX_RUNTIME_INLINE inline
#endif

// Explicit instantiations the compiled component holds: templates a program would otherwise
// instantiate for the common element types (the dense float and double GEMM). A header writes
// `NAX_RUNTIME_TEMPLATE void f<float>(...);` after f's definition: an explicit instantiation
// declaration (extern template) where NAX_SEPARATE_RUNTIME is defined, the definition in one
// part of src/runtime/, and nothing in a header-only build (the macro is then undefined; guard
// with #ifdef). Only for templates that plan and run within the component, so that a program built
// with other -m flags than the component never mixes the two's register tiles.
#if defined(NAX_RUNTIME_IMPLEMENTATION)
#define NAX_RUNTIME_TEMPLATE template
#elif defined(NAX_SEPARATE_RUNTIME)
#define NAX_RUNTIME_TEMPLATE extern template
#endif

// The instruction set check of the compiled component. nax::runtime is compiled for one set
// (NAX_RUNTIME_FLAGS); a program compiled for another would call kernels and pass vectors of
// another width (core/isa.hpp), so the two must not link. Each translation unit of such a
// program refers to nax_runtime_compiled_for_<its set>, which the component defines for its own
// set only, and defines nax_program_compiled_for_<its set>, which the component refers to. A
// mismatch fails at link time with both sets named:
//   undefined reference to `nax_runtime_compiled_for_sse2'            (the program's set)
//   undefined reference to `nax_program_compiled_for_avx2_fma'        (the component's set)
// What to do: compile the program with the component's flags (its CMake target nax::runtime
// passes them on; docs/building.md, "Instruction sets"), or build nax::runtime with the
// program's (NAX_RUNTIME_FLAGS). nax_runtime_instruction_set_check, whatever the set, makes the
// linker take the component's part that refers to the program's symbol.
#if defined(NAX_SEPARATE_RUNTIME)
extern "C" {
extern const char NAX_ISA_CAT(nax_runtime_compiled_for_, NAX_ISA_TAG);
extern const char NAX_ISA_CAT(nax_program_compiled_for_, NAX_ISA_TAG);
extern const char nax_runtime_instruction_set_check;
#if !defined(NAX_RUNTIME_IMPLEMENTATION)
[[gnu::used]] inline const char* const NAX_ISA_CAT(nax_program_needs_runtime_for_, NAX_ISA_TAG)[2] =
    {&NAX_ISA_CAT(nax_runtime_compiled_for_, NAX_ISA_TAG), &nax_runtime_instruction_set_check};
[[gnu::used]] inline const char NAX_ISA_CAT(nax_program_compiled_for_, NAX_ISA_TAG) = 0;
#endif
}
#endif
