// The compiled component nax::runtime (nax_runtime): the one definition of every function that
// the headers mark NAX_RUNTIME_INLINE (the graph layer, its passes, the runtime and its step
// kernels, the jit bridge's dense copies), for programs that define NAX_SEPARATE_RUNTIME
// (linking nax::runtime does) and so see only their declarations. See nax/core/linkage.hpp.
#define NAX_RUNTIME_IMPLEMENTATION
#include <nax/exec/cache_info.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/compile_program.hpp>
#include <nax/graph/infer/broadcast.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/graph/infer/concat.hpp>
#include <nax/graph/infer/dot_general.hpp>
#include <nax/graph/infer/elementwise.hpp>
#include <nax/graph/infer/reduce.hpp>
#include <nax/graph/infer/reshape.hpp>
#include <nax/graph/infer/rows.hpp>
#include <nax/graph/infer/slice.hpp>
#include <nax/graph/infer/transpose.hpp>
#include <nax/graph/ir.hpp>
#include <nax/graph/lower.hpp>
#include <nax/graph/passes/cse.hpp>
#include <nax/graph/passes/dead_code.hpp>
#include <nax/graph/passes/fuse_dense.hpp>
#include <nax/graph/passes/fuse_elementwise.hpp>
#include <nax/graph/passes/fuse_layer_norm.hpp>
#include <nax/graph/passes/fuse_reduce.hpp>
#include <nax/graph/passes/fuse_softmax.hpp>
#include <nax/graph/passes/fusion_group.hpp>
#include <nax/graph/to_dot.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/kernels/gemm.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/executable.hpp>
#include <nax/runtime/input_signature.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/specialization_cache.hpp>
#include <nax/runtime/step_factory.hpp>
#include <nax/runtime/steps/concat.hpp>
#include <nax/runtime/steps/copy.hpp>
#include <nax/runtime/steps/dot_general.hpp>
#include <nax/runtime/steps/elementwise.hpp>
#include <nax/runtime/steps/fused_elementwise.hpp>
#include <nax/runtime/steps/fused_reduce.hpp>
#include <nax/runtime/steps/group_program.hpp>
#include <nax/runtime/steps/layer_norm.hpp>
#include <nax/runtime/steps/reduce.hpp>
#include <nax/runtime/steps/softmax.hpp>
