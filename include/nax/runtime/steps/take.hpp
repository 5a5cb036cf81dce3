#pragma once
// The steps of take (rows of the operand at run-time indices, copied) and scatter_add (rows of
// the updates added into a copy of the operand at the indices). Every index is checked before
// anything is written: one outside [0, extent) throws nax::shape_error naming it, its position
// in the indices by their axes' names, and the axis's extent.

#include <memory>
#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::take_op&,
                                                                   const step_request& request);

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::scatter_add_op&,
                                                                   const step_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <nax/runtime/kernel_arena.hpp>

#include <nax/core/around_axis.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/runtime/operand_layout.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

// Where the indices are and what they index: checks them all before a step writes.
struct take_indices {
  graph::value_index at = 0;
  bool wide = false;
  std::size_t count = 0;  // the number of indices
  std::size_t extent = 0;  // of the axis they index
  nax::shape shape;        // the indices' (concrete) shape, for the message
  nax::shape operand;      // the operand's, for the message
  std::uint32_t axis = 0;
  std::string_view op;

  std::size_t index(const void* p, std::size_t j) const {
    if (wide) return static_cast<std::size_t>(static_cast<const std::int64_t*>(p)[j]);
    return static_cast<std::size_t>(
        static_cast<std::int64_t>(static_cast<const std::int32_t*>(p)[j]));
  }
  void check(const void* p) const {
    for (std::size_t j = 0; j < count; ++j)
      if (index(p, j) >= extent) fail(p, j);  // (a negative index is a huge size_t)
  }
  [[noreturn]] void fail(const void* p, std::size_t j) const {
    const std::int64_t v = wide ? static_cast<const std::int64_t*>(p)[j]
                                : static_cast<const std::int32_t*>(p)[j];
    std::string where = "[";
    std::size_t r = j;
    std::string parts;
    for (std::size_t k = shape.rank(); k-- > 0;) {
      const std::size_t e = shape[k].extent();
      const std::string one = shape[k].has_name()
                                  ? nax::detail::message(shape[k].name().view(), "=", r % e)
                                  : nax::detail::message(r % e);
      parts = parts.empty() ? one : one + ", " + parts;
      r /= e;
    }
    where += parts + "]";
    const dim& d = operand[axis];
    const std::string subject =
        d.has_name() ? std::string(d.name().view()) : nax::detail::message("dimension ", axis);
    nax::detail::throw_shape_error("nax::graph::", op, ": index ", v, " at ", where,
                                   " is outside ", subject, "'s extent ", extent);
  }
};

class take_step final : public kernels::step_kernel, public arena_allocated {
 public:
  take_step(take_indices ix, graph::value_index in, graph::value_index out, std::size_t outer,
            std::size_t row_bytes)
      : ix_(std::move(ix)), in_(in), out_(out), outer_(outer), row_bytes_(row_bytes) {}
  void run(void* const* values, std::byte*) const override {
    const void* idx = values[ix_.at];
    ix_.check(idx);
    if (values[out_] == nullptr || row_bytes_ == 0) return;
    const auto* src = static_cast<const std::byte*>(values[in_]);
    auto* dst = static_cast<std::byte*>(values[out_]);
    const std::size_t m = ix_.count, n = ix_.extent;
    for (std::size_t o = 0; o < outer_; ++o)
      for (std::size_t j = 0; j < m; ++j)
        std::memcpy(dst + (o * m + j) * row_bytes_, src + (o * n + ix_.index(idx, j)) * row_bytes_,
                    row_bytes_);
  }

 private:
  take_indices ix_;
  graph::value_index in_, out_;
  std::size_t outer_, row_bytes_;
};

template <class T>
class scatter_add_step final : public kernels::step_kernel, public arena_allocated {
 public:
  scatter_add_step(take_indices ix, graph::value_index in, graph::value_index updates,
                   graph::value_index out, std::size_t outer, std::size_t inner)
      : ix_(std::move(ix)), in_(in), updates_(updates), out_(out), outer_(outer), inner_(inner) {}
  void run(void* const* values, std::byte*) const override {
    const void* idx = values[ix_.at];
    ix_.check(idx);
    const std::size_t m = ix_.count, n = ix_.extent;
    if (values[out_] == nullptr) return;
    T* dst = static_cast<T*>(values[out_]);
    if (values[out_] != values[in_])
      std::memcpy(dst, values[in_], outer_ * n * inner_ * sizeof(T));
    if (m == 0 || inner_ == 0) return;
    const T* up = static_cast<const T*>(values[updates_]);
    for (std::size_t o = 0; o < outer_; ++o)
      for (std::size_t j = 0; j < m; ++j) {
        T* row = dst + (o * n + ix_.index(idx, j)) * inner_;
        const T* add = up + (o * m + j) * inner_;
        for (std::size_t k = 0; k < inner_; ++k) row[k] += add[k];
      }
  }

 private:
  take_indices ix_;
  graph::value_index in_, updates_, out_;
  std::size_t outer_, inner_;
};

// The indices of step s (operand 1), indexing operand 0 along `axis`; outer and inner: the
// sizes of operand 0's axes before and after it.
inline take_indices indices_of(const graph::program_step& s, std::span<const nax::shape> shapes,
                               std::uint32_t axis, std::string_view op, std::size_t& outer,
                               std::size_t& inner) {
  const nax::shape& x = shapes[s.args[0]];
  const nax::shape& is = shapes[s.args[1]];
  const extents_vector ext = extents_of(x);
  const nax::detail::around_axis around = nax::detail::split_around(ext, axis);
  outer = around.outer;
  inner = around.inner;
  take_indices t;
  t.at = s.args[1];
  t.wide = is.dtype() == nax::dtype::i64;
  t.count = is.num_elements();
  t.extent = ext[axis];
  t.shape = is;
  t.operand = x;
  t.axis = axis;
  t.op = op;
  return t;
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::take_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const std::uint32_t axis = op.axis;
  std::size_t outer = 0, inner = 0;
  detail::take_indices ix = detail::indices_of(s, shapes, axis, "take", outer, inner);
  const std::size_t row = inner * size_of(shapes[s.args[0]].dtype());
  return std::make_unique<detail::take_step>(std::move(ix), s.args[0], s.result, outer, row);
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::scatter_add_op& op,
                                                                   const step_request& request) {
  const graph::program_step& s = request.step;
  const std::span<const nax::shape> shapes = request.shapes;
  const std::uint32_t axis = op.axis;
  std::size_t outer = 0, inner = 0;
  detail::take_indices ix = detail::indices_of(s, shapes, axis, "scatter_add", outer, inner);
  const nax::dtype t = shapes[s.args[0]].dtype();
  auto make = [&]<class T>(T*) -> std::unique_ptr<kernels::step_kernel> {
    return std::make_unique<detail::scatter_add_step<T>>(std::move(ix), s.args[0], s.args[2],
                                                         s.result, outer, inner);
  };
  switch (t) {
    case nax::dtype::f32: return make(static_cast<float*>(nullptr));
    case nax::dtype::f64: return make(static_cast<double*>(nullptr));
    case nax::dtype::i32: return make(static_cast<std::int32_t*>(nullptr));
    case nax::dtype::i64: return make(static_cast<std::int64_t*>(nullptr));
    default: break;
  }
  nax::detail::throw_shape_error("nax::executable: no scatter_add kernel for ",
                                 shapes[s.args[0]].to_string());
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
