#pragma once
// How a step reads its operands, from their concrete shapes: extents, dense strides, and the
// strides of an operand read over its result's axes (by the one broadcast rule,
// core/broadcast.hpp). Extents that a binding made disagree throw, naming the step and the axis:
// symbolic inference cannot prove everything (an axis unified with a static extent may be bound
// to another).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/program.hpp>

namespace nax::NAX_ISA::runtime {

using extents_vector = nax::detail::small_vector<std::size_t, 6>;
using strides_vector = nax::detail::small_vector<std::ptrdiff_t, 6>;

/// The extents of a concrete shape.
NAX_RUNTIME_INLINE extents_vector extents_of(const nax::shape& s);

/// The strides (in elements) of a dense row-major tensor of concrete shape s.
NAX_RUNTIME_INLINE strides_vector dense_strides(const nax::shape& s);

/// What step s is called in messages ("tanh", "reduce_sum", "fused: add, gelu").
NAX_RUNTIME_INLINE std::string step_label(const graph::program_step& s);

/// nax::shape_error: axis ai of a (`what`) and axis bi of the result b of step s disagree.
[[noreturn]] NAX_RUNTIME_INLINE void throw_extent_mismatch(const graph::program_step& s,
                                                           const nax::shape& a, std::size_t ai,
                                                           const nax::shape& b, std::size_t bi,
                                                           std::string_view what);

/// The strides of dense operand `in` (operand `operand` of step s) over the axes of `out`, its
/// axis i read along out's axis axis_map[i] (an axis of extent 1 broadcasts).
NAX_RUNTIME_INLINE strides_vector operand_strides(const graph::program_step& s,
                                                  const nax::shape& in, std::size_t operand,
                                                  const nax::shape& out,
                                                  std::span<const std::size_t> axis_map);

/// The strides of an elementwise operand over its result, placed by the broadcast rule.
NAX_RUNTIME_INLINE strides_vector broadcast_operand_strides(const graph::program_step& s,
                                                            const nax::shape& in,
                                                            std::size_t operand,
                                                            const nax::shape& out);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/broadcast.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/kernels/elementwise.hpp>
#include <nax/runtime/dyn_tensor.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE extents_vector extents_of(const nax::shape& s) {
  extents_vector e;
  e.resize(s.rank());
  for (std::size_t i = 0; i < s.rank(); ++i) e[i] = s[i].extent();
  return e;
}

NAX_RUNTIME_INLINE strides_vector dense_strides(const nax::shape& s) {
  strides_vector st;
  st.resize(s.rank());
  nax::core_detail::fill_row_major_strides(extents_of(s), st);
  return st;
}

NAX_RUNTIME_INLINE std::string step_label(const graph::program_step& s) {
  if (const auto* e = s.op.get_if<graph::external_op>()) return e->kernel->label();
  return graph::op_label(s.op);
}

[[noreturn]] NAX_RUNTIME_INLINE void throw_extent_mismatch(const graph::program_step& s,
                                                           const nax::shape& a, std::size_t ai,
                                                           const nax::shape& b, std::size_t bi,
                                                           std::string_view what) {
  const dim& d = a[ai].has_name() ? a[ai] : b[bi];
  nax::detail::throw_shape_error("nax::graph::", step_label(s), ": ", d.describe(), " is ",
                                 a[ai].extent(), " in ", what, " but ", b[bi].extent(),
                                 " in the result (", nax::detail::concrete_string(a), " vs ",
                                 nax::detail::concrete_string(b), ")");
}

NAX_RUNTIME_INLINE strides_vector operand_strides(const graph::program_step& s,
                                                  const nax::shape& in, std::size_t operand,
                                                  const nax::shape& out,
                                                  std::span<const std::size_t> axis_map) {
  const extents_vector in_ext = extents_of(in), out_ext = extents_of(out);
  for (std::size_t i = 0; i < in.rank(); ++i)
    if (in_ext[i] != 1 && in_ext[i] != out_ext[axis_map[i]])
      throw_extent_mismatch(s, in, i, out, axis_map[i], nax::detail::message("operand ", operand));
  strides_vector st;
  st.resize(out.rank());
  kernels::broadcast_strides(in_ext, axis_map, out_ext, std::span(st.data(), st.size()));
  return st;
}

NAX_RUNTIME_INLINE strides_vector broadcast_operand_strides(const graph::program_step& s,
                                                            const nax::shape& in,
                                                            std::size_t operand,
                                                            const nax::shape& out) {
  extents_vector map;
  map.resize(in.rank());
  broadcast_axis_map(in, out, std::span(map.data(), map.size()));
  return operand_strides(s, in, operand, out, map);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
