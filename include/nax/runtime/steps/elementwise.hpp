#pragma once
// The step of one elementwise op: a one-instruction elementwise program (kernels/elementwise),
// its operands read with their broadcast strides.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

class plan_memo;

/// The kernel of elementwise step s; `memo`, if given, lends plans made for earlier steps.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::elementwise_op& e,
                                                                   const step_request& request);

/// The kernel of elementwise step s, copied from `like`: the kernel of a step of the same op
/// whose result and operands have the shapes of s's.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::elementwise_op&, const step_copy_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <concepts>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/kernels/elementwise.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/plan_memo.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class elementwise_step final : public kernels::step_kernel, public arena_allocated {
 public:
  /// The plan made by `make_plan()`.
  template <std::invocable MakePlan>
  elementwise_step(MakePlan&& make_plan, std::span<const graph::value_index> args,
                   graph::value_index result)
      : plan_(make_plan()), result_(result) {
    for (graph::value_index a : args) args_.push_back(a);
  }
  /// The plan of `like`, a step of the same op over operands and a result of the same shapes.
  elementwise_step(const elementwise_step& like, std::span<const graph::value_index> args,
                   graph::value_index result)
      : plan_(like.plan_), result_(result) {
    for (graph::value_index a : args) args_.push_back(a);
  }
  elementwise_step(const elementwise_step&) = delete;
  elementwise_step& operator=(const elementwise_step&) = delete;
  void run(void* const* values, std::byte*) const override {
    const void* in[3];
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    void* out[1] = {values[result_]};
    kernels::run_elementwise(*plan_, in, out);
  }

 private:
  shared_plan<kernels::elementwise_plan> plan_;
  nax::detail::small_vector<graph::value_index, 3> args_;
  graph::value_index result_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::elementwise_op& e,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  plan_memo* const memo = request.memo;
  const ops::id op = e.op;
  const std::span<const graph::value_index> args(s.args.data(), s.args.size());
  // A step of the same op over the same shapes as an earlier one: its kernel, copied (the kernel
  // depends on the op and the shapes alone; the planning thread count is the same throughout a
  // memo's specialization pass).
  std::uint64_t key = 0;
  if (memo) {
    key = detail::step_shapes_key(s, shapes, static_cast<std::uint64_t>(op));
    const auto [like, kernel] =
        memo->similar_step<graph::program_step, detail::elementwise_step>(key);
    if (kernel && like->kind() == s.kind() && like->as<graph::elementwise_op>().op == op &&
        detail::same_shapes(*like, s, shapes))
      return std::make_unique<detail::elementwise_step>(*kernel, args, s.result);
  }
  const nax::shape& out = shapes[s.result];
  const extents_vector out_ext = extents_of(out);
  nax::detail::small_vector<std::ptrdiff_t, 18> strides;
  nax::detail::small_vector<nax::dtype, 3> types;
  for (std::size_t i = 0; i < s.args.size(); ++i) {
    const strides_vector st = broadcast_operand_strides(s, shapes[s.args[i]], i, out);
    for (std::ptrdiff_t x : st) strides.push_back(x);
    types.push_back(shapes[s.args[i]].dtype());
  }
  const std::span<const nax::dtype> ts(types.data(), types.size());
  const std::span<const std::ptrdiff_t> sts(strides.data(), strides.size());
  auto plan = [&] { return kernels::plan_elementwise_op(op, ts, out_ext, sts); };
  auto step = std::make_unique<detail::elementwise_step>(
      [&] { return memo ? memo->elementwise(op, ts, out_ext, sts, plan) : plan(); }, args,
      s.result);
  if (memo) memo->keep_step(key, &s, step.get());
  return step;
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::elementwise_op&, const step_copy_request& request) {
  const graph::program_step& s = request.step;
  const kernels::step_kernel& like = request.like;
  return std::make_unique<detail::elementwise_step>(
      static_cast<const detail::elementwise_step&>(like),
      std::span<const graph::value_index>(s.args.data(), s.args.size()), s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
