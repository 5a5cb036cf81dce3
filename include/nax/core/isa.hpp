#pragma once
// The instruction set this translation unit is compiled for, as a name in nax's namespaces.
//
// nax's kernels are inline functions and templates: each program compiles them for its own
// -m flags. Two translation units compiled for different sets (a program and the compiled
// component nax::runtime, or two files of one program) would otherwise define the same names
// with different code, and vectors of different widths; the linker keeps one of each, and
// results are silently wrong. So every layer above core/ declares its names in an inline
// namespace named after the set (`namespace nax::NAX_ISA::detail { ... }`): a kernel compiled
// for AVX2 with FMA is nax::isa_avx2_fma::..., one compiled for SSE2 nax::isa_sse2::..., and
// the two never meet. Code still names them nax::... (an inline namespace is transparent to
// lookup and to explicit specialization). core/ holds no code that depends on the set (it
// cannot include simd/: tests/layers.cmake) and stays in nax itself, so that axes read
// nax::axis<"batch"> in diagnostics.
//
// The name follows what selects nax's vectors (simd/arch.hpp): the set of simd::arch and of the
// row kernels, and FMA (which also decides whether the compiler contracts a * b + c in scalar
// code). A build that chooses them by hand (NAX_SIMD_ARCH, NAX_ROW_SIMD_ARCH) gets `_chosen`
// appended; give NAX_ISA_SUFFIX to tell two such builds apart.

#if defined(__AVX512BW__)
#define NAX_ISA_BASE avx512bw
#elif defined(__AVX512F__)
#define NAX_ISA_BASE avx512f
#elif defined(__AVX2__) && defined(__FMA__)
#define NAX_ISA_BASE avx2_fma
#elif defined(__AVX2__)
#define NAX_ISA_BASE avx2
#elif defined(__AVX__) && defined(__FMA__)
#define NAX_ISA_BASE avx_fma
#elif defined(__AVX__)
#define NAX_ISA_BASE avx
#elif defined(__SSE4_2__)
#define NAX_ISA_BASE sse4_2
#elif defined(__SSE4_1__)
#define NAX_ISA_BASE sse4_1
#elif defined(__SSSE3__)
#define NAX_ISA_BASE ssse3
#elif defined(__SSE3__)
#define NAX_ISA_BASE sse3
#elif defined(__SSE2__)
#define NAX_ISA_BASE sse2
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define NAX_ISA_BASE neon64
#elif defined(__ARM_NEON)
#define NAX_ISA_BASE neon
#else
#define NAX_ISA_BASE scalar
#endif

#if !defined(NAX_ISA_SUFFIX)
#if defined(NAX_SIMD_ARCH) || defined(NAX_ROW_SIMD_ARCH)
#define NAX_ISA_SUFFIX _chosen
#else
#define NAX_ISA_SUFFIX
#endif
#endif

#define NAX_ISA_CAT2(a, b) a##b
#define NAX_ISA_CAT(a, b) NAX_ISA_CAT2(a, b)
#define NAX_ISA_STRING2(x) #x
#define NAX_ISA_STRING(x) NAX_ISA_STRING2(x)

/// The set's name: avx2_fma, avx512bw, sse2, neon64, ... (a token).
#define NAX_ISA_TAG NAX_ISA_CAT(NAX_ISA_BASE, NAX_ISA_SUFFIX)
/// The same as a string literal, for messages.
#define NAX_ISA_NAME NAX_ISA_STRING(NAX_ISA_TAG)
/// The inline namespace of every layer above core/: `namespace nax::NAX_ISA::detail {`.
#define NAX_ISA inline NAX_ISA_CAT(isa_, NAX_ISA_TAG)

// core/'s helpers (nax::core_detail) are seen from the layers' nax::NAX_ISA::detail, so that
// `detail::throw_shape_error(...)` there, and nax::detail::... anywhere, find them. (core/ names
// its own namespace apart: from core's `namespace nax`, `detail` would otherwise be both
// nax::detail and the inline namespace's.)
namespace nax::core_detail {}
namespace nax::NAX_ISA::detail {
using namespace ::nax::core_detail;
}
