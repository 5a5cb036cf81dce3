#pragma once
// The extents of a program's value axes (graph/value_axis.hpp) for one run: each axis's size
// program evaluated over the run's inputs and the extents before it, and checked against the
// axis's bound before the specialization is looked up, so that a bad size stops the run before
// any step runs.

#include <span>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/binding_key.hpp>
#include <nax/runtime/dyn_tensor.hpp>

namespace nax::NAX_ISA::runtime {

/// Fills the value axes' places of `key` (after the input axes' extents, which it reads) from
/// `inputs`. nax::shape_error naming the axis, the size and the bound if a size is outside
/// [0, bound].
NAX_RUNTIME_INLINE void compute_value_axes(const graph::program& p,
                                           std::span<const dyn_tensor> inputs, extents_key& key);

/// The size of value axis `a` of p over the extents in `key` (those before it) and `inputs` (the
/// run's; empty if a's size reads no parameter). nax::shape_error naming the axis if it
/// overflows int64.
NAX_RUNTIME_INLINE std::int64_t evaluate_size(const graph::program& p, const graph::value_axis& a,
                                              const extents_key& key,
                                              std::span<const dyn_tensor> inputs);

/// nax::shape_error if an extent of a value axis in `key` is above its bound (a binding given
/// to pre_specialize).
NAX_RUNTIME_INLINE void check_value_axes(const graph::program& p, const extents_key& key);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <cstdint>
#include <cstring>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>

namespace nax::NAX_ISA::runtime {

namespace detail {

inline std::int64_t scalar_of(const dyn_tensor& t) {
  if (t.dtype() == nax::dtype::i64) {
    std::int64_t v = 0;
    std::memcpy(&v, t.data(), sizeof v);
    return v;
  }
  std::int32_t v = 0;
  std::memcpy(&v, t.data(), sizeof v);
  return v;
}

[[noreturn]] inline void throw_size_error(const graph::value_axis& a, std::int64_t size) {
  if (size < 0)
    nax::detail::throw_shape_error("nax::graph::", a.op, ": axis '", a.name.view(), "': size ",
                                   size, " is negative");
  nax::detail::throw_shape_error("nax::graph::", a.op, ": axis '", a.name.view(), "': size ", size,
                                 " exceeds its bound ", a.bound);
}

}  // namespace detail

NAX_RUNTIME_INLINE std::int64_t evaluate_size(const graph::program& p, const graph::value_axis& a,
                                              const extents_key& key,
                                              std::span<const dyn_tensor> inputs) {
  nax::detail::small_vector<std::int64_t, 8> stack;
  for (const graph::size_term& t : a.size) {
    using k = graph::size_term::kind;
    if (t.k == k::constant) {
      stack.push_back(t.value);
    } else if (t.k == k::parameter) {
      stack.push_back(detail::scalar_of(inputs[t.parameter]));
    } else if (t.k == k::nonnegative) {
      if (stack.back() < 0)
        nax::detail::throw_shape_error("nax::graph::", a.op, ": axis '", a.name.view(),
                                       "': a part of its size is negative (", stack.back(), ")");
    } else if (t.k == k::extent) {
      const auto at = static_cast<std::size_t>(
          std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), t.axis) - p.dynamic_axes.begin());
      stack.push_back(static_cast<std::int64_t>(key[at]));
    } else {
      const std::int64_t r = stack.back();
      stack.resize(stack.size() - 1);
      std::int64_t& l = stack.back();
      bool overflow = false;
      if (t.k == k::add) overflow = __builtin_add_overflow(l, r, &l);
      if (t.k == k::sub) overflow = __builtin_sub_overflow(l, r, &l);
      if (t.k == k::mul) overflow = __builtin_mul_overflow(l, r, &l);
      if (t.k == k::min) l = std::min(l, r);
      if (t.k == k::max) l = std::max(l, r);
      if (overflow)
        nax::detail::throw_shape_error("nax::graph::", a.op, ": axis '", a.name.view(),
                                       "': its size overflows int64");
    }
  }
  return stack.back();
}

NAX_RUNTIME_INLINE void compute_value_axes(const graph::program& p,
                                           std::span<const dyn_tensor> inputs, extents_key& key) {
  const std::size_t first = p.num_input_axes();
  for (std::size_t i = 0; i < p.value_axes.size(); ++i) {
    const graph::value_axis& a = p.value_axes[i];
    const std::int64_t size = evaluate_size(p, a, key, inputs);
    if (size < 0 || static_cast<std::uint64_t>(size) > a.bound) detail::throw_size_error(a, size);
    key[first + i] = static_cast<std::size_t>(size);
  }
}

NAX_RUNTIME_INLINE void check_value_axes(const graph::program& p, const extents_key& key) {
  const std::size_t first = p.num_input_axes();
  for (std::size_t i = 0; i < p.value_axes.size(); ++i)
    if (key[first + i] > p.value_axes[i].bound)
      detail::throw_size_error(p.value_axes[i], static_cast<std::int64_t>(key[first + i]));
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
