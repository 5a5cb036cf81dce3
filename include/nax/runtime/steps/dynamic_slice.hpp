#pragma once
// The steps of the ops whose place or extent along an axis is a run-time value:
// get_dimension_size and set_dimension_size (extents known when specialized: the extent written
// as the result; the operand's first entries copied and the rest zeroed), dynamic_slice and
// dynamic_update_slice (a strided copy, kernels/copy.hpp, planned once; the start read and
// clamped per run).

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::dimension_size_op&,
                                                                   const step_request& request);

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::set_dimension_size_op&, const step_request& request);

/// nax::shape_error if the slice's size is above the operand's extent.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::dynamic_slice_op&,
                                                                   const step_request& request);

/// nax::shape_error if the update's extent is above the operand's.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::dynamic_update_slice_op&, const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

class dimension_size_step final : public kernels::step_kernel, public arena_allocated {
 public:
  dimension_size_step(graph::value_index out, std::int64_t extent, bool wide)
      : out_(out), extent_(extent), wide_(wide) {}
  void run(void* const* values, std::byte*) const override {
    if (wide_) {
      std::memcpy(values[out_], &extent_, sizeof extent_);
    } else {
      const auto v = static_cast<std::int32_t>(extent_);
      std::memcpy(values[out_], &v, sizeof v);
    }
  }

 private:
  graph::value_index out_;
  std::int64_t extent_;
  bool wide_;
};

class set_dimension_size_step final : public kernels::step_kernel, public arena_allocated {
 public:
  set_dimension_size_step(kernels::copy_plan kept, kernels::copy_plan zeros, std::size_t zeros_at,
                          graph::value_index in, graph::value_index out)
      : kept_(std::move(kept)), zeros_(std::move(zeros)), zeros_at_(zeros_at), in_(in), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_copy(kept_, values[in_], values[out_]);
    if (zeros_at_ != none)
      kernels::run_copy(zeros_, &zero_, static_cast<std::byte*>(values[out_]) + zeros_at_);
  }
  static constexpr std::size_t none = ~std::size_t{0};

 private:
  kernels::copy_plan kept_, zeros_;
  std::size_t zeros_at_;
  graph::value_index in_, out_;
  static constexpr std::uint64_t zero_ = 0;  // one element of any type, read with stride 0
};

// A run-time start (a rank-0 i32 or i64) clamped to [0, last].
inline std::size_t clamped_start(const void* start, bool wide, std::size_t last) {
  std::int64_t v = 0;
  if (wide) {
    std::memcpy(&v, start, sizeof v);
  } else {
    std::int32_t n = 0;
    std::memcpy(&n, start, sizeof n);
    v = n;
  }
  return v <= 0 ? 0 : std::min(static_cast<std::size_t>(v), last);
}

class dynamic_slice_step final : public kernels::step_kernel, public arena_allocated {
 public:
  dynamic_slice_step(kernels::copy_plan plan, graph::value_index in, graph::value_index start,
                     bool wide, std::size_t last, std::size_t step_bytes, graph::value_index out)
      : plan_(std::move(plan)),
        in_(in),
        start_(start),
        wide_(wide),
        last_(last),
        step_bytes_(step_bytes),
        out_(out) {}
  void run(void* const* values, std::byte*) const override {
    // (An empty input has no buffer to offset into, and its slice is empty too.)
    if (values[in_] == nullptr) return;
    const std::size_t at = clamped_start(values[start_], wide_, last_);
    kernels::run_copy(plan_, static_cast<const std::byte*>(values[in_]) + at * step_bytes_,
                      values[out_]);
  }

 private:
  kernels::copy_plan plan_;
  graph::value_index in_, start_;
  bool wide_;
  std::size_t last_, step_bytes_;
  graph::value_index out_;
};

