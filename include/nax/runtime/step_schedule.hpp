#pragma once
// Level 2's choice of what runs at the same time. Steps run in groups, one group after another;
// the steps of a group are independent of each other and run side by side on the pool, one
// thread each (a step's own parallel loops then run on that thread: nested regions run inline,
// exec/thread_pool.hpp). A group is made where it is faster than running its steps one after
// another, each on all the threads it can use: independent branches (the q, k and v projections
// of attention) that are each too small to fill every core, or that are equal in size. The model
// is deliberately simple: one thread's time of each step from its flops and bytes, how many
// threads the step would use alone, and the cost of a parallel region.
//
// Running a step on one thread instead of several changes no result: every kernel's results are
// the same for every thread count (the chunks of reductions are cut by size, GEMM splits no dot
// product). So a grouped run gives the same bits as the sequential one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>

namespace nax::NAX_ISA::runtime {

/// The order and grouping of a specialization's steps.
struct step_schedule {
  std::vector<std::uint32_t> order;        // step indices, in the order they run
  std::vector<std::uint32_t> group_begin;  // group g is order[group_begin[g], group_begin[g + 1])
  std::vector<std::uint32_t> group_of;     // per step: its group
  std::vector<double> cost_ns;  // per step: the model's one-thread time (none for one thread)

  std::size_t groups() const noexcept { return group_begin.empty() ? 0 : group_begin.size() - 1; }
  std::span<const std::uint32_t> group(std::size_t g) const noexcept {
    return {order.data() + group_begin[g], order.data() + group_begin[g + 1]};
  }
  /// Groups of more than one step.
  std::size_t concurrent_groups() const noexcept;
  /// "0 | 1 2 3 | 4 | ...": the steps in run order, groups separated by bars.
  std::string to_string() const;
};

/// Steps one at a time in program order (one thread, or DAG parallelism turned off). `unit_of`,
/// if not empty, gives per step the first step of the unit it belongs to: consecutive steps that
/// run as one group (a pipelined chain, runtime/pipeline.hpp).
NAX_RUNTIME_INLINE step_schedule sequential_schedule(const graph::program& p,
                                                     std::span<const std::uint32_t> unit_of = {});

/// The schedule of p's steps for `threads` threads, given the concrete shapes, each value's bytes
/// and the steps' kernels (which say how many threads each would use alone). `always`: group every
/// set of ready independent steps, up to `threads` of them, whatever the cost model says. A unit
/// (`unit_of`, as above) is one group of its own.
NAX_RUNTIME_INLINE step_schedule
schedule_steps(const graph::program& p, std::span<const nax::shape> shapes,
               std::span<const std::size_t> value_bytes,
               std::span<const std::unique_ptr<kernels::step_kernel>> kernels, std::size_t threads,
               bool always = false, std::span<const std::uint32_t> unit_of = {});

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>

#include <nax/exec/cache_info.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/gemm_plan.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

// The model's machine, per thread: what the kernels reach on the x86 cores seen here (a GEMM
// at about 2/3 of the FMA peak of its vectors at 3 GHz; streaming from L2 and from memory). Only
// the balance between steps and against a parallel region's cost matters. A region costs a few us
// on the KVM guests measured (up to ~35 us when the worker had gone to sleep): grouping steps of a
// few us each made the transformer block of examples/ 10% slower at batch 1 x 64 with 2 us.
inline constexpr double flops_per_ns = 8.0 * kernels::gemm_vec<float>::size;  // 64 or 128
inline constexpr double cached_bytes_per_ns = 32;  // a step whose operands fit in L2
inline constexpr double memory_bytes_per_ns = 10;  // one core streaming from memory
inline constexpr double region_ns = 5000;          // waking a worker and joining it
inline constexpr double split_efficiency = 0.95;   // a step split over threads, per thread

// The bytes a step reads and writes (value_bytes: each value's).
inline double step_bytes(const graph::program_step& s, std::span<const std::size_t> value_bytes) {
  auto bytes = static_cast<double>(value_bytes[s.result]);
  for (graph::value_index a : s.args) bytes += static_cast<double>(value_bytes[a]);
  for (graph::value_index e : s.extra_results) bytes += static_cast<double>(value_bytes[e]);
  return bytes;
}

// One thread's time of step s, which reads and writes `bytes`.
inline double step_cost_ns(const kernels::step_kernel& k, const graph::program_step& s,
                           std::span<const nax::shape> shapes, double bytes) {
  if (k.does_nothing()) return 0;
  double flops = 0;
  if (s.kind() == graph::op_kind::dot_general || s.kind() == graph::op_kind::fused_dense) {
    const auto* fused = s.op.get_if<graph::fused_dense_op>();
    const graph::dot_general_op& dg = fused ? fused->dot : s.as<graph::dot_general_op>();
    double c = 1;
    for (const graph::axis_pair_index& a : dg.contract)
      c *= static_cast<double>(shapes[s.args[0]][a.lhs].extent());
    flops = 2 * c * static_cast<double>(shapes[s.result].num_elements());
  }
  const double rate = bytes <= static_cast<double>(nax::machine_caches().l2) ? cached_bytes_per_ns
                                                                             : memory_bytes_per_ns;
  return std::max(flops / flops_per_ns, bytes / rate);
}

// How many threads step s would use alone on `threads`: its kernel's word, else what a parallel
// loop over its result would use.
inline std::size_t step_width(const kernels::step_kernel& k, const nax::shape& result,
                              std::size_t threads) {
  if (const std::size_t t = k.tasks()) return std::min(t, threads);
  return nax::detail::chunk_count(result.num_elements(), nax::detail::parallel_grain_elements,
                                  threads);
}

}  // namespace detail

