#pragma once
// Level 2 of the two-level JIT: a program specialized for one axis binding. Every
// value gets its concrete shape, every step its kernel with the shape-dependent choices made
// (GEMM plan, loop geometry, thread split), the steps grouped where independent ones run side by
// side (runtime/step_schedule.hpp), chains run tile by tile where that pays (runtime/pipeline.hpp),
// and every intermediate an offset in one arena from an exact memory plan over the steps'
// lifetimes in that schedule. Made for one thread count: the thread
// split of every plan is that count's. Built once per binding, in microseconds; a run then only
// fills in the caller's addresses and walks the steps.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/arena_pool.hpp>
#include <nax/runtime/memory_plan.hpp>
#include <nax/runtime/pipeline.hpp>
#include <nax/runtime/specialization_recipe.hpp>
#include <nax/runtime/step_factory.hpp>
#include <nax/runtime/step_schedule.hpp>

namespace nax::NAX_ISA::runtime::native {
class tier;
}

namespace nax::NAX_ISA::runtime {

/// A program specialized for one binding (see the file comment).
struct specialization {
  /// Told apart from every other specialization of the process (arena::layout).
  std::uint64_t id = next_id();
  nax::bindings binding;
  std::size_t threads = 1;               // the thread count its plans are for
  step_schedule schedule;                // the order steps run in, and which run side by side
  std::vector<nax::shape> shapes;        // concrete, per value
  std::vector<graph::value_role> roles;  // per value
  std::vector<std::unique_ptr<kernels::step_kernel>> kernels;  // per step
  std::vector<pipeline> pipelines;                             // the chains run tile by tile
  std::vector<std::uint32_t> pipeline_of;  // per group: its pipeline, or none (empty if none)
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::vector<std::size_t> offsets;  // per value: an intermediate's offset in the arena
  /// Intermediates that are views of an input's or a result's buffer (a reshape or a prefix of
  /// it): each run points them at that buffer before the steps run.
  struct view {
    graph::value_index value, of;
  };
  std::vector<view> views;
  std::vector<std::uint64_t> constants;  // per value: a constant's bytes, in its dtype
  std::size_t arena_bytes = 0;
  std::size_t live_peak_bytes = 0;  // the least any arena could be
  /// The memory plan's requests: per intermediate buffer, then per scratch and pipeline state.
  std::vector<buffer_request> requests;
  /// Of a graph with gradients (graph::grad): the bytes of the forward's intermediates that the
  /// backward reads, the activations the arena keeps for it (0 without gradients).
  std::size_t saved_bytes = 0;
  std::unique_ptr<arena_pool> pool;

