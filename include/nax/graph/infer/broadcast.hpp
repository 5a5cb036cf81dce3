#pragma once
// Shape inference of broadcast: the operand repeated to a target shape, its axes placed by the
// one broadcast rule (core/broadcast.hpp: by name when both are named on every axis, else from
// the right), each the target's axis there or a static 1.

#include <optional>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of node x of g broadcast to `target` (x's element type), or nothing if that is x's
/// own shape; nax::shape_error naming the axis that does not broadcast.
NAX_RUNTIME_INLINE std::optional<node> infer_broadcast(const ir& g, node_id x,
                                                       const nax::shape& target);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <string>
#include <vector>

#include <nax/core/broadcast.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>
#include <nax/graph/infer/reshape.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE std::optional<node> infer_broadcast(const ir& g, node_id x,
                                                       const nax::shape& target) {
  const nax::shape& xs = g[x].shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::broadcast(", xs.to_string(), "): ", why...);
  };
  const std::string ts = target.to_string();
  check_target(xs, target, fail);
  const bool by_name = broadcasts_by_name(xs, target);
  if (!by_name && xs.rank() > target.rank())
    fail("the target ", ts, " has rank ", target.rank(), ", less than the operand's ", xs.rank(),
         " (axes are matched by position from the right, as not all are named)");
  if (target == xs) return std::nullopt;
  if (by_name)
    for (const dim& d : xs.dims())
      if (!target.index_of(d.name().view()))
        fail("axis '", d.name().view(), "' is not in the target ", ts);
  nax::detail::small_vector<std::size_t, 6> map;
  map.resize(xs.rank());
  broadcast_axis_map(xs, target, std::span(map.data(), map.size()));
  broadcast_op attrs;
  std::vector<std::size_t> source(target.rank(), xs.rank());  // the axis of x at each target axis
  for (std::size_t i = 0; i < xs.rank(); ++i) {
    const dim& d = xs[i];
    const std::size_t j = map[i];
    if (source[j] != xs.rank())
      fail("axes ", source[j], " and ", i, " of the operand both go to axis '", d.name().view(),
           "' of the target ", ts);
    source[j] = i;
    const dim& t = target[j];
    if (d.has_name() && t.has_name() && d.name() != t.name())
      fail("axis ", i, " of the operand and axis ", j, " of the target ", ts,
           ": incompatible axis names: '", d.name().view(), "' vs '", t.name().view(), "'");
    const bool equal = d.is_static() ? t.is_static() && t.extent() == d.extent()
                                     : t.is_dynamic() && d.has_name() && d.name() == t.name();
    if (!equal && !(d.is_static() && d.extent() == 1))
      fail(axis_subject(d, i), " (to axis ", j, " of the target ", ts, "): extent ", d.to_string(),
           " does not broadcast to ", t.to_string(), " (only the same extent or a static 1 does)");
    attrs.axis_map.push_back(static_cast<std::uint32_t>(j));
  }
  node n;
  n.op = std::move(attrs);
  n.inputs.push_back(x);
  n.shape = target;
  check_unique_names(n, "broadcast");
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
