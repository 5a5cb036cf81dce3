#pragma once
// What the shape inference of every op shares: reading operands, resolving an axis given by
// position or name, and the rule that a name appears at most once in a shape.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// "f32[batch, 512], f32[512]": the shapes of nodes `args` of g, for messages.
NAX_RUNTIME_INLINE std::string shapes_of(const ir& g, std::span<const node_id> args);

/// The position of axis `a` of operand `operand` (of shape s) of op `op`; nax::shape_error
/// naming the op, the operand and the axis if s has no such axis.
NAX_RUNTIME_INLINE std::size_t resolve_axis(std::string_view op, std::size_t operand,
                                            const nax::shape& s, const axis_ref& a);

/// Axes are told apart by name (broadcasting, reductions, bindings), so a name appears once in a
/// shape: nax::shape_error naming the op and the axis otherwise.
NAX_RUNTIME_INLINE void check_unique_names(const node& n, std::string_view op);

/// "axis 'seq'" for a named dim, else "axis 2".
NAX_RUNTIME_INLINE std::string axis_subject(const dim& d, std::size_t i);

/// The element types an op takes, and the one message for any other: nax::shape_error
/// "nax::graph::<op>: needs f32 or f64 elements, not i32[batch, 4]" (floating), or "needs f32,
/// f64, i32 or i64 elements, not ..." (numeric), naming the operand's shape.
NAX_RUNTIME_INLINE void require_floating(std::string_view op, const nax::shape& s);
NAX_RUNTIME_INLINE void require_numeric(std::string_view op, const nax::shape& s);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/ops/dtype_rules.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE std::string shapes_of(const ir& g, std::span<const node_id> args) {
  std::string s;
  for (std::size_t i = 0; i < args.size(); ++i)
    s += nax::detail::message(i ? ", " : "", g[args[i]].shape.to_string());
  return s;
}

NAX_RUNTIME_INLINE std::size_t resolve_axis(std::string_view op, std::size_t operand,
                                            const nax::shape& s, const axis_ref& a) {
  if (a.index == axis_ref::by_name) {
    if (auto i = s.index_of(a.name)) return *i;
    nax::detail::throw_shape_error("nax::graph::", op, ": operand ", operand, " (", s.to_string(),
                                   ") has no axis '", a.name, "'");
  }
  if (a.index >= s.rank())
    nax::detail::throw_shape_error("nax::graph::", op, ": axis ", a.index,
                                   " is out of range for operand ", operand, " (", s.to_string(),
                                   ", rank ", s.rank(), ")");
  return a.index;
}

NAX_RUNTIME_INLINE void check_unique_names(const node& n, std::string_view op) {
  const nax::shape& s = n.shape;
  for (std::size_t i = 0; i < s.rank(); ++i)
    for (std::size_t j = i + 1; j < s.rank(); ++j)
      if (s[i].has_name() && s[i].name() == s[j].name()) {
        if (n.kind() == op_kind::parameter)
          nax::detail::throw_shape_error("nax::graph::parameter: '", n.as<parameter_op>().name,
                                         "' (", s.to_string(), ") has axis '", s[i].name().view(),
                                         "' twice");
        nax::detail::throw_shape_error("nax::graph::", op, ": the result would have axis '",
                                       s[i].name().view(), "' twice (dimensions ", i, " and ", j,
                                       ")");
      }
}

NAX_RUNTIME_INLINE std::string axis_subject(const dim& d, std::size_t i) {
  return d.has_name() ? nax::detail::message("axis '", d.name().view(), "'")
                      : nax::detail::message("axis ", i);
}

NAX_RUNTIME_INLINE void require_floating(std::string_view op, const nax::shape& s) {
  if (!ops::is_floating(s.dtype()))
    nax::detail::throw_shape_error("nax::graph::", op, ": needs f32 or f64 elements, not ",
                                   s.to_string());
}

NAX_RUNTIME_INLINE void require_numeric(std::string_view op, const nax::shape& s) {
  if (!ops::is_numeric(s.dtype()))
    nax::detail::throw_shape_error("nax::graph::", op,
                                   ": needs f32, f64, i32 or i64 elements, not ", s.to_string());
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
