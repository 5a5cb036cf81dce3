#pragma once
// Shape inference of the ops whose place along an axis is a run-time value (StableHLO's
// get_dimension_size, dynamic_slice and dynamic_update_slice). A start is a rank-0 integer of the
// graph; the extents stay what names can bind: a dynamic slice's size is static, and an update
// keeps its operand's shape.

#include <cstdint>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of x's run-time extent along `axis`, a rank-0 `type` (i32 or i64).
NAX_RUNTIME_INLINE node infer_dimension_size(const ir& g, node_id x, axis_ref axis,
                                             nax::dtype type);

/// The node of `size` entries of x along `axis` from the run-time `start`. nax::shape_error if
/// start is not a rank-0 integer, or size is above the axis's extent or bound.
NAX_RUNTIME_INLINE node infer_dynamic_slice(const ir& g, node_id x, axis_ref axis, node_id start,
                                            std::int64_t size);

/// The node of x with `update` written along `axis` from the run-time `start`. nax::shape_error
/// if start is not a rank-0 integer, update's type, rank or other axes are not x's, or its
/// extent along the axis can be above x's.
NAX_RUNTIME_INLINE node infer_dynamic_update_slice(const ir& g, node_id x, node_id update,
                                                   axis_ref axis, node_id start);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

namespace dynamic_slice_detail {

inline void check_start(const ir& g, std::string_view op, node_id start) {
  const nax::shape& s = g[start].shape;
  if (s.rank() != 0 || (s.dtype() != nax::dtype::i32 && s.dtype() != nax::dtype::i64))
    nax::detail::throw_shape_error("nax::graph::", op, ": the start is ", s.to_string(),
                                   "; it must be a rank-0 i32 or i64");
}

}  // namespace dynamic_slice_detail

NAX_RUNTIME_INLINE node infer_dimension_size(const ir& g, node_id x, axis_ref axis,
                                             nax::dtype type) {
  const nax::shape& xs = g[x].shape;
  if (type != nax::dtype::i32 && type != nax::dtype::i64)
    nax::detail::throw_shape_error("nax::graph::get_dimension_size: the result type is ",
                                   nax::name(type), "; it must be i32 or i64");
  node n;
  n.op = dimension_size_op{
      static_cast<std::uint32_t>(resolve_axis("get_dimension_size", 0, xs, axis))};
  n.inputs.push_back(x);
  n.shape = nax::shape(type, {});
  return n;
}

NAX_RUNTIME_INLINE node infer_dynamic_slice(const ir& g, node_id x, axis_ref axis, node_id start,
                                            std::int64_t size) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("dynamic_slice", 0, xs, axis);
  dynamic_slice_detail::check_start(g, "dynamic_slice", start);
  const dim& d = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::dynamic_slice(", xs.to_string(), "): ", why...);
  };
  if (size < 0) fail("size ", size, " is negative");
  if (size > std::numeric_limits<std::int32_t>::max())
    fail("size ", size, " does not fit in int32");
  const auto n = static_cast<std::size_t>(size);
  if (d.is_static() && n > d.extent())
    fail("size ", size, " is more than the extent ", d.extent(), " of ", axis_subject(d, i));
  if (d.is_dynamic() && d.has_bound() && n > d.bound())
    fail("size ", size, " is more than the bound ", d.bound(), " of ", axis_subject(d, i));
  node r;
  r.op = dynamic_slice_op{static_cast<std::uint32_t>(i)};
  r.inputs.push_back(x);
  r.inputs.push_back(start);
  std::vector<dim> dims(xs.dims().begin(), xs.dims().end());
  dims[i] = d.has_name() ? dim::named(d.name(), n) : dim(n);
  r.shape = nax::shape(xs.dtype(), std::span<const dim>(dims));
  return r;
}

NAX_RUNTIME_INLINE node infer_dynamic_update_slice(const ir& g, node_id x, node_id update,
                                                   axis_ref axis, node_id start) {
  const nax::shape& xs = g[x].shape;
  const nax::shape& us = g[update].shape;
  const std::size_t i = resolve_axis("dynamic_update_slice", 0, xs, axis);
  dynamic_slice_detail::check_start(g, "dynamic_update_slice", start);
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::dynamic_update_slice(", xs.to_string(), ", ",
                                   us.to_string(), "): ", why...);
  };
  if (us.dtype() != xs.dtype()) fail("the update's type is not the operand's");
  if (us.rank() != xs.rank()) fail("the update's rank is not the operand's");
  for (std::size_t k = 0; k < xs.rank(); ++k) {
    if (k == i) continue;
    if (!(us[k] == xs[k]))
      fail("dimension ", k, " of the update (", us[k].describe(), ") is ", us[k].to_string(),
           ", the operand's is ", xs[k].to_string());
  }
  const dim &d = xs[i], &u = us[i];
  // The update's extent must fit: checked here where both are known, else when specialized.
  const std::size_t most = d.is_static() ? d.extent() : d.bound();
  if (u.is_static() && most != nax::unbounded && u.extent() > most)
    fail("the update's extent ", u.extent(), " along ", axis_subject(d, i), " is more than the ",
         d.is_static() ? "extent " : "bound ", most);
  if (u.is_dynamic() && d.is_static() && (!u.has_bound() || u.bound() > d.extent()))
    fail("the update's ", u.describe(), " may be more than the extent ", d.extent(), " of ",
         axis_subject(d, i));
  node r;
  r.op = dynamic_update_slice_op{static_cast<std::uint32_t>(i)};
  r.inputs.push_back(x);
  r.inputs.push_back(update);
  r.inputs.push_back(start);
  r.shape = xs;
  return r;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
