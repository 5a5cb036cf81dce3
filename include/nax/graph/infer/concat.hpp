#pragma once
// Shape inference of concat: operands of one element type and rank joined along a static axis
// (its extent is the sum, its names unify), or, given a name for the joined axis, along static
// and bounded axes (a value axis, graph/value_axis.hpp, bounded by the sum of extents and bounds);
// their other axes unify by position.

#include <optional>
#include <span>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of nodes xs of g joined along `axis` (by position, or by name in xs[0]), or nothing
/// if there is one operand (and no `joined` name); nax::shape_error naming the operand and axis
/// that do not fit. `joined`, if given, names the joined axis: dynamic (bounded) when an operand's
/// is, else static.
NAX_RUNTIME_INLINE std::optional<node> infer_concat(const ir& g, std::span<const node_id> xs,
                                                    axis_ref axis,
                                                    std::string_view joined_name = {});

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/unify.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE std::optional<node> infer_concat(const ir& g, std::span<const node_id> xs,
                                                    axis_ref axis, std::string_view joined_name) {
  if (xs.empty()) nax::detail::throw_shape_error("nax::graph::concat: needs at least one operand");
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::concat(", shapes_of(g, xs), "): ", why...);
  };
  const nax::shape& first = g[xs[0]].shape;
  const std::size_t k = resolve_axis("concat", 0, first, axis);
  for (std::size_t p = 1; p < xs.size(); ++p) {
    const nax::shape& s = g[xs[p]].shape;
    if (s.dtype() != first.dtype())
      fail("element types differ: operand 0 is ", name(first.dtype()), ", operand ", p, " is ",
           name(s.dtype()));
    if (s.rank() != first.rank())
      fail("ranks differ: operand 0 has rank ", first.rank(), ", operand ", p, " has rank ",
           s.rank());
  }
  if (xs.size() == 1 && joined_name.empty()) return std::nullopt;
  nax::detail::small_vector<dim, 6> out;
  out.assign(first.dims().begin(), first.dims().end());
  for (std::size_t p = 1; p < xs.size(); ++p)
    for (std::size_t i = 0; i < first.rank(); ++i) {
      if (i == k) continue;
      try {
        out[i] = unify_dims(out[i], g[xs[p]].shape[i]);
      } catch (const shape_error& e) {
        fail("operand ", p, ", axis ", i, ": ", e.what());
      }
    }
  axis_name joined;
  std::size_t extent = 0;  // the sum of the extents, and of the bounds of dynamic ones
  bool dynamic = false;
  for (std::size_t p = 0; p < xs.size(); ++p) {
    const dim& d = g[xs[p]].shape[k];
    if (d.is_dynamic() && joined_name.empty())
      fail("concat along dynamic ", axis_subject(d, k), " (operand ", p,
           ") needs a name for the joined axis, whose extent (the sum) the run binds by it",
           d.has_bound() ? "" : ", and a bound");
    if (d.is_dynamic() && !d.has_bound())
      fail("concat along dynamic ", axis_subject(d, k), " (operand ", p,
           ") needs a bound: the joined axis has one, the sum of theirs");
    dynamic = dynamic || d.is_dynamic();
    // Positions along the joined axis are int64 (slices, the VJP's parts): its sum must fit.
    constexpr std::size_t max_extent = std::numeric_limits<std::int64_t>::max();
    const std::size_t part = d.is_dynamic() ? d.bound() : d.extent();
    if (part > max_extent - extent)
      fail("the joined ", axis_subject(d, k), " would have more than ", max_extent,
           " elements (operands 0 to ", p, " alone)");
    extent += part;
    if (!joined_name.empty()) continue;  // the given name replaces theirs
    try {
      joined = axis_name(unify_axis_name(joined.view(), d.name().view()));
    } catch (const shape_error& e) {
      fail("axis ", k, ": ", e.what());
    }
  }
  if (!joined_name.empty()) joined = axis_name(joined_name);
  out[k] = dynamic ? dim::bounded(joined, extent) : dim::named(joined, extent);
  node n;
  n.op = concat_op{static_cast<std::uint32_t>(k)};
  for (node_id x : xs) n.inputs.push_back(x);
  n.shape = nax::shape(first.dtype(), std::span<const dim>(out.data(), out.size()));
  check_unique_names(n, "concat");
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
