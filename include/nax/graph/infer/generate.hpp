#pragma once
// Shape inference of the ops that make a tensor from nothing but its shape: iota (positions
// along an axis) and random. Their shape is given; every dynamic axis of it must be named (the
// runtime binds it by name, as an input's axis or a renamed one).

#include <string>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>
#include <nax/ops/random.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of the positions along `axis` of shape s (f32, f64, i32 or i64).
NAX_RUNTIME_INLINE node infer_iota(const nax::shape& s, axis_ref axis);

/// The node of a random tensor of shape s (f32 or f64): distribution d with parameters a, b
/// (lo <= hi, or stddev >= 0; std::invalid_argument otherwise), stream `key`.
NAX_RUNTIME_INLINE node infer_random(const nax::shape& s, ops::distribution d, nax::rng key,
                                     double a, double b);

/// nax::shape_error naming `op` if s has a dynamic dimension without a name, or a name twice.
NAX_RUNTIME_INLINE void check_generated_shape(std::string_view op, const nax::shape& s);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE void check_generated_shape(std::string_view op, const nax::shape& s) {
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (s[i].is_dynamic() && !s[i].has_name())
      nax::detail::throw_shape_error("nax::graph::", op, "(", s.to_string(), "): dimension ", i,
                                     " is dynamic without a name; name it so that runs can bind "
                                     "its extent");
  node n;
  n.shape = s;
  check_unique_names(n, op);
}

NAX_RUNTIME_INLINE node infer_iota(const nax::shape& s, axis_ref axis) {
  require_numeric("iota", s);
  check_generated_shape("iota", s);
  node n;
  n.op = iota_op{static_cast<std::uint32_t>(resolve_axis("iota", 0, s, axis))};
  n.shape = s;
  return n;
}

NAX_RUNTIME_INLINE node infer_random(const nax::shape& s, ops::distribution d, nax::rng key,
                                     double a, double b) {
  const std::string op = nax::detail::message("random_", ops::name(d));
  require_floating(op, s);
  ops::check_random_parameters(nax::detail::message("nax::graph::", op), d, a, b);
  check_generated_shape(op, s);
  random_op attrs;
  attrs.distribution = d;
  attrs.key = key;
  attrs.a = a;
  attrs.b = b;
  node n;
  n.op = attrs;
  n.shape = s;
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
