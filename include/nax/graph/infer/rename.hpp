#pragma once
// Shape inference of rename: x's axis `from` under another name, its extent kept (a static
// extent, or the same dynamic extent: the renamed dynamic axis is an alias of its source, bound
// to the same value). The data does not move: the node is a reshape to the renamed shape.

#include <optional>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of node x of g with axis `from` named `to`, or nothing if it already is.
/// nax::shape_error naming the axes if x has no axis `from`, already has one named `to`, or `from`
/// is dynamic and unnamed (its extent could not be bound by the new name).
NAX_RUNTIME_INLINE std::optional<node> infer_rename(const ir& g, node_id x, const axis_ref& from,
                                                    std::string_view to);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE std::optional<node> infer_rename(const ir& g, node_id x, const axis_ref& from,
                                                    std::string_view to) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("rename", 0, xs, from);
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::rename(", xs.to_string(), ", ",
                                   axis_subject(xs[i], i), " -> '", to, "'): ", why...);
  };
  if (to.empty()) fail("the new name is empty");
  if (xs[i].name() == to) return std::nullopt;
  if (auto j = xs.index_of(to)) fail("the operand already has an axis '", to, "' (", *j, ")");
  if (xs[i].is_dynamic() && !xs[i].has_name())
    fail("the axis is dynamic and unnamed: a renamed dynamic axis is bound by its source's name");
  nax::detail::small_vector<dim, 6> dims;
  dims.assign(xs.dims().begin(), xs.dims().end());
  const dim& d = xs[i];
  const axis_name name(to);
  dims[i] = d.is_static()   ? dim::named(name, d.extent())
            : d.has_bound() ? dim::bounded(name, d.bound())
                            : dim(name);
  node n;
  n.op = reshape_op{};
  n.inputs.push_back(x);
  n.shape = nax::shape(xs.dtype(), std::span<const dim>(dims.data(), dims.size()));
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
