#pragma once
// Shape inference of reshape: the operand's elements in row-major order in a target shape. Every
// dynamic extent must stay the extent of a named axis (so that a binding resolves it): the
// target's dynamic axes are exactly the operand's.

#include <limits>
#include <optional>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph::detail {

/// The node of node x of g reshaped to `target` (x's element type), or nothing if that is x's
/// own shape; nax::shape_error naming the axis or the element counts that do not fit.
NAX_RUNTIME_INLINE std::optional<node> infer_reshape(const ir& g, node_id x,
                                                     const nax::shape& target);

/// The checks reshape and broadcast share on a target: x's element type, no unnamed dynamic axis.
template <class Fail>
void check_target(const nax::shape& xs, const nax::shape& target, const Fail& fail) {
  if (target.dtype() != xs.dtype())
    fail("element types differ: the target ", target.to_string(), " is ", name(target.dtype()),
         ", the operand is ", name(xs.dtype()));
  for (std::size_t i = 0; i < target.rank(); ++i)
    if (target[i].is_dynamic() && !target[i].has_name())
      fail("the target ", target.to_string(), " has an unnamed dynamic axis (", i,
           "): its extent could not be bound by name");
}

}  // namespace nax::graph::detail

#if NAX_RUNTIME_DEFINITIONS
#include <string>

#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/infer/common.hpp>

namespace nax::NAX_ISA::graph::detail {

// How often a dynamic axis named `n` occurs in s, and the first such dim.
inline std::size_t count_dynamic(const nax::shape& s, axis_name n) {
  std::size_t c = 0;
  for (const dim& d : s.dims()) c += d.is_dynamic() && d.name() == n;
  return c;
}
inline const dim& first_dynamic(const nax::shape& s, axis_name n) {
  for (const dim& d : s.dims())
    if (d.is_dynamic() && d.name() == n) return d;
  return s[0];  // not reached: callers count first
}

// The product of the static extents of s; nullopt if it does not fit in std::size_t (two such
// shapes wrapped around to one product would pass for the same size).
inline std::optional<std::size_t> static_elements(const nax::shape& s) {
  for (const dim& d : s.dims())
    if (d.is_static() && d.extent() == 0) return 0;
  std::size_t n = 1;
  for (const dim& d : s.dims()) {
    if (!d.is_static()) continue;
    if (n > std::numeric_limits<std::size_t>::max() / d.extent()) return std::nullopt;
    n *= d.extent();
  }
  return n;
}

NAX_RUNTIME_INLINE std::optional<node> infer_reshape(const ir& g, node_id x,
                                                     const nax::shape& target) {
  const nax::shape& xs = g[x].shape;
  auto fail = [&](const auto&... why) {
    nax::detail::throw_shape_error("nax::graph::reshape(", xs.to_string(), "): ", why...);
  };
  const std::string ts = target.to_string();
  for (std::size_t i = 0; i < xs.rank(); ++i)
    if (xs[i].is_dynamic() && !xs[i].has_name())
      fail("the operand's axis ", i, " is dynamic and unnamed: reshape carries only named ",
           "dynamic axes");
  check_target(xs, target, fail);
  nax::detail::small_vector<dim, 6> out;
  for (const dim& t : target.dims()) {
    out.push_back(t);
    if (t.is_static()) continue;
    const std::string_view n = t.name().view();
    const std::size_t in_x = count_dynamic(xs, t.name());
    const std::size_t in_target = count_dynamic(target, t.name());
    if (in_x == 0) fail("the target ", ts, " has dynamic axis '", n, "', the operand does not");
    if (in_x != in_target)
      fail("dynamic axis '", n, "' occurs ", in_target, in_target == 1 ? " time" : " times",
           " in the target ", ts, ", ", in_x, " in the operand");
    const dim& d = first_dynamic(xs, t.name());
    if (t.has_bound() && t.bound() != d.bound())
      fail("the target ", ts, " bounds axis '", n, "' by ", t.bound(), ", the operand ",
           d.has_bound() ? nax::detail::message("by ", d.bound()) : std::string("does not"),
           " (a bound cannot change)");
    out.back() = d;
  }
  for (const dim& d : xs.dims())
    if (d.is_dynamic() && count_dynamic(target, d.name()) == 0)
      fail("the target ", ts, " has no dynamic axis '", d.name().view(),
           "' (every dynamic axis of the operand must be one of the target's)");
  const std::optional<std::size_t> have_elements = static_elements(xs),
                                   want_elements = static_elements(target);
  if (!have_elements || !want_elements)
    fail(have_elements ? "the target " : "the operand ", have_elements ? ts : xs.to_string(),
         " has more elements than fit in std::size_t");
  const std::size_t have = *have_elements, want = *want_elements;
  if (have != want) {
    std::string per;
    for (const dim& d : xs.dims())
      if (d.is_dynamic()) per += nax::detail::message(per.empty() ? " per " : "*", d.name().view());
    fail("the target ", ts, " has ", want, want == 1 ? " element" : " elements", per,
         ", the operand ", have);
  }
  nax::shape result(xs.dtype(), std::span<const dim>(out.data(), out.size()));
  if (result == xs) return std::nullopt;
  node n;
  n.op = reshape_op{};
  n.inputs.push_back(x);
  n.shape = std::move(result);
  check_unique_names(n, "reshape");
  return n;
}

}  // namespace nax::graph::detail
#endif  // NAX_RUNTIME_DEFINITIONS