  /// What pools of power-of-two buckets would hold for the same buffers (the baseline the memory
  /// plan is measured against; worked out when asked).
  std::size_t pool_bytes() const { return pow2_pool_bytes(requests); }

  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  /// Points a's intermediates and constants at this specialization's places (a's memory must
  /// hold arena_bytes).
  void lay_out(arena& a) const noexcept {
    for (std::size_t v = 0; v < shapes.size(); ++v) {
      if (roles[v] == graph::value_role::intermediate)
        a.values[v] = a.memory.get() + offsets[v];
      else if (roles[v] == graph::value_role::constant)
        a.values[v] = const_cast<std::uint64_t*>(&constants[v]);  // (steps only read them)
    }
    a.layout = id;
  }
};

/// What a specialization is made for besides the binding.
struct specialize_options {
  std::size_t threads = 0;  // 0: nax::num_threads()
  graph::step_parallelism parallel_steps = graph::step_parallelism::automatic;
  graph::pipelining pipeline = graph::pipelining::automatic;
  std::size_t pipeline_tile = 0;   // 0: chosen per binding
  native::tier* native = nullptr;  // the executable's native tier (runtime/native/tier.hpp)
  /// p's recipe (runtime/specialization_recipe.hpp), made once with the program; null: made here.
  const specialization_recipe* recipe = nullptr;
  /// The most arenas its pool keeps alive between runs (0: default_max_kept_arenas()).
  std::size_t max_kept_arenas = 0;
};

/// Specializes `p` for `b`, which binds every dynamic axis of p's inputs. nax::shape_error if
/// an extent breaks a bound, or if the binding makes two operands of a step disagree (an axis
/// that the graph unified with a static extent, bound to another).
NAX_RUNTIME_INLINE std::unique_ptr<specialization> specialize(const graph::program& p,
                                                              const nax::bindings& b,
                                                              specialize_options o = {});

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <limits>
#include <nax/runtime/kernel_arena.hpp>
#include <numeric>

#include <nax/exec/planning_threads.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/native/tier.hpp>
#include <nax/runtime/steps/fused_elementwise.hpp>

namespace nax::NAX_ISA::runtime {

namespace detail {

template <class T>
std::uint64_t constant_bits(double v) {
  T x = static_cast<T>(v);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof x);
  return bits;
}

inline std::uint64_t constant_bits(nax::dtype t, double v) {
  switch (t) {
    case nax::dtype::f32: return constant_bits<float>(v);
    case nax::dtype::f64: return constant_bits<double>(v);
    case nax::dtype::i32: return constant_bits<std::int32_t>(v);
    case nax::dtype::i64: return constant_bits<std::int64_t>(v);
    case nax::dtype::u8: return constant_bits<std::uint8_t>(v);
    case nax::dtype::boolean: return constant_bits<std::uint8_t>(v != 0 ? 1 : 0);
  }
  return 0;
}

/// Each value's bytes (worked out once per symbolic shape: `shape_like`, from the recipe),
/// checked to fit in std::size_t one by one and all together (more than the memory plan adds
/// up): a size that wrapped around would plan and allocate too small a buffer. nax::shape_error
/// naming the value, its shape and the binding otherwise.
inline std::vector<std::size_t> value_bytes_of(const graph::program& p,
                                               std::span<const nax::shape> shapes,
                                               std::span<const graph::value_index> shape_like,
                                               const nax::bindings& b) {
  constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> all(shapes.size());
  std::size_t total = 0;
  for (std::size_t v = 0; v < shapes.size(); ++v) {
    const nax::shape& c = shapes[v];
    bool over = false;
    std::size_t& bytes = all[v];
    if (shape_like[v] != v) {
      bytes = all[shape_like[v]];  // (checked with it)
    } else {
      bool empty = false;
      for (const dim& d : c.dims()) empty = empty || d.extent() == 0;
      bytes = empty ? 0 : size_of(c.dtype());
      if (!empty)
        for (const dim& d : c.dims()) {
          over = over || d.extent() > most / bytes;
          if (!over) bytes *= d.extent();
        }
    }
    const bool together = !over && bytes > most - 64 - total;
    if (!over && !together) {
      total += bytes + 64;  // (each buffer may start at the next 64 bytes)
      continue;
    }
    std::string what;
    if (p.values[v].role == graph::value_role::input) {
      what = "input '" + p.input_names[p.values[v].index] + "'";
    } else {
      what = "a value";
      for (const graph::program_step& st : p.steps)
        if (st.result == v || std::find(st.extra_results.begin(), st.extra_results.end(), v) !=
                                  st.extra_results.end())
          what = "the result of " + std::string(graph::name(st.kind()));
    }
    nax::detail::throw_shape_error(
        "nax::executable: ", b.empty() ? "" : "at " + b.to_string() + ", ", what, " (",
        nax::detail::concrete_string(c), ") ", over ? "has" : "brings the graph's values to",
        " more bytes than fit in size_t");
  }
  return all;
}

/// The kernel of a step whose result is its operand's buffer.
struct no_step final : kernels::step_kernel, arena_allocated {
  void run(void* const*, std::byte*) const override {}
  bool does_nothing() const noexcept override { return true; }
};

// Level 2's stages, in the order specialize() runs them. Each fills its part of the
// specialization s from the program, the recipe and what the stages before it made.

/// Resolves every value's shape under the binding (a renamed dynamic axis takes its source's
/// value: a binding that gives it another throws, naming the axis and both values), the roles and
/// the constants' bits. Returns each value's bytes.
inline std::vector<std::size_t> resolve_shapes(const graph::program& p,
                                               const specialization_recipe& recipe,
                                               const nax::bindings& b, specialization& s) {
  for (const graph::axis_alias& a : p.axis_aliases)
    if (auto v = b.find(a.source)) s.binding.bind(a.alias, *v);
  const nax::bindings& bound = s.binding;
  const std::size_t n = p.values.size();
  s.shapes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (recipe.shape_like[i] != i) {  // the shape of an earlier value
      s.shapes.push_back(s.shapes[recipe.shape_like[i]]);
      continue;
    }
    const graph::program_value& v = p.values[i];
    nax::shape c = v.shape.resolve(bound);
    if (!c.is_fully_concrete()) {
      for (const dim& d : c.dims())
        if (d.is_dynamic())
          nax::detail::throw_shape_error("nax::executable: ", d.describe(), " of ",
                                         v.shape.to_string(), " is not bound by ", b.to_string());
    }
    s.shapes.push_back(std::move(c));
  }
  std::vector<std::size_t> value_bytes = value_bytes_of(p, s.shapes, recipe.shape_like, b);
  s.roles.reserve(n);
  for (const graph::program_value& v : p.values) s.roles.push_back(v.role);
  s.constants.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    if (s.roles[v] == graph::value_role::constant)
      s.constants[v] = constant_bits(s.shapes[v].dtype(), p.values[v].scalar);
  return value_bytes;
}

/// Which values share a buffer. A reshape into an intermediate (a rename, a split or merge of
/// axes) moves no data, nor does a set_dimension_size that keeps a prefix: its result is its
/// operand's buffer, and the step does nothing. The buffer of an intermediate is kept until the
/// later of their last reads; that of an input or a result is the caller's (the result is a view
/// of it: specialization::views).
struct buffer_aliases {
  std::vector<std::size_t> of;  // per value: the value whose buffer it is (itself if none)
  std::vector<char> step;       // per step: 1 if its result is its operand's buffer
};

inline buffer_aliases find_aliases(const graph::program& p, const specialization_recipe& recipe,
                                   std::span<const nax::shape> shapes) {
  buffer_aliases a;
  a.of.resize(p.values.size());
  std::iota(a.of.begin(), a.of.end(), std::size_t{0});
  a.step.assign(p.steps.size(), 0);
  for (const std::uint32_t k : recipe.may_alias) {
    const graph::program_step& st = p.steps[k];
    if (st.kind() == graph::op_kind::set_dimension_size) {
      // The first entries of its operand, when they are a prefix of its buffer (no axis before
      // the one cut has more than one entry) and none is past its extent: no data moves.
      const std::size_t axis = st.as<graph::set_dimension_size_op>().axis;
      const nax::shape& in = shapes[st.args[0]];
      bool prefix = shapes[st.result][axis].extent() <= in[axis].extent();
      for (std::size_t d = 0; d < axis; ++d) prefix = prefix && in[d].extent() == 1;
      if (!prefix) continue;
    }
    a.of[st.result] = a.of[st.args[0]];
    a.step[k] = 1;
  }
  return a;
}

/// Each step's kernel (none planned for a step that moves nothing; a step like an earlier one
/// copies its kernel: the recipe's kernel_like), and the scratch each asks for.
inline std::vector<scratch_request> choose_kernels(const graph::program& p,
                                                   const specialization_recipe& recipe,
                                                   const std::vector<char>& aliasing_step,
                                                   specialization& s) {
  std::vector<scratch_request> scratch;
  plan_memo memo;
  s.kernels.reserve(p.steps.size());
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    if (aliasing_step[k]) {
      s.kernels.push_back(std::make_unique<no_step>());
      continue;
    }
    const std::size_t before = scratch.size();
    const std::uint32_t like = recipe.kernel_like[k];
    s.kernels.push_back(like != k && !aliasing_step[like]
                            ? copy_step_kernel(p.steps[k], *s.kernels[like], s.shapes, scratch)
                            : make_step_kernel(p, p.steps[k], s.shapes, scratch, &memo));
    for (std::size_t r = before; r < scratch.size(); ++r) scratch[r].step = k;
  }
  return scratch;
}

