#pragma once
// The step of convert: each element converted as static_cast does, in one loop per pair of
// element types.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::convert_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstddef>
#include <cstdint>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

template <class From, class To>
class convert_step final : public kernels::step_kernel, public arena_allocated {
 public:
  convert_step(graph::value_index in, graph::value_index out, std::size_t n)
      : in_(in), out_(out), n_(n) {}
  void run(void* const* values, std::byte*) const override {
    const From* x = static_cast<const From*>(values[in_]);
    To* y = static_cast<To*>(values[out_]);
    for (std::size_t i = 0; i < n_; ++i) y[i] = static_cast<To>(x[i]);
  }

 private:
  graph::value_index in_, out_;
  std::size_t n_;
};

template <class F>
bool with_element_type(nax::dtype t, F&& f) {
  switch (t) {
    case nax::dtype::f32: f(static_cast<float*>(nullptr)); return true;
    case nax::dtype::f64: f(static_cast<double*>(nullptr)); return true;
    case nax::dtype::i32: f(static_cast<std::int32_t*>(nullptr)); return true;
    case nax::dtype::i64: f(static_cast<std::int64_t*>(nullptr)); return true;
    case nax::dtype::u8: f(static_cast<std::uint8_t*>(nullptr)); return true;
    case nax::dtype::boolean: f(static_cast<bool*>(nullptr)); return true;
  }
  return false;
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::convert_op&,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const nax::shape& x = shapes[s.args[0]];
  const nax::shape& y = shapes[s.result];
  std::unique_ptr<kernels::step_kernel> k;
  detail::with_element_type(x.dtype(), [&]<class From>(From*) {
    detail::with_element_type(y.dtype(), [&]<class To>(To*) {
      k = std::make_unique<detail::convert_step<From, To>>(s.args[0], s.result, y.num_elements());
    });
  });
  if (!k)
    nax::detail::throw_shape_error("nax::executable: no convert kernel from ", x.to_string(),
                                   " to ", nax::name(y.dtype()));
  return k;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
