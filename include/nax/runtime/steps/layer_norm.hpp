#pragma once
// The step of layer_norm along one axis: the row kernel (kernels/rows.hpp). A layer_norm the
// fusion pass recognized from primitives may lack gamma or beta: the step then holds ones and
// zeros of the axis's extent.

#include <memory>
#include <span>

#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>

namespace nax::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_layer_norm_step(
    const graph::program_step& s, std::span<const nax::shape> shapes);

/// The kernel of layer_norm step s, copied from `like`: a layer_norm's with the same attributes
/// over the same shapes.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_layer_norm_step(
    const kernels::step_kernel& like, const graph::program_step& s);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstddef>
#include <nax/runtime/kernel_arena.hpp>
#include <vector>

#include <nax/kernels/rows.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::runtime {
namespace detail {

class layer_norm_step final : public kernels::step_kernel, public arena_allocated {
 public:
  layer_norm_step(kernels::rows_plan plan, const graph::program_step& s, std::size_t n)
      : plan_(std::move(plan)), x_(s.args[0]), out_(s.result) {
    const graph::layer_norm_op& op = s.as<graph::layer_norm_op>();
    eps_ = op.epsilon;
    std::size_t a = 1;
    if (op.has_gamma) gamma_ = s.args[a++];
    if (op.has_beta) beta_ = s.args[a++];
    if (op.has_gamma && op.has_beta) return;
    const std::size_t element = plan_.type == nax::dtype::f64 ? sizeof(double) : sizeof(float);
    ones_.resize(n * element);
    zeros_.assign(n * element, std::byte{0});
    for (std::size_t i = 0; i < n; ++i) {
      if (plan_.type == nax::dtype::f64)
        reinterpret_cast<double*>(ones_.data())[i] = 1.0;
      else
        reinterpret_cast<float*>(ones_.data())[i] = 1.0f;
    }
  }
  /// `like`'s plan and constants, s's operands.
  layer_norm_step(const layer_norm_step& like, const graph::program_step& s)
      : layer_norm_step(like) {
    x_ = s.args[0];
    out_ = s.result;
    const graph::layer_norm_op& op = s.as<graph::layer_norm_op>();
    std::size_t a = 1;
    if (op.has_gamma) gamma_ = s.args[a++];
    if (op.has_beta) beta_ = s.args[a++];
  }
  void run(void* const* values, std::byte*) const override {
    kernels::run_layer_norm(
        plan_, values[x_], gamma_ == graph::no_value ? ones_.data() : values[gamma_],
        beta_ == graph::no_value ? zeros_.data() : values[beta_], eps_, values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  double eps_ = 0;
  graph::value_index x_, gamma_ = graph::no_value, beta_ = graph::no_value, out_;
  std::vector<std::byte> ones_, zeros_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_layer_norm_step(
    const graph::program_step& s, std::span<const nax::shape> shapes) {
  const graph::layer_norm_op& op = s.as<graph::layer_norm_op>();
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
  return std::make_unique<detail::layer_norm_step>(
      kernels::plan_rows(out.dtype(), extents_of(out), axis), s, out[axis].extent());
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_layer_norm_step(
    const kernels::step_kernel& like, const graph::program_step& s) {
  return std::make_unique<detail::layer_norm_step>(
      static_cast<const detail::layer_norm_step&>(like), s);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