/// The order steps run in: the chains that pay for running tile by tile (runtime/pipeline.hpp)
/// each one unit, independent steps side by side (runtime/step_schedule.hpp), and each step of a
/// group that runs side by side planned again for its share of the threads (a split made for
/// every thread run on one is slower: a GEMM split in two packs its shared operand twice, 3% on
/// the transformer block).
inline void order_steps(const graph::program& p, const specialization_recipe& recipe,
                        std::span<const std::size_t> value_bytes, const specialize_options& o,
                        const std::vector<char>& aliasing_step,
                        std::vector<scratch_request>& scratch, specialization& s) {
  std::vector<std::uint32_t> unit_of;
  for (std::uint32_t c = 0; c < p.pipelines.size(); ++c) {
    std::optional<pipeline> pl =
        plan_pipeline(p, recipe, c, s.shapes, value_bytes, s.threads, o.pipeline, o.pipeline_tile);
    if (!pl) continue;
    if (unit_of.empty()) {
      unit_of.resize(p.steps.size());
      std::iota(unit_of.begin(), unit_of.end(), std::uint32_t{0});
    }
    for (std::uint32_t k : p.pipelines[c].steps) unit_of[k] = p.pipelines[c].steps.front();
    s.pipelines.push_back(std::move(*pl));
  }
  s.schedule = o.parallel_steps == graph::step_parallelism::off
                   ? sequential_schedule(p, unit_of)
                   : schedule_steps(p, s.shapes, value_bytes, s.kernels, s.threads,
                                    o.parallel_steps == graph::step_parallelism::always, unit_of);
  if (!s.pipelines.empty()) s.pipeline_of.assign(s.schedule.groups(), specialization::none);
  for (std::uint32_t i = 0; i < s.pipelines.size(); ++i) {
    pipeline& pl = s.pipelines[i];
    pl.group = s.schedule.group_of[p.pipelines[pl.chain].steps.front()];
    s.pipeline_of[pl.group] = i;
  }
  for (std::size_t g = 0; g < s.schedule.groups(); ++g) {
    const std::span<const std::uint32_t> group = s.schedule.group(g);
    if (group.size() < 2 || (!s.pipeline_of.empty() && s.pipeline_of[g] != specialization::none))
      continue;
    const nax::detail::planning_threads_scope share(
        std::max<std::size_t>(1, s.threads / group.size()));
    for (std::uint32_t k : group) {
      if (aliasing_step[k]) continue;  // moves nothing
      std::erase_if(scratch, [k](const scratch_request& r) { return r.step == k; });
      const std::size_t before = scratch.size();
      s.kernels[k] = make_step_kernel(p, p.steps[k], s.shapes, scratch);
      for (std::size_t r = before; r < scratch.size(); ++r) scratch[r].step = k;
    }
  }
}

