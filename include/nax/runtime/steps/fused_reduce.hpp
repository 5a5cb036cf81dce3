#pragma once
// The step of a fused_reduce node: its elementwise group run a piece at a time into a buffer in
// cache and reduced there (kernels/fused_reduce.hpp): the group's result never reaches memory.

#include <memory>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

/// The kernel of fused_reduce step s of p (p's inputs give the group's binding).
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::fused_reduce_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/bindings.hpp>
#include <nax/kernels/fused_reduce.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/native/slot.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/steps/group_program.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class fused_reduce_step final : public kernels::step_kernel, public arena_allocated {
 public:
  fused_reduce_step(kernels::elementwise_program program, kernels::fused_reduce_plan plan,
                    std::vector<graph::value_index> inputs, graph::value_index result)
      : program_(std::move(program)),
        plan_(std::move(plan)),
        args_(std::move(inputs)),
        result_(result) {}

  void run(void* const* values, std::byte*) const override {
    constexpr std::size_t inline_pointers = 32;
    const void* in_small[inline_pointers];
    std::vector<const void*> in_big;
    const void** in = in_small;
    if (args_.size() > inline_pointers) in = (in_big.resize(args_.size()), in_big.data());
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    native_.run(program_, plan_.program, [&](kernels::native::block_fn fn) {
      kernels::run_fused_reduce(plan_, in, values[result_], fn);
    });
  }

  void attach(native::tier& t) { native_.attach(t, program_, plan_.program); }
  bool native() const { return native_.native(); }

 private:
  kernels::elementwise_program program_;  // the group's, for the native tier
  kernels::fused_reduce_plan plan_;
  native::slot native_;
  std::vector<graph::value_index> args_;
  graph::value_index result_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::fused_reduce_op& op,
                                                                   const step_request& request) {
  const graph::program& p = request.program;
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const graph::decomposition& d = *s.fused;
  const graph::reduce_op& r = op.reduce;
  const std::size_t last = d.ops.size() - 1;  // the reduction; the group's ops precede it
  const std::uint32_t e = d.ops[last].inputs[0] - static_cast<std::uint32_t>(d.num_args);
  // (e is an elementwise op: the fusion pass takes no broadcast as a group's result.)
  // The group's concrete shape: its reduced axes from their symbolic extents under the binding
  // the program's inputs carry (not only the step's arguments: a broadcast in the group may
  // bring an axis none of them has), its kept ones from the result (which is a tile of the
  // whole in a pipelined chain, runtime/pipeline.hpp).
  nax::bindings b;
  for (graph::value_index a = 0; a < p.num_inputs(); ++a) {
    const nax::shape& sym = p.values[a].shape;
    for (std::size_t i = 0; i < sym.rank(); ++i)
      if (sym[i].is_dynamic() && sym[i].has_name()) b.set(sym[i].name(), shapes[a][i].extent());
  }
  for (const graph::axis_alias& a : p.axis_aliases)  // a renamed axis (kseq) as its source
    if (const auto v = b.find(a.source)) b.set(a.alias, *v);
  // An axis set_dimension_size made (graph/value_axis.hpp): from a value that has it.
  for (std::size_t v = p.num_inputs(); !p.value_axes.empty() && v < p.values.size(); ++v) {
    const nax::shape& sym = p.values[v].shape;
    for (std::size_t i = 0; i < sym.rank(); ++i)
      if (sym[i].is_dynamic() && sym[i].has_name() && !b.find(sym[i].name()))
        b.set(sym[i].name(), shapes[v][i].extent());
  }
  const std::size_t lo = r.axes[0], hi = std::size_t{r.axes.back()} + 1;
  const nax::shape resolved = d.ops[e].shape.resolve(b);
  std::vector<dim> dims(resolved.dims().begin(), resolved.dims().end());
  const nax::shape& result = shapes[s.result];
  for (std::size_t i = 0, j = 0; i < dims.size(); ++i)
    if (i < lo || i >= hi) dims[i] = result[j++];
  const nax::shape group(resolved.dtype(), std::span<const dim>(dims));
  std::vector<std::ptrdiff_t> strides;
  std::vector<graph::value_index> bound;
  std::vector<kernels::elementwise_operand> operand_of;
  kernels::elementwise_program program =
      group_program(s, shapes, group, last, strides, bound, operand_of);
  program.outputs = {operand_of[e].index};
  const extents_vector ext = extents_of(group);
  // The reduced axes are a contiguous run (ascending): the group as [outer, reduced, inner].
  std::size_t outer = 1, reduced = 1, inner = 1;
  for (std::size_t i = 0; i < ext.size(); ++i)
    (i < lo ? outer : i < hi ? reduced : inner) *= ext[i];
  kernels::fused_reduce_plan plan = kernels::plan_fused_reduce(
      kernels::plan_elementwise(program, ext, strides, 0, kernels::elementwise_streaming::never),
      r.kind, outer, reduced, inner);
  return std::make_unique<detail::fused_reduce_step>(std::move(program), std::move(plan),
                                                     std::move(bound), s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
