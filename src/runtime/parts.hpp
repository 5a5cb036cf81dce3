// The compiled component nax::runtime (nax_runtime), in parts that compile in parallel: the one
// definition of every function that the headers mark NAX_RUNTIME_INLINE (the graph layer, its
// passes, the runtime and its step kernels, the jit bridge's dense copies), for programs that
// define NAX_SEPARATE_RUNTIME (linking nax::runtime does) and so see only their declarations.
// See nax/core/linkage.hpp.
//
// Each src/runtime/<part>.cpp defines NAX_RUNTIME_PART to its number and includes this file.
// Part p includes the sections 1 to p in this order, each time the same ones in the same order,
// and turns definitions on (NAX_RUNTIME_DEFINITIONS, NAX_RUNTIME_TEMPLATE) in section p alone. A
// header's definitions are compiled where the header is first reached, so a header is defined in
// exactly one part: the part whose section first reaches it, listed or included by one listed.
// Earlier sections come first as declarations only.
//
// Add a header with a definitions block to the section of its kind (tests/runtime_parts.cmake
// checks that each is listed once); a section that takes much longer than the others to compile
// (scripts/build-times) is split in two, with a new part file.
#ifndef NAX_RUNTIME_PART
#error "src/runtime/parts.hpp is included by src/runtime/<part>.cpp, which defines NAX_RUNTIME_PART"
#endif
#define NAX_RUNTIME_IMPLEMENTATION
#include <nax/core/linkage.hpp>

// The instruction set check (nax/core/linkage.hpp), in part 1: every program that links the
// component refers to nax_runtime_instruction_set_check, so this part is always linked, and
// with it the reference to nax_program_compiled_for_<this set>.
#if NAX_RUNTIME_PART == 1
extern "C" {  // (declared extern in linkage.hpp, so defined with external linkage here)
const char NAX_ISA_CAT(nax_runtime_compiled_for_, NAX_ISA_TAG) = 0;
const char nax_runtime_instruction_set_check = 0;
[[gnu::used]] const char* const nax_runtime_needs_program_for =
    &NAX_ISA_CAT(nax_program_compiled_for_, NAX_ISA_TAG);
}
#endif

// --- 1: the graph: its IR, shape rules and builder ---------------------------------------------
#define NAX_RUNTIME_SECTION 1
#include "section.hpp"

#include <nax/exec/cache_info.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/infer/arg_reduce.hpp>
#include <nax/graph/infer/axis_split.hpp>
#include <nax/graph/infer/broadcast.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/graph/infer/concat.hpp>
#include <nax/graph/infer/convert.hpp>
#include <nax/graph/infer/cumsum.hpp>
#include <nax/graph/infer/dot_general.hpp>
#include <nax/graph/infer/dynamic_slice.hpp>
#include <nax/graph/infer/elementwise.hpp>
#include <nax/graph/infer/generate.hpp>
#include <nax/graph/infer/reduce.hpp>
#include <nax/graph/infer/rename.hpp>
#include <nax/graph/infer/reshape.hpp>
#include <nax/graph/infer/rows.hpp>
#include <nax/graph/infer/slice.hpp>
#include <nax/graph/infer/take.hpp>
#include <nax/graph/infer/transpose.hpp>
#include <nax/graph/ir.hpp>
#include <nax/graph/lower.hpp>
#include <nax/graph/ops.hpp>

// --- 2: the passes, autodiff and dot output ---------------------------------------------------
#if NAX_RUNTIME_PART >= 2
#undef NAX_RUNTIME_SECTION
#define NAX_RUNTIME_SECTION 2
#include "section.hpp"

#include <nax/graph/compile_program.hpp>
#include <nax/graph/grad.hpp>
#include <nax/graph/in_place.hpp>
#include <nax/graph/passes/cse.hpp>
#include <nax/graph/passes/dead_code.hpp>
#include <nax/graph/passes/fuse_dense.hpp>
#include <nax/graph/passes/fuse_elementwise.hpp>
#include <nax/graph/passes/fuse_layer_norm.hpp>
#include <nax/graph/passes/fuse_reduce.hpp>
#include <nax/graph/passes/fuse_softmax.hpp>
#include <nax/graph/passes/fusion_group.hpp>
#include <nax/graph/pipeline_chains.hpp>
#include <nax/graph/to_dot.hpp>
#endif

// --- 3: the thread pool, the copy kernel, the jit bridge, the native tier, the file formats ------
#if NAX_RUNTIME_PART >= 3
#undef NAX_RUNTIME_SECTION
#define NAX_RUNTIME_SECTION 3
#include "section.hpp"

#include <nax/exec/thread_pool.hpp>
#include <nax/io/npy.hpp>
#include <nax/io/npz.hpp>
#include <nax/io/zip.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/runtime/input_signature.hpp>
#include <nax/runtime/native/compile_service.hpp>
#include <nax/runtime/native/compiler.hpp>
#include <nax/runtime/native/disk_cache.hpp>
#include <nax/runtime/native/tier.hpp>
#include <nax/runtime/native/toolchain.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/specialization_recipe.hpp>
#endif

// --- 4: the steps of data movement and GEMM, with the dense float/double GEMM ------------------
#if NAX_RUNTIME_PART >= 4
#undef NAX_RUNTIME_SECTION
#define NAX_RUNTIME_SECTION 4
#include "section.hpp"

#include <nax/kernels/gemm.hpp>
#include <nax/kernels/gemm_plan.hpp>
#include <nax/runtime/steps/arg_reduce.hpp>
#include <nax/runtime/steps/concat.hpp>
#include <nax/runtime/steps/convert.hpp>
#include <nax/runtime/steps/copy.hpp>
#include <nax/runtime/steps/cumsum.hpp>
#include <nax/runtime/steps/dot_general.hpp>
#include <nax/runtime/steps/dynamic_slice.hpp>
#include <nax/runtime/steps/generate.hpp>
#include <nax/runtime/steps/take.hpp>
#endif

// --- 5: the elementwise, reduction and row steps ---------------------------------------------
#if NAX_RUNTIME_PART >= 5
#undef NAX_RUNTIME_SECTION
#define NAX_RUNTIME_SECTION 5
#include "section.hpp"

#include <nax/runtime/steps/elementwise.hpp>
#include <nax/runtime/steps/fused_elementwise.hpp>
#include <nax/runtime/steps/fused_reduce.hpp>
#include <nax/runtime/steps/group_program.hpp>
#include <nax/runtime/steps/layer_norm.hpp>
#include <nax/runtime/steps/reduce.hpp>
#include <nax/runtime/steps/softmax.hpp>
#endif

// --- 6: the step factory, specializations, pipelines and the executable -----------------------
#if NAX_RUNTIME_PART >= 6
#undef NAX_RUNTIME_SECTION
#define NAX_RUNTIME_SECTION 6
#include "section.hpp"

#include <nax/runtime/compile.hpp>
#include <nax/runtime/executable.hpp>
#include <nax/runtime/pipeline.hpp>
#include <nax/runtime/size_buckets.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/specialization_cache.hpp>
#include <nax/runtime/step_factory.hpp>
#include <nax/runtime/step_schedule.hpp>
#include <nax/runtime/trace.hpp>
#include <nax/runtime/value_axes.hpp>
#endif