/// The pipelined chains' stage kernels (the whole steps' scratch goes). Returns per value the
/// bytes of the ring it lives in, or 0.
inline std::vector<std::size_t> build_pipelines(const graph::program& p,
                                                const specialization_recipe& recipe,
                                                std::vector<scratch_request>& scratch,
                                                specialization& s) {
  std::vector<std::size_t> ring_of(p.values.size(), 0);
  for (pipeline& pl : s.pipelines) {
    const graph::pipeline_chain& chain = p.pipelines[pl.chain];
    std::erase_if(scratch, [&](const scratch_request& r) {
      return r.step >= chain.steps.front() && r.step <= chain.steps.back();
    });
    build_pipeline(pl, p, recipe, s.shapes, s.threads, scratch, ring_of);
  }
  return ring_of;
}

/// A value's buffer request, and the first and last groups of the schedule that touch it.
struct value_life {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t request = none, first = none, last = 0;
};

/// Per value, the groups of its first and last touch: a value lives from its producer's group to
/// its last reader's.
inline std::vector<value_life> value_lives(const graph::program& p,
                                           const specialization_recipe& recipe,
                                           const step_schedule& schedule) {
  const std::vector<std::uint32_t>& group_of = schedule.group_of;
  std::vector<value_life> life(p.values.size());
  if (std::is_sorted(group_of.begin(), group_of.end())) {
    // Steps run in program order: the groups of a value's first and last steps.
    for (std::size_t v = 0; v < life.size(); ++v)
      if (recipe.first_touch[v] != specialization_recipe::untouched)
        life[v] = {value_life::none, group_of[recipe.first_touch[v]],
                   group_of[recipe.last_touch[v]]};
    return life;
  }
  auto touch = [&](std::size_t v, std::size_t g) {
    life[v].first = std::min(life[v].first, g);
    life[v].last = std::max(life[v].last, g);
  };
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const graph::program_step& st = p.steps[k];
    touch(st.result, group_of[k]);
    for (graph::value_index e : st.extra_results) touch(e, group_of[k]);
    for (graph::value_index a : st.args) touch(a, group_of[k]);
  }
  return life;
}

