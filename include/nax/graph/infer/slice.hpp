#pragma once
// Shape inference of slice: entries start, start + step, ... below stop of one axis. On a dynamic
// axis the result's extent is static (stop must be given), unless the slice is all of it.

#include <cstdint>
#include <optional>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of the slice of node x of g, or nothing if it is all of x; nax::shape_error naming
/// the axis and the bound that start, stop or step break.
NAX_RUNTIME_INLINE std::optional<node> infer_slice(const ir& g, node_id x, axis_ref axis,
                                                   std::int64_t start, std::int64_t stop,
                                                   std::int64_t step);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <limits>
#include <string>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE std::optional<node> infer_slice(const ir& g, node_id x, axis_ref axis,
                                                   std::int64_t start, std::int64_t stop,
                                                   std::int64_t step) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("slice", 0, xs, axis);
  const dim& d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::slice(", xs.to_string(), "): ", why...);
  };
  const std::string subject = axis_subject(d, i);
  if (step < 1) fail("step ", step, " is not positive");
  if (start < 0) fail("start ", start, " is negative");
  if (stop < 0) fail("stop ", stop, " is negative (nax::graph::slice_end slices to the end)");
  std::int64_t end = stop;
  if (d.is_static()) {
    const auto extent = static_cast<std::int64_t>(d.extent());
    if (start > extent)
      fail("start ", start, " is out of range for ", subject, " (extent ", extent, ")");
    if (stop == slice_end)
      end = extent;
    else if (stop > extent)
      fail("stop ", stop, " is out of range for ", subject, " (extent ", extent, ")");
    if (start == 0 && end == extent && step == 1) return std::nullopt;
  } else if (stop == slice_end) {
    if (start == 0 && step == 1) return std::nullopt;
    fail("a slice to the end of dynamic ", subject, " must be all of it (start 0, step 1): ",
         "its extent would have no name to bind; give stop");
  } else if (d.has_bound() && static_cast<std::uint64_t>(stop) > d.bound()) {
    fail("stop ", stop, " exceeds the bound ", d.bound(), " of ", subject);
  }
  if (start > end) fail("start ", start, " is after stop ", end);
  constexpr std::int64_t max32 = std::numeric_limits<std::int32_t>::max();
  if (end > max32) fail("stop ", end, " does not fit in int32");
  if (step > max32) fail("step ", step, " does not fit in int32");
  node n;
  n.op = slice_op{static_cast<std::uint32_t>(i), start, end, step};
  n.inputs.push_back(x);
  nax::detail::small_vector<dim, 6> out;
  out.assign(xs.dims().begin(), xs.dims().end());
  out[i] = dim::named(d.name(), static_cast<std::size_t>((end - start + step - 1) / step));
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