class dynamic_update_slice_step final : public kernels::step_kernel, public arena_allocated {
 public:
  dynamic_update_slice_step(kernels::copy_plan whole, kernels::copy_plan part,
                            graph::value_index in, graph::value_index update,
                            graph::value_index start, bool wide, std::size_t last,
                            std::size_t step_bytes, graph::value_index out)
      : whole_(std::move(whole)),
        part_(std::move(part)),
        in_(in),
        update_(update),
        start_(start),
        wide_(wide),
        last_(last),
        step_bytes_(step_bytes),
        out_(out) {}
  void run(void* const* values, std::byte*) const override {
    const std::size_t at = clamped_start(values[start_], wide_, last_);
    if (values[out_] != values[in_]) kernels::run_copy(whole_, values[in_], values[out_]);
    // (An empty result has no buffer to offset into, and the update is empty too.)
    if (values[out_] == nullptr) return;
    kernels::run_copy(part_, values[update_],
                      static_cast<std::byte*>(values[out_]) + at * step_bytes_);
  }

 private:
  kernels::copy_plan whole_, part_;
  graph::value_index in_, update_, start_;
  bool wide_;
  std::size_t last_, step_bytes_;
  graph::value_index out_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::dimension_size_op& op, const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& in = shapes[s.args[0]];
  const std::size_t extent = in[op.axis].extent();
  return std::make_unique<detail::dimension_size_step>(s.result, static_cast<std::int64_t>(extent),
                                                       shapes[s.result].dtype() == nax::dtype::i64);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::set_dimension_size_op& op, const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& in = shapes[s.args[0]];
  const nax::shape& out = shapes[s.result];
  const std::size_t axis = op.axis;
  const std::size_t extent = in[axis].extent(), size = out[axis].extent();
  const std::size_t kept = std::min(extent, size), element = size_of(in.dtype());
  extents_vector ext = extents_of(out);
  ext[axis] = kept;
  const strides_vector dst = dense_strides(out);
  kernels::copy_plan keep = kernels::plan_copy(element, ext, dense_strides(in), dst);
  if (kept == size)
    return std::make_unique<detail::set_dimension_size_step>(std::move(keep), kernels::copy_plan{},
                                                             detail::set_dimension_size_step::none,
                                                             s.args[0], s.result);
  // Past the operand's extent: zeros (one zero element read with stride 0).
  ext[axis] = size - kept;
  strides_vector zero;
  for (std::size_t k = 0; k < ext.size(); ++k) zero.push_back(0);
  return std::make_unique<detail::set_dimension_size_step>(
      std::move(keep), kernels::plan_copy(element, ext, zero, dst),
      kept * static_cast<std::size_t>(dst[axis]) * element, s.args[0], s.result);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::dynamic_slice_op& op, const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& in = shapes[s.args[0]];
  const nax::shape& out = shapes[s.result];
  const std::size_t axis = op.axis;
  const std::size_t extent = in[axis].extent(), size = out[axis].extent();
  if (size > extent)
    nax::detail::throw_shape_error("nax::graph::dynamic_slice: size ", size,
                                   " is more than the extent ", extent, " of ", in[axis].describe(),
                                   " (", nax::detail::concrete_string(in), ")");
  const std::size_t element = size_of(in.dtype());
  const strides_vector src = dense_strides(in);
  return std::make_unique<detail::dynamic_slice_step>(
      kernels::plan_copy(element, extents_of(out), src, dense_strides(out)), s.args[0], s.args[1],
      shapes[s.args[1]].dtype() == nax::dtype::i64, extent - size,
      static_cast<std::size_t>(src[axis]) * element, s.result);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(
    const graph::dynamic_update_slice_op& op, const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& in = shapes[s.args[0]];
  const nax::shape& update = shapes[s.args[1]];
  const std::size_t axis = op.axis;
  const std::size_t extent = in[axis].extent(), size = update[axis].extent();
  if (size > extent)
    nax::detail::throw_shape_error("nax::graph::dynamic_update_slice: the update's extent ", size,
                                   " is more than the extent ", extent, " of ", in[axis].describe(),
                                   " (", nax::detail::concrete_string(in), ")");
  const std::size_t element = size_of(in.dtype());
  const strides_vector dst = dense_strides(in);
  const std::size_t bytes[1] = {in.num_bytes()};
  const std::ptrdiff_t unit[1] = {1};
  return std::make_unique<detail::dynamic_update_slice_step>(
      kernels::plan_copy(1, bytes, unit, unit),
      kernels::plan_copy(element, extents_of(update), dense_strides(update), dst), s.args[0],
      s.args[1], s.args[2], shapes[s.args[2]].dtype() == nax::dtype::i64, extent - size,
      static_cast<std::size_t>(dst[axis]) * element, s.result);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
