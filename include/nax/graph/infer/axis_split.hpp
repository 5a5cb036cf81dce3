#pragma once
// Shape inference of split and merge: one static axis as two (model = 64 as heads = 4 × hd = 16)
// and two adjacent static axes as one. Splitting an axis in place, or merging two adjacent ones
// in order, keeps the row-major order of the elements, so both nodes are reshapes. Only static
// extents: a dynamic part or merged axis would have an extent derived from another (`seq / 4`),
// which no binding could name.

#include <string_view>

#include <nax/core/dim.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/axis_ref.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of node x of g with axis `whole` split, in place, into `outer` then `inner`: named,
/// at least one static (the other's extent then follows), their product whole's static extent.
/// nax::shape_error naming the axes and extents otherwise.
NAX_RUNTIME_INLINE node infer_split(const ir& g, node_id x, const axis_ref& whole, const dim& outer,
                                    const dim& inner);

/// The node of node x of g with its axes `a` and `b`, adjacent in that order, merged into one
/// static axis named `to` where a was. nax::shape_error naming the axes otherwise.
NAX_RUNTIME_INLINE node infer_merge(const ir& g, node_id x, const axis_ref& a, const axis_ref& b,
                                    std::string_view to);

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <limits>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

NAX_RUNTIME_INLINE node infer_split(const ir& g, node_id x, const axis_ref& whole, const dim& outer,
                                    const dim& inner) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("split", 0, xs, whole);
  const dim& w = xs[i];
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::split(", xs.to_string(), ", ", axis_subject(w, i),
                                   " -> '", outer.name().view(), "' × '", inner.name().view(),
                                   "'): ", why...);
  };
  if (!outer.has_name() || !inner.has_name()) fail("both parts need a name");
  if (w.is_dynamic())
    fail(
        "the axis is dynamic: its parts' extents would follow from its own, and no binding could "
        "name them");
  if (outer.is_dynamic() && inner.is_dynamic())
    fail("both parts are dynamic: one must be static for the other's extent to follow");
  const std::size_t n = w.extent();
  std::size_t eo = outer.extent(), ei = inner.extent();
  if (outer.is_dynamic() || inner.is_dynamic()) {
    const std::size_t part = outer.is_static() ? eo : ei;
    if (part == 0)
      fail("the ", outer.is_static() ? "outer" : "inner",
           " extent is 0: the other part's extent does not follow from it");
    if (n % part != 0)
      fail("the extent ", n, " is not a multiple of ", outer.is_static() ? "outer" : "inner",
           " extent ", part);
    (outer.is_static() ? ei : eo) = n / part;
  }
  // (eo × ei compared without computing it: the product of two large extents wraps around.)
  if (ei == 0 ? n != 0 : n % ei != 0 || n / ei != eo)
    fail("the extent ", n, " is not ", eo, " × ", ei);
  nax::detail::small_vector<dim, 6> dims;
  for (std::size_t k = 0; k < xs.rank(); ++k) {
    if (k != i) {
      dims.push_back(xs[k]);
      continue;
    }
    dims.push_back(dim::named(outer.name(), eo));
    dims.push_back(dim::named(inner.name(), ei));
  }
  node out;
  out.op = reshape_op{};
  out.inputs.push_back(x);
  out.shape = nax::shape(xs.dtype(), std::span<const dim>(dims.data(), dims.size()));
  check_unique_names(out, "split");
  return out;
}

NAX_RUNTIME_INLINE node infer_merge(const ir& g, node_id x, const axis_ref& a, const axis_ref& b,
                                    std::string_view to) {
  const nax::shape& xs = g[x].shape;
  const std::size_t i = resolve_axis("merge", 0, xs, a), j = resolve_axis("merge", 0, xs, b);
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::merge(", xs.to_string(), ", ",
                                   axis_subject(xs[i], i), " × ", axis_subject(xs[j], j), " -> '",
                                   to, "'): ", why...);
  };
  if (to.empty()) fail("the merged axis needs a name");
  if (i == j) fail("both name one axis");
  if (j != i + 1) fail("the axes are not adjacent in that order (transpose first)");
  if (xs[i].is_dynamic() || xs[j].is_dynamic())
    fail("a dynamic axis cannot be merged: the merged extent would have no name to bind");
  // (Below the largest std::size_t, which stands for a dynamic extent.)
  if (xs[j].extent() != 0 &&
      xs[i].extent() > (std::numeric_limits<std::size_t>::max() - 1) / xs[j].extent())
    fail("the merged extent ", xs[i].extent(), " × ", xs[j].extent(),
         " does not fit in std::size_t");
  nax::detail::small_vector<dim, 6> dims;
  for (std::size_t k = 0; k < xs.rank(); ++k) {
    if (k == j) continue;
    dims.push_back(k == i ? dim::named(axis_name(to), xs[i].extent() * xs[j].extent()) : xs[k]);
  }
  node out;
  out.op = reshape_op{};
  out.inputs.push_back(x);
  out.shape = nax::shape(xs.dtype(), std::span<const dim>(dims.data(), dims.size()));
  check_unique_names(out, "merge");
  return out;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