NAX_RUNTIME_INLINE std::size_t step_schedule::concurrent_groups() const noexcept {
  std::size_t n = 0;
  for (std::size_t g = 0; g < groups(); ++g) n += group_begin[g + 1] - group_begin[g] > 1;
  return n;
}

NAX_RUNTIME_INLINE std::string step_schedule::to_string() const {
  std::string out;
  for (std::size_t g = 0; g < groups(); ++g) {
    if (g) out += " | ";
    bool first = true;
    for (std::uint32_t s : group(g)) {
      if (!first) out += ' ';
      first = false;
      out += std::to_string(s);
    }
  }
  return out;
}

NAX_RUNTIME_INLINE step_schedule sequential_schedule(const graph::program& p,
                                                     std::span<const std::uint32_t> unit_of) {
  step_schedule s;
  const auto n = static_cast<std::uint32_t>(p.steps.size());
  s.order.resize(n);
  s.group_of.resize(n);
  s.group_begin.reserve(std::size_t{n} + 1);
  s.group_begin.assign(1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i > 0 && (unit_of.empty() || unit_of[i] == i)) s.group_begin.push_back(i);
    s.order[i] = i;
    s.group_of[i] = static_cast<std::uint32_t>(s.group_begin.size() - 1);
  }
  if (n > 0) s.group_begin.push_back(n);
  return s;
}

