#pragma once
// The steps of the ops that make a tensor from its shape alone: iota (kernels/iota.hpp) and
// random (kernels/random.hpp), split over the thread pool.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::iota_op&,
                                                                   const step_request& request);

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::random_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstdint>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/core/around_axis.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/iota.hpp>
#include <nax/kernels/random.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

template <class T>
class iota_step final : public kernels::step_kernel, public arena_allocated {
 public:
  iota_step(graph::value_index out, std::size_t outer, std::size_t n, std::size_t inner)
      : out_(out), outer_(outer), n_(n), inner_(inner) {}
  void run(void* const* values, std::byte*) const override {
    kernels::fill_iota(static_cast<T*>(values[out_]), outer_, n_, inner_);
  }

 private:
  graph::value_index out_;
  std::size_t outer_, n_, inner_;
};

template <class T>
class random_step final : public kernels::step_kernel, public arena_allocated {
 public:
  random_step(graph::value_index out, std::size_t n, std::uint64_t key, ops::distribution d,
              double a, double b)
      : out_(out), n_(n), key_(key), d_(d), a_(a), b_(b) {}
  void run(void* const* values, std::byte*) const override {
    kernels::fill_random(static_cast<T*>(values[out_]), n_, key_, d_, a_, b_);
  }

 private:
  graph::value_index out_;
  std::size_t n_;
  std::uint64_t key_;
  ops::distribution d_;
  double a_, b_;
};

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::iota_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& out = shapes[s.result];
  const extents_vector ext = extents_of(out);
  const auto [outer, n, inner] = nax::detail::split_around(ext, op.axis);
  switch (out.dtype()) {
    case nax::dtype::f32:
      return std::make_unique<detail::iota_step<float>>(s.result, outer, n, inner);
    case nax::dtype::f64:
      return std::make_unique<detail::iota_step<double>>(s.result, outer, n, inner);
    case nax::dtype::i32:
      return std::make_unique<detail::iota_step<std::int32_t>>(s.result, outer, n, inner);
    case nax::dtype::i64:
      return std::make_unique<detail::iota_step<std::int64_t>>(s.result, outer, n, inner);
    default: break;
  }
  nax::detail::throw_shape_error("nax::executable: no iota kernel for ", out.to_string());
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::random_op& op,
                                                                   const step_request& request) {
  const nax::shape& out = request.shapes[request.step.result];
  const graph::value_index result = request.step.result;
  const std::uint64_t key = ops::random_key(op.key);
  const std::size_t n = out.num_elements();
  if (out.dtype() == nax::dtype::f32)
    return std::make_unique<detail::random_step<float>>(result, n, key, op.distribution, op.a,
                                                        op.b);
  if (out.dtype() == nax::dtype::f64)
    return std::make_unique<detail::random_step<double>>(result, n, key, op.distribution, op.a,
                                                         op.b);
  nax::detail::throw_shape_error("nax::executable: no random kernel for ", out.to_string());
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
