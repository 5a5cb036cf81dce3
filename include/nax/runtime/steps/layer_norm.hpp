#pragma once
// The step of layer_norm along one axis: a builder's layer_norm runs the row kernel
// (kernels/rows.hpp); one the fusion pass recognized from primitives, the spelled kernel
// (kernels/spelled_rows.hpp), which gives the primitives' bits and skips an absent gamma or beta.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::layer_norm_op&,
                                                                   const step_request& request);

/// The kernel of layer_norm step s, copied from `like`: a layer_norm's with the same attributes
/// over the same shapes.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::layer_norm_op&, const step_copy_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstddef>

#include <nax/kernels/rows.hpp>
#include <nax/kernels/spelled_rows.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class layer_norm_step final : public kernels::step_kernel, public arena_allocated {
 public:
  // A builder's layer_norm: x, gamma, beta (only one recognized from primitives lacks gamma or
  // beta, and it runs spelled_layer_norm_step).
  layer_norm_step(kernels::rows_plan plan, const graph::program_step& s)
      : plan_(std::move(plan)),
        eps_(s.as<graph::layer_norm_op>().epsilon),
        x_(s.args[0]),
        gamma_(s.args[1]),
        beta_(s.args[2]),
        out_(s.result) {}
  /// `like`'s plan, s's operands.
  layer_norm_step(const layer_norm_step& like, const graph::program_step& s)
      : layer_norm_step(like.plan_, s) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_layer_norm(plan_, values[x_], values[gamma_], values[beta_], eps_, values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  double eps_ = 0;
  graph::value_index x_, gamma_, beta_, out_;
};

class spelled_layer_norm_step final : public kernels::step_kernel, public arena_allocated {
 public:
  spelled_layer_norm_step(shared_plan<kernels::spelled_rows_plan> plan,
                          const graph::program_step& s)
      : plan_(std::move(plan)), x_(s.args[0]), out_(s.result) {
    const graph::layer_norm_op& op = s.as<graph::layer_norm_op>();
    spelling_ = {op.square_by_pow, op.divide_by_sqrt, op.epsilon,
                 op.has_gamma,     op.has_beta,       op.centered};
    std::size_t a = 1;
    if (op.has_gamma) gamma_ = s.args[a++];
    if (op.has_beta) beta_ = s.args[a++];
  }
  spelled_layer_norm_step(const spelled_layer_norm_step& like, const graph::program_step& s)
      : spelled_layer_norm_step(like.plan_, s) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_spelled_layer_norm(
        *plan_, spelling_, values[x_], gamma_ == graph::no_value ? nullptr : values[gamma_],
        beta_ == graph::no_value ? nullptr : values[beta_], values[out_]);
  }

 private:
  shared_plan<kernels::spelled_rows_plan> plan_;  // (over a kilobyte: shared, not copied)
  kernels::layer_norm_spelling spelling_;
  graph::value_index x_, gamma_ = graph::no_value, beta_ = graph::no_value, out_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::layer_norm_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& out = shapes[s.result];
  const std::size_t axis = op.axis;
  std::size_t k = 1;
  for (bool present : {op.has_gamma, op.has_beta}) {
    if (!present) continue;
    const nax::shape& p = shapes[s.args[k]];
    if (p[0].extent() != out[axis].extent())
      throw_extent_mismatch(s, p, 0, out, axis, k == 1 && op.has_gamma ? "gamma" : "beta");
    ++k;
  }
  if (op.primitives)
    return std::make_unique<detail::spelled_layer_norm_step>(
        shared_plan(
            kernels::plan_spelled_rows(out.dtype(), extents_of(out), axis, ops::reduce_kind::mean)),
        s);
  return std::make_unique<detail::layer_norm_step>(
      kernels::plan_rows(out.dtype(), extents_of(out), axis), s);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::layer_norm_op& op, const step_copy_request& request) {
  const graph::program_step& s = request.step;
  const kernels::step_kernel& like = request.like;
  if (op.primitives)
    return std::make_unique<detail::spelled_layer_norm_step>(
        static_cast<const detail::spelled_layer_norm_step&>(like), s);
  return std::make_unique<detail::layer_norm_step>(
      static_cast<const detail::layer_norm_step&>(like), s);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