NAX_RUNTIME_INLINE step_schedule
schedule_steps(const graph::program& p, std::span<const nax::shape> shapes,
               std::span<const std::size_t> value_bytes,
               std::span<const std::unique_ptr<kernels::step_kernel>> kernels, std::size_t threads,
               bool always, std::span<const std::uint32_t> unit_of) {
  step_schedule s = sequential_schedule(p, unit_of);
  const std::size_t n = p.steps.size();
  if (threads < 2 || n < 2) return s;  // nothing runs side by side: no costs to weigh
  s.cost_ns.resize(n);
  std::vector<double> bytes(n);
  for (std::size_t i = 0; i < n; ++i) {
    bytes[i] = detail::step_bytes(p.steps[i], value_bytes);
    s.cost_ns[i] = detail::step_cost_ns(*kernels[i], p.steps[i], shapes, bytes[i]);
  }

  // Units: a step alone, or the steps of a pipelined chain (named by their first step), which
  // wait for what any of them waits for and run as one group.
  auto unit = [&](std::size_t i) {
    return unit_of.empty() ? static_cast<std::uint32_t>(i) : unit_of[i];
  };
  // The units each unit waits for: the producers of its operands.
  constexpr std::uint32_t none = ~std::uint32_t{0};
  std::vector<std::uint32_t> producer(p.values.size(), none);
  for (std::size_t i = 0; i < n; ++i) {
    producer[p.steps[i].result] = unit(i);
    for (graph::value_index e : p.steps[i].extra_results) producer[e] = unit(i);
  }
  // Each unit's consumers, CSR: those of unit q are consumers[first[q], first[q + 1]) (a unit
  // reading q twice is there twice, and waits for q twice).
  std::vector<std::uint32_t> first(n + 1, 0), waiting(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (graph::value_index a : p.steps[i].args)
      if (const std::uint32_t q = producer[a]; q != none && q != unit(i)) {
        ++first[q + 1];
        ++waiting[unit(i)];
      }
  for (std::size_t q = 0; q < n; ++q) first[q + 1] += first[q];
  std::vector<std::uint32_t> consumers(first[n]), filled(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (graph::value_index a : p.steps[i].args)
      if (const std::uint32_t q = producer[a]; q != none && q != unit(i))
        consumers[filled[q]++] = unit(i);

  // The time of a group: side by side, one thread each, against one after another, each on
  // the threads it would use. A step that splits and whose operands do not fit in L2 keeps
  // every thread: split, each thread's part fits in its L2; side by side, it does not (two
  // 2048 x 64 x 64 products ran 3.1x slower side by side than split, not 2x).
  std::vector<double> alone(n);
  std::vector<char> groupable(n);
  const auto l2 = static_cast<double>(nax::machine_caches().l2);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t w = detail::step_width(*kernels[i], shapes[p.steps[i].result], threads);
    alone[i] = w > 1 ? s.cost_ns[i] / (static_cast<double>(w) * detail::split_efficiency) +
                           detail::region_ns
                     : s.cost_ns[i];
    groupable[i] = !kernels[i]->does_nothing() && (always || w == 1 || bytes[i] <= l2);
    if (unit(i) != i || (i + 1 < n && unit(i + 1) == i)) groupable[unit(i)] = 0;  // a chain
  }
  auto gain = [&](std::span<const std::uint32_t> g) {
    double sequential = 0, longest = 0;
    for (std::uint32_t i : g) {
      sequential += alone[i];
      longest = std::max(longest, s.cost_ns[i]);
    }
    return sequential - (longest + detail::region_ns);
  };

  // List scheduling: the earliest ready step, joined by the later ready steps that make the
  // group faster. With no group worth making this is program order.
  std::vector<std::uint32_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (unit(i) == i && waiting[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
  s.order.clear();
  s.group_begin.assign(1, 0);
  std::vector<std::uint32_t> group;
  while (!ready.empty()) {
    std::sort(ready.begin(), ready.end());
    group.assign(1, ready.front());
    double best = 0;
    for (std::size_t r = 1; r < ready.size() && group.size() < threads; ++r) {
      if (!groupable[group[0]]) break;  // alone
      if (!groupable[ready[r]]) continue;
      group.push_back(ready[r]);
      const double g = gain(group);
      if (always || g > best)
        best = g;
      else
        group.pop_back();
    }
    for (std::uint32_t u : group) {
      ready.erase(std::find(ready.begin(), ready.end(), u));
      for (std::uint32_t i = u; i < n && unit(i) == u; ++i) {
        s.group_of[i] = static_cast<std::uint32_t>(s.group_begin.size() - 1);
        s.order.push_back(i);
      }
    }
    s.group_begin.push_back(static_cast<std::uint32_t>(s.order.size()));
    for (std::uint32_t i : group)
      for (std::uint32_t c = first[i]; c < first[i + 1]; ++c)
        if (--waiting[consumers[c]] == 0) ready.push_back(consumers[c]);
  }
  return s;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
