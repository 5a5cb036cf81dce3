#pragma once
// The size policies of compile_options (graph/compile_options.hpp) applied to a program: per
// dynamic axis, the extent its specialization is made for. An exact axis keys the cache with its
// extent; a bucketed one with its bucket; one under `bound` with its bound. The run's real
// extents then choose the steps inside that specialization (runtime/specialization_cache.hpp).

#include <cstddef>
#include <span>
#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/binding_key.hpp>
#include <nax/runtime/value_axes.hpp>

namespace nax::NAX_ISA::runtime {

class size_buckets {
 public:
  /// The policies of `o` for p's dynamic axes (a value axis's bound is its operand's).
  /// nax::shape_error if `o` names an axis that is not a dynamic axis of p's inputs, asks for
  /// `bound` (or the default buckets) on an axis without a bound, or gives buckets that are not
  /// ascending positive extents within the bound.
  NAX_RUNTIME_INLINE size_buckets(const graph::program& p, const graph::compile_options& o);

  /// Whether some axis is not exact (else the key of a run is its extents).
  bool any() const noexcept { return any_; }

  /// The key of the specialization serving `exact` (a key over the program's dynamic axes and
  /// the thread count, runtime/binding_key.hpp), in `bucket`. A value axis whose size is made
  /// from extents alone (a concat's joined axis) takes the size over the buckets' extents, so
  /// that the bucket's shapes agree with each other.
  void round(const extents_key& exact, extents_key& bucket) const {
    bucket = exact;
    for (std::size_t i = 0; i < axes_.size(); ++i) bucket[i] = axes_[i].round(exact[i]);
    for (std::size_t i : derived_) {
      const graph::value_axis& a = program_->value_axes[i - program_->num_input_axes()];
      const std::int64_t v = evaluate_size(*program_, a, bucket, {});
      // (A size that falls, as with sub, keeps the axis's own rounding: the bucket's steps are
      // never run, and an extent whose plan outgrows the bucket's arena gets its own.)
      if (v >= static_cast<std::int64_t>(exact[i]) && static_cast<std::uint64_t>(v) <= a.bound)
        bucket[i] = static_cast<std::size_t>(v);
    }
  }

  /// The policy of dynamic axis i (in the program's order).
  graph::size_policy policy(std::size_t i) const noexcept { return axes_[i].policy; }
  /// Its buckets (under buckets: the list in use; under bound: the bound; else empty).
  std::span<const std::size_t> buckets(std::size_t i) const noexcept { return axes_[i].buckets; }

 private:
  struct axis_policy {
    graph::size_policy policy = graph::size_policy::exact;
    std::vector<std::size_t> buckets;  // ascending
    std::size_t round(std::size_t e) const noexcept {
      if (policy == graph::size_policy::exact) return e;
      for (std::size_t b : buckets)  // at most a few dozen: a scan beats a search
        if (e <= b) return b;
      return e;  // above the last bucket of an axis without a bound
    }
  };
  std::vector<axis_policy> axes_;
  bool any_ = false;
  const graph::program* program_ = nullptr;
  std::vector<std::size_t> derived_;  // value axes whose size reads no parameter
};

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <string>

#include <nax/core/dim.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE size_buckets::size_buckets(const graph::program& p,
                                              const graph::compile_options& o) {
  const std::vector<axis_name>& axes = p.dynamic_axes;
  // The bound of each dynamic axis: the least of its inputs' bounds (unbounded if none has one).
  std::vector<std::size_t> bound(axes.size(), unbounded);
  for (std::size_t k = 0; k < p.num_inputs(); ++k)
    for (const dim& d : p.values[k].shape.dims())
      if (d.is_dynamic() && d.has_name() && d.has_bound()) {
        const auto at = std::find(axes.begin(), axes.end(), d.name()) - axes.begin();
        if (static_cast<std::size_t>(at) < axes.size())
          bound[static_cast<std::size_t>(at)] =
              std::min(bound[static_cast<std::size_t>(at)], d.bound());
      }
  program_ = &p;
  for (std::size_t i = 0; i < p.value_axes.size(); ++i) {
    bound[p.num_input_axes() + i] = p.value_axes[i].bound;
    const std::vector<graph::size_term>& size = p.value_axes[i].size;
    if (std::none_of(size.begin(), size.end(), [](const graph::size_term& t) {
          return t.k == graph::size_term::kind::parameter;
        }))
      derived_.push_back(p.num_input_axes() + i);
  }
  auto names = [&] {
    std::string s;
    for (axis_name a : axes) s.append(s.empty() ? "" : ", ").append(a.view());
    return s.empty() ? std::string("none") : s;
  };
  for (const auto& [name, sizes] : o.bounded_axes)
    if (std::find(axes.begin(), axes.end(), axis_name(name)) == axes.end())
      nax::detail::throw_shape_error("nax::graph::compile: compile_options::bounded_axes names '",
                                     name, "', which is not a dynamic axis of the inputs (",
                                     names(), ")");

  axes_.resize(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const graph::bounded_sizes* chosen = nullptr;
    for (const auto& [name, sizes] : o.bounded_axes)
      if (axis_name(name) == axes[i]) chosen = &sizes;
    const bool given = chosen != nullptr;
    if (!given) {
      if (bound[i] == unbounded) continue;  // the default policy is for bounded axes
      chosen = &o.bounded;
    }
    axis_policy& a = axes_[i];
    a.policy = chosen->policy;
    const std::string what =
        std::string("nax::graph::compile: axis '") + std::string(axes[i].view()) + "'";
    if (a.policy == graph::size_policy::exact) continue;
    any_ = true;
    const bool needs_bound = a.policy == graph::size_policy::bound || chosen->buckets.empty();
    if (needs_bound && bound[i] == unbounded)
      nax::detail::throw_shape_error(
          what, " has no bound: size_policy::",
          a.policy == graph::size_policy::bound ? "bound" : "buckets with no list of buckets",
          " needs one (declare it as '", axes[i].view(), "<=N', or give the buckets)");
    if (a.policy == graph::size_policy::bound) {
      a.buckets = {bound[i]};
      continue;
    }
    if (chosen->buckets.empty()) {
      for (std::size_t b = 1; b < bound[i]; b *= 2) a.buckets.push_back(b);
      a.buckets.push_back(bound[i]);
      continue;
    }
    a.buckets = chosen->buckets;
    for (std::size_t j = 0; j < a.buckets.size(); ++j) {
      if (a.buckets[j] == 0 || (j > 0 && a.buckets[j] <= a.buckets[j - 1]))
        nax::detail::throw_shape_error(what,
                                       ": the buckets must be ascending positive extents, got ",
                                       a.buckets[j], " at position ", j);
      if (bound[i] != unbounded && a.buckets[j] > bound[i])
        nax::detail::throw_shape_error(what, ": bucket ", a.buckets[j], " is above its bound ",
                                       bound[i]);
    }
    if (bound[i] != unbounded && a.buckets.back() < bound[i]) a.buckets.push_back(bound[i]);
  }
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
