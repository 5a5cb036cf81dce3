#pragma once
// The step of a fused_elementwise node: its decomposition run as one elementwise program
// (kernels/elementwise), writing the node's result and its extra results. With the native tier
// (runtime/native/) the step asks for its program's native block function once it is hot (or at
// once, under the eager policy) and runs it from the first run after it is ready; until then,
// and if it never is, the interpreter runs the program, with the same bits.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::fused_elementwise_op&, const step_request& request);

namespace native {
class tier;
}

/// Puts kernel k under native tier t if k is a fused elementwise or fused reduction step (else
/// does nothing); under the eager policy, returns once its native kernel is ready or has failed.
NAX_RUNTIME_INLINE void attach_native(kernels::step_kernel& k, native::tier& t);

/// Whether k is a fused elementwise or fused reduction step whose native kernel runs.
NAX_RUNTIME_INLINE bool runs_native(const kernels::step_kernel& k);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/kernels/elementwise.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/native/slot.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/steps/fused_reduce.hpp>
#include <nax/runtime/steps/group_program.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class fused_elementwise_step final : public kernels::step_kernel, public arena_allocated {
 public:
  fused_elementwise_step(kernels::elementwise_program program, kernels::elementwise_plan plan,
                         std::vector<graph::value_index> inputs, const graph::program_step& s)
      : program_(std::move(program)), plan_(std::move(plan)), args_(std::move(inputs)) {
    outs_.push_back(s.result);
    outs_.insert(outs_.end(), s.extra_results.begin(), s.extra_results.end());
  }
  void run(void* const* values, std::byte*) const override {
    constexpr std::size_t inline_pointers = 32;
    const void* in_small[inline_pointers];
    void* out_small[inline_pointers];
    std::vector<const void*> in_big;
    std::vector<void*> out_big;
    const void** in = in_small;
    void** out = out_small;
    if (args_.size() > inline_pointers) in = (in_big.resize(args_.size()), in_big.data());
    if (outs_.size() > inline_pointers) out = (out_big.resize(outs_.size()), out_big.data());
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    for (std::size_t o = 0; o < outs_.size(); ++o) out[o] = values[outs_[o]];
    native_.run(program_, plan_, [&](kernels::native::block_fn fn) {
      kernels::run_elementwise(plan_, in, out, fn);
    });
  }

  void attach(native::tier& t) { native_.attach(t, program_, plan_); }
  bool native() const { return native_.native(); }

 private:
  kernels::elementwise_program program_;
  kernels::elementwise_plan plan_;
  std::vector<graph::value_index> args_, outs_;
  native::slot native_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::fused_elementwise_op&, const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const graph::decomposition& d = *s.fused;
  const nax::shape& out = shapes[s.result];
  std::vector<std::ptrdiff_t> strides;
  std::vector<graph::value_index> bound;
  std::vector<kernels::elementwise_operand> operand_of;
  kernels::elementwise_program program =
      group_program(s, shapes, out, d.ops.size(), strides, bound, operand_of);
  // (Results are elementwise ops: the fusion pass takes no broadcast whose value leaves.)
  for (std::uint32_t r : d.results) program.outputs.push_back(operand_of[r].index);
  kernels::elementwise_plan plan = kernels::plan_elementwise(program, extents_of(out), strides);
  return std::make_unique<detail::fused_elementwise_step>(std::move(program), std::move(plan),
                                                          std::move(bound), s);
}

NAX_RUNTIME_INLINE void attach_native(kernels::step_kernel& k, native::tier& t) {
  if (auto* f = dynamic_cast<detail::fused_elementwise_step*>(&k)) f->attach(t);
  if (auto* r = dynamic_cast<detail::fused_reduce_step*>(&k)) r->attach(t);
}

NAX_RUNTIME_INLINE bool runs_native(const kernels::step_kernel& k) {
  if (const auto* f = dynamic_cast<const detail::fused_elementwise_step*>(&k)) return f->native();
  if (const auto* r = dynamic_cast<const detail::fused_reduce_step*>(&k)) return r->native();
  return false;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