/// The arena: intermediates first (a ring's bytes for the values that live in one), then the
/// steps' scratch, then the pipelines' bookkeeping, in one memory plan over the schedule's groups
/// (runtime/memory_plan.hpp); the views of callers' buffers.
inline void plan_arena(const graph::program& p, const specialization_recipe& recipe,
                       const buffer_aliases& alias, std::span<const std::size_t> value_bytes,
                       std::span<const std::size_t> ring_of,
                       std::span<const scratch_request> scratch, specialization& s) {
  const std::size_t n = p.values.size();
  const std::vector<std::uint32_t>& group_of = s.schedule.group_of;
  // (Sized for the most there can be, filled by index, cut to the count at the end: a push_back
  // of each, not inlined, cost 8% of level 2 here, its argument read back whole right after being
  // written field by field.)
  std::vector<buffer_request> requests(n + scratch.size() + s.pipelines.size());
  std::vector<value_life> life = value_lives(p, recipe, s.schedule);
  std::size_t next = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (s.roles[v] != graph::value_role::intermediate || alias.of[v] != v) continue;
    // (A value no step touches keeps its program lifetime: groups are steps when nothing runs
    // side by side.)
    if (life[v].first == value_life::none)
      life[v].first = life[v].last = group_of.empty() ? 0 : group_of[p.values[v].first_step];
    requests[next] = {ring_of[v] ? ring_of[v] : value_bytes[v], life[v].first, life[v].last};
    life[v].request = next++;
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (alias.of[v] == v) continue;
    if (s.roles[alias.of[v]] != graph::value_role::intermediate) {
      s.views.push_back(
          {static_cast<graph::value_index>(v), static_cast<graph::value_index>(alias.of[v])});
      continue;
    }
    if (life[v].first == value_life::none) continue;
    buffer_request& r = requests[life[v].request = life[alias.of[v]].request];
    r.first_step = std::min(r.first_step, life[v].first);
    r.last_step = std::max(r.last_step, life[v].last);
  }
  for (const scratch_request& r : scratch)
    requests[next++] = {r.bytes, group_of[r.step], group_of[r.step]};
  for (const pipeline& pl : s.pipelines) requests[next++] = {pl.state_bytes(), pl.group, pl.group};
  requests.resize(next);
  const memory_plan plan = plan_memory(requests);
  s.offsets.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    if (life[v].request != value_life::none) s.offsets[v] = plan.offsets[life[v].request];
  const std::size_t first_scratch = requests.size() - scratch.size() - s.pipelines.size();
  for (std::size_t k = 0; k < scratch.size(); ++k)
    *scratch[k].offset = plan.offsets[first_scratch + k];
  for (std::size_t i = 0; i < s.pipelines.size(); ++i)
    s.pipelines[i].state = plan.offsets[first_scratch + scratch.size() + i];
  s.arena_bytes = plan.arena_bytes;
  s.live_peak_bytes = plan.live_peak_bytes;
  s.requests = std::move(requests);
}

