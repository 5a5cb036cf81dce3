#pragma once
// nax: typed tensors with named axes. The one header users include: the user-facing surface of
// every layer (docs/architecture.md). Internals (the runtime kernels, the passes, the step
// kernels) come in only where a header needs them; with NAX_SEPARATE_RUNTIME (linking the
// compiled component nax::runtime) the graph layer and the runtime are declarations only.

// core: axes, shapes, bindings, errors
#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/axis_name.hpp>
#include <nax/core/bindings.hpp>
#include <nax/core/broadcast.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/extent.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/core/fixed_string.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/core/unify.hpp>

// exec: threads
#include <nax/exec/thread_pool.hpp>

// ops: the elementwise op list and bodies
#include <nax/ops/elementwise.hpp>
#include <nax/ops/list.hpp>
#include <nax/ops/random.hpp>

// typed: tensors and expressions
#include <nax/typed/arg_reduce.hpp>
#include <nax/typed/axis_split.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/cumsum.hpp>
#include <nax/typed/dot.hpp>
#include <nax/typed/dynamic_slice.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/fields.hpp>
#include <nax/typed/layer_norm.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/one_hot.hpp>
#include <nax/typed/optim.hpp>
#include <nax/typed/random.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/size.hpp>
#include <nax/typed/softmax.hpp>
#include <nax/typed/take.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

// graph and runtime: the runtime graph, nax::graph::compile, nax::executable
#include <nax/graph/builder.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/program.hpp>
#include <nax/graph/to_dot.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/executable.hpp>
#include <nax/runtime/trace.hpp>

// jit: the typed front end of the runtime
#include <nax/jit/fields_input.hpp>
#include <nax/jit/jit.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/traced_creation.hpp>
#include <nax/jit/traced_cumsum.hpp>
#include <nax/jit/traced_ops.hpp>
#include <nax/jit/traced_take.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/jit/value_and_grad.hpp>

// gnn: graphs, the vertex-centric model, the prebuilt layers and their gradients
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/aggregate_grad.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/gnn/gat.hpp>
#include <nax/gnn/gat_grad.hpp>
#include <nax/gnn/traced.hpp>
#include <nax/gnn/vertex.hpp>

// io
#include <nax/io/npy.hpp>
#include <nax/io/npz.hpp>
#include <nax/io/print.hpp>