/// Of a graph with gradients: the activations, buffers of forward intermediates (made from
/// builder nodes before the gradient's) that a backward step reads, each buffer once.
inline std::size_t saved_bytes_of(const graph::program& p, const buffer_aliases& alias,
                                  std::span<const std::size_t> value_bytes) {
  if (p.gradient_begin == graph::no_value) return 0;
  std::size_t saved = 0;
  std::vector<char> kept(p.values.size(), 0);
  for (const graph::program_step& st : p.steps) {
    if (st.origin < p.gradient_begin) continue;
    for (graph::value_index a : st.args) {
      const std::size_t owner = alias.of[a];
      const graph::program_value& pv = p.values[owner];
      if (pv.role != graph::value_role::intermediate || pv.origin >= p.gradient_begin ||
          kept[owner])
        continue;
      kept[owner] = 1;
      saved += value_bytes[owner];
    }
  }
  return saved;
}

/// Fused groups to the native tier (under eager this waits for their kernels).
inline void offer_to_native(native::tier& t, specialization& s) {
  for (auto& k : s.kernels)
    if (k) attach_native(*k, t);
  for (pipeline& pl : s.pipelines)
    for (pipeline::stage& st : pl.stages) {
      if (st.kernel) attach_native(*st.kernel, t);
      if (st.last_kernel) attach_native(*st.last_kernel, t);
    }
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<specialization> specialize(const graph::program& p,
                                                              const nax::bindings& b,
                                                              specialize_options o) {
  // The step kernels in a few slabs, not one heap object each (runtime/kernel_arena.hpp): room
  // for the typical step's few hundred bytes.
  const kernel_arena_scope kernel_slabs(p.steps.size() * 384);
  std::optional<specialization_recipe> own_recipe;
  if (!o.recipe) o.recipe = &own_recipe.emplace(make_specialization_recipe(p));
  const specialization_recipe& recipe = *o.recipe;
  auto s = std::make_unique<specialization>();
  s->binding = b;
  s->threads = o.threads ? o.threads : static_cast<std::size_t>(num_threads());
  const nax::detail::planning_threads_scope planning(s->threads);

  const std::vector<std::size_t> value_bytes = detail::resolve_shapes(p, recipe, b, *s);
  const detail::buffer_aliases alias = detail::find_aliases(p, recipe, s->shapes);
  std::vector<scratch_request> scratch = detail::choose_kernels(p, recipe, alias.step, *s);
  detail::order_steps(p, recipe, value_bytes, o, alias.step, scratch, *s);
  const std::vector<std::size_t> ring_of = detail::build_pipelines(p, recipe, scratch, *s);
  detail::plan_arena(p, recipe, alias, value_bytes, ring_of, scratch, *s);
  s->saved_bytes = detail::saved_bytes_of(p, alias, value_bytes);
  if (o.native && o.native->enabled()) detail::offer_to_native(*o.native, *s);

  specialization* self = s.get();
  s->pool = std::make_unique<arena_pool>(
      s->arena_bytes, p.values.size(), [self](arena& a) { self->lay_out(a); }, o.max_kept_arenas);
  return s;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
