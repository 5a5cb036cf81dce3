#pragma once
// nax::executable: a compiled graph and its specializations. run() reads the axis binding off
// the inputs (runtime/input_signature.hpp), finds the specialization for it (the thread's last
// one, runtime/run_slot.hpp, or the LRU cache, runtime/specialization_cache.hpp, which builds it
// on a miss), takes an arena and runs the steps, group by group (runtime/step_schedule.hpp). A
// specialization is for the binding and the thread count current when the run starts, so a run
// always splits its work for the threads it has. Under the size policies buckets and bound
// (runtime/size_buckets.hpp) the cache is keyed by the bucket, and the run by its real extents
// within it. A graph without dynamic axes has one
// specialization built when it is compiled (for the thread count of then), and skips binding
// extraction and the cache while the thread count stays that.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/binding_key.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/specialization_stats.hpp>

namespace nax::NAX_ISA {
namespace runtime {
struct specialization;
struct run_slot;
struct cache_entry;
}  // namespace runtime

class executable {
 public:
  NAX_RUNTIME_INLINE executable(graph::program p, graph::compile_options options);
  NAX_RUNTIME_INLINE executable(executable&&) noexcept;
  NAX_RUNTIME_INLINE executable& operator=(executable&&) noexcept;
  NAX_RUNTIME_INLINE ~executable();

  /// Runs the graph on `inputs` (one per parameter, in the order the parameters were made) and
  /// returns the requested outputs, in order. Their buffers are not cleared (the graph writes
  /// every element) and come from a bounded pool of the executable's released results
  /// (runtime/result_pool.hpp): a warm run whose earlier results are gone maps no new memory.
  NAX_RUNTIME_INLINE std::vector<dyn_tensor> run(std::span<const dyn_tensor> inputs);
  std::vector<dyn_tensor> run(std::initializer_list<dyn_tensor> inputs) {
    return run(std::span<const dyn_tensor>(inputs.begin(), inputs.size()));
  }

  /// The same, writing into `outputs`, whose shapes must be the results' (nothing is allocated
  /// once this binding has been run before). No output may share memory with an input, but for
  /// in_place_input's: output k may be input i's own tensor, updated in place.
  NAX_RUNTIME_INLINE void run(std::span<const dyn_tensor> inputs, std::span<dyn_tensor> outputs);

  /// The input whose tensor result k may be written in (given as both), if any: result k is a
  /// dynamic_update_slice of that input that nothing else reads (graph/in_place.hpp), and the
  /// run then writes only the update (a KV cache's new position) instead of copying the input.
  NAX_RUNTIME_INLINE std::optional<std::size_t> in_place_input(std::size_t k) const;

  /// Makes output k of a run once its shape is known: a dyn_tensor of exactly that shape.
  using output_maker = dyn_tensor (*)(void* context, std::size_t k, const nax::shape& shape);

  /// The same, with outputs[k] = make(context, k, shape of result k) made once the binding has
  /// resolved the results' shapes (nax::jit allocates its typed results so: an axis a result
  /// alone has, such as a slice's or a concat's, gets its extent from the graph).
  NAX_RUNTIME_INLINE void run(std::span<const dyn_tensor> inputs, std::span<dyn_tensor> outputs,
                              output_maker make, void* context);

  /// Builds the specializations for `bindings` now (for the current thread count), so that the
  /// first runs with them are hits.
  NAX_RUNTIME_INLINE void pre_specialize(std::span<const nax::bindings> bindings);
  void pre_specialize(std::initializer_list<nax::bindings> bindings) {
    pre_specialize(std::span<const nax::bindings>(bindings.begin(), bindings.size()));
  }

  NAX_RUNTIME_INLINE specialization_stats stats() const;

  /// Waits until every native kernel this executable's fused groups asked for so far is ready
  /// or has failed (graph::native_policy::background compiles them on another thread; for
  /// benchmarks and tests).
  NAX_RUNTIME_INLINE void wait_native() const;

  /// The specialization for `b` and the current thread count if it is cached (for inspection:
  /// shapes, arena size, schedule).
  NAX_RUNTIME_INLINE std::shared_ptr<const runtime::specialization> cached(
      const nax::bindings& b) const;

  NAX_RUNTIME_INLINE const graph::program& program() const noexcept;
  NAX_RUNTIME_INLINE std::string to_dot() const;
  /// The same, with what the specialization for `b` (made now if not cached) chose for each
  /// pipeline chain: its tile size, lanes and ring slots, or that it runs whole.
  NAX_RUNTIME_INLINE std::string to_dot(const nax::bindings& b);

 private:
  struct state;
  struct pinned;
  NAX_RUNTIME_INLINE pinned find(std::span<const dyn_tensor> inputs) const;
  NAX_RUNTIME_INLINE pinned find_in_bucket(const runtime::extents_key& key,
                                           runtime::run_slot& slot) const;
  NAX_RUNTIME_INLINE void check_bounds(const runtime::extents_key& key) const;
  NAX_RUNTIME_INLINE void bucket_of(const runtime::extents_key& key,
                                    runtime::extents_key& bucket) const;
  NAX_RUNTIME_INLINE std::shared_ptr<runtime::cache_entry> lookup_bucket(
      const runtime::extents_key& key, runtime::extents_key& bucket, bool* made = nullptr) const;
  struct run_guard;
  NAX_RUNTIME_INLINE static void check_output(std::size_t k, const nax::shape& given,
                                              const nax::shape& result, const char* verb);
  NAX_RUNTIME_INLINE void execute(const pinned& pin, std::span<const dyn_tensor> inputs,
                                  std::span<dyn_tensor> outputs) const;

  std::unique_ptr<state> state_;
};

}  // namespace nax::NAX_ISA

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>

#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/graph/in_place.hpp>
#include <nax/graph/to_dot.hpp>
#include <nax/runtime/input_signature.hpp>
#include <nax/runtime/native/tier.hpp>
#include <nax/runtime/result_pool.hpp>
#include <nax/runtime/run_slot.hpp>
#include <nax/runtime/size_buckets.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/specialization_cache.hpp>
#include <nax/runtime/trace.hpp>
#include <nax/runtime/value_axes.hpp>

namespace nax::NAX_ISA {

struct executable::state {
  state(graph::program p, graph::compile_options o)
      : program(std::move(p)),
        options(o),
        id(next_id()),
        signature(program),
        buckets(program, o),
        recipe(runtime::make_specialization_recipe(program)),
        in_place(graph::in_place_inputs(program)),
        native(o.native),
        cache(program, o.max_specializations, specialization_options(),
              o.max_extents_per_specialization) {}
  runtime::specialize_options specialization_options() {
    return {0,       options.parallel_steps, options.pipeline, options.pipeline_tile, &native,
            &recipe, options.max_kept_arenas};
  }
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  graph::program program;
  graph::compile_options options;
  const std::uint64_t id;  // never reused: tells this executable's run slots apart
  runtime::input_signature signature;
  runtime::size_buckets buckets;
  // Buckets whose extents the graph does not allow (an axis that an op unified with a static
  // extent, say 1, allows that extent alone): their extents are served exactly.
  std::mutex refused_mutex;
  std::vector<runtime::extents_key> refused;
  std::atomic<bool> any_refused{false};
  runtime::specialization_recipe recipe;  // (before the cache, which specializes with it)
  std::vector<graph::value_index> in_place;  // per result: graph::in_place_inputs
  runtime::native::tier native;           // (before the cache: its kernels' steps point at it)
  runtime::specialization_cache cache;
  std::shared_ptr<runtime::specialization> fixed;     // when there are no dynamic axes
  std::shared_ptr<runtime::cache_entry> fixed_entry;  // the same, for run slots
  specialization_stats fixed_stats;
  std::atomic<std::size_t> fixed_hits{0};  // runs (and pre_specialize calls) that used `fixed`
  runtime::result_pool results;            // the buffers of run(inputs)'s results
};

// A specialization held for one run: by this thread's run slot (which also lends the run its
// arena), or by `hold` (and `extent`), or by the state when the graph is static. Its arenas
// come from `pool`: its own, or under buckets and bound its bucket's.
struct executable::pinned {
  const runtime::specialization* spec = nullptr;
  std::shared_ptr<runtime::cache_entry> hold;
  runtime::run_slot* slot = nullptr;
  runtime::arena_pool* pool = nullptr;
  std::shared_ptr<runtime::extent_entry> extent;
  // What finding it added to the cache (a new specialization, new steps of a bucket's extents):
  // dropped again if the run fails (run_guard), so that a failed run leaves the cache as it was.
  std::shared_ptr<runtime::cache_entry> made, made_in;
  std::shared_ptr<runtime::extent_entry> made_extent;
};

// Drops what a run's find added to the cache unless the run finished (dismissed).
struct executable::run_guard {
  const executable& ex;
  const pinned& pin;
  bool dismissed = false;
  run_guard(const executable& e, const pinned& p) : ex(e), pin(p) {}
  run_guard(const run_guard&) = delete;
  run_guard& operator=(const run_guard&) = delete;
  ~run_guard() {
    if (dismissed || (!pin.made && !pin.made_extent)) return;
    runtime::run_slot& slot = runtime::run_slot::of(ex.state_->id);
    if (pin.made_extent) {
      ex.state_->cache.drop_extent(*pin.made_in, pin.made_extent);
      if (!slot.busy && slot.extent == pin.made_extent) slot.extent = nullptr;
    }
    if (pin.made) ex.state_->cache.drop(pin.made);  // (marked evicted: no slot serves it again)
  }
};

NAX_RUNTIME_INLINE executable::executable(graph::program p, graph::compile_options options) {
  if (options.max_specializations == 0)
    detail::throw_shape_error("nax::graph::compile: max_specializations must be at least 1, got 0");
  if (options.max_extents_per_specialization == 0)
    detail::throw_shape_error(
        "nax::graph::compile: max_extents_per_specialization must be at least 1, got 0");
  state_ = std::make_unique<state>(std::move(p), options);
  if (state_->program.dynamic_axes.empty()) {
    const auto start = std::chrono::steady_clock::now();
    state_->fixed =
        runtime::specialize(state_->program, nax::bindings{}, state_->specialization_options());
    state_->fixed_entry = std::make_shared<runtime::cache_entry>();
    state_->fixed_entry->spec = state_->fixed;
    state_->fixed_stats.last_specialization_time = std::chrono::steady_clock::now() - start;
    state_->fixed_stats.total = state_->fixed_stats.live = 1;
  }
}
NAX_RUNTIME_INLINE executable::executable(executable&&) noexcept = default;
NAX_RUNTIME_INLINE executable& executable::operator=(executable&&) noexcept = default;
NAX_RUNTIME_INLINE executable::~executable() = default;

NAX_RUNTIME_INLINE std::vector<dyn_tensor> executable::run(std::span<const dyn_tensor> inputs) {
  const pinned s = find(inputs);
  run_guard guard{*this, s};
  std::vector<dyn_tensor> outputs;
  outputs.reserve(state_->program.outputs.size());
  for (graph::value_index v : state_->program.outputs) {
    const nax::shape& shape = s.spec->shapes[v];
    const std::size_t bytes = shape.num_bytes();
    outputs.push_back(bytes ? dyn_tensor::share(shape, state_->results.get(bytes))
                            : dyn_tensor(shape));
  }
  execute(s, inputs, outputs);
  guard.dismissed = true;
  return outputs;
}

NAX_RUNTIME_INLINE void executable::run(std::span<const dyn_tensor> inputs,
                                        std::span<dyn_tensor> outputs) {
  const pinned s = find(inputs);
  run_guard guard{*this, s};
  const std::vector<graph::value_index>& wanted = state_->program.outputs;
  if (outputs.size() != wanted.size())
    detail::throw_shape_error("nax::executable::run: ", outputs.size(),
                              " outputs given, the graph has ", wanted.size());
  for (std::size_t k = 0; k < wanted.size(); ++k)
    check_output(k, outputs[k].shape(), s.spec->shapes[wanted[k]], " is ");
  // A run reads its inputs while it writes its outputs, in any order: no output may share a
  // byte with an input or with another output; but an output updating its input in place is
  // that input's own buffer, which no other input may share.
  auto overlap = [](const dyn_tensor& a, const dyn_tensor& b) {
    const auto* pa = static_cast<const std::byte*>(a.data());
    const auto* pb = static_cast<const std::byte*>(b.data());
    return a.bytes() && b.bytes() && std::less<>{}(pa, pb + b.bytes()) &&
           std::less<>{}(pb, pa + a.bytes());
  };
  const std::vector<graph::value_index>& in_place = state_->in_place;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::size_t own = in_place[k] != graph::no_value &&
                                    outputs[k].data() == inputs[in_place[k]].data() &&
                                    outputs[k].bytes() == inputs[in_place[k]].bytes()
                                ? in_place[k]
                                : inputs.size();
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (i != own && overlap(outputs[k], inputs[i]))
        detail::throw_shape_error("nax::executable::run: output ", k, " shares memory with input '",
                                  state_->program.input_names[i],
                                  "'; a run reads its inputs while it writes its outputs");
    for (std::size_t j = 0; j < k; ++j)
      if (overlap(outputs[k], outputs[j]))
        detail::throw_shape_error("nax::executable::run: outputs ", j, " and ", k, " share memory");
  }
  execute(s, inputs, outputs);
  guard.dismissed = true;
}

NAX_RUNTIME_INLINE void executable::run(std::span<const dyn_tensor> inputs,
                                        std::span<dyn_tensor> outputs, output_maker make,
                                        void* context) {
  const pinned s = find(inputs);
  run_guard guard{*this, s};
  const std::vector<graph::value_index>& wanted = state_->program.outputs;
  if (outputs.size() != wanted.size())
    detail::throw_shape_error("nax::executable::run: ", outputs.size(),
                              " outputs given, the graph has ", wanted.size());
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    outputs[k] = make(context, k, s.spec->shapes[wanted[k]]);
    check_output(k, outputs[k].shape(), s.spec->shapes[wanted[k]], " was made ");
  }
  execute(s, inputs, outputs);
  guard.dismissed = true;
}

NAX_RUNTIME_INLINE std::optional<std::size_t> executable::in_place_input(std::size_t k) const {
  const graph::value_index i = state_->in_place.at(k);
  if (i == graph::no_value) return std::nullopt;
  return i;
}

NAX_RUNTIME_INLINE void executable::pre_specialize(std::span<const nax::bindings> bindings) {
  const std::vector<axis_name>& axes = state_->program.dynamic_axes;
  for (const nax::bindings& b : bindings) {
    for (axis_name a : axes)
      if (!b.find(a))
        detail::throw_shape_error("nax::executable::pre_specialize: ", b.to_string(),
                                  " does not bind axis '", a.view(), "'");
    for (const nax::binding& e : b)
      if (std::find(axes.begin(), axes.end(), e.name) == axes.end())
        detail::throw_shape_error("nax::executable::pre_specialize: ", b.to_string(),
                                  " binds axis '", e.name.view(),
                                  "', which no input of the graph has");
    const auto threads = static_cast<std::size_t>(num_threads());
    if (state_->fixed && state_->fixed->threads == threads) {
      state_->fixed_hits.fetch_add(1, std::memory_order_relaxed);
    } else {
      runtime::extents_key key;
      (void)runtime::key_of(axes, b, threads, key);
      check_bounds(key);
      runtime::check_value_axes(state_->program, key);
      if (!state_->buckets.any()) {
        (void)state_->cache.lookup(key, &b);
        continue;
      }
      runtime::extents_key bucket;
      const std::shared_ptr<runtime::cache_entry> e = lookup_bucket(key, bucket);
      (void)state_->cache.extent(*e, key);
    }
  }
}

NAX_RUNTIME_INLINE void executable::wait_native() const { state_->native.wait(); }

NAX_RUNTIME_INLINE specialization_stats executable::stats() const {
  specialization_stats s = state_->cache.stats();
  const runtime::native::tier_counts n = state_->native.counts();
  s.native_ready = n.ready;
  s.native_pending = n.pending;
  s.native_failed = n.failed;
  if (state_->fixed) {  // the fixed one, and those for other thread counts
    const specialization_stats& f = state_->fixed_stats;
    s.hits += f.hits + state_->fixed_hits.load(std::memory_order_relaxed);
    s.misses += f.misses;
    s.total += f.total;
    s.live += f.live;
    s.arena_bytes += state_->fixed->pool->bytes() * state_->fixed->pool->arenas();
    if (s.last_specialization_time == decltype(s.last_specialization_time){})
      s.last_specialization_time = f.last_specialization_time;
  }
  return s;
}

NAX_RUNTIME_INLINE std::shared_ptr<const runtime::specialization> executable::cached(
    const nax::bindings& b) const {
  const auto threads = static_cast<std::size_t>(num_threads());
  if (state_->fixed && state_->fixed->threads == threads) return state_->fixed;
  runtime::extents_key key;
  if (!runtime::key_of(state_->program.dynamic_axes, b, threads, key)) return nullptr;
  if (!state_->buckets.any()) {
    const std::shared_ptr<runtime::cache_entry> e = state_->cache.find(key);
    return e ? e->spec : nullptr;
  }
  runtime::extents_key bucket;
  bucket_of(key, bucket);
  const std::shared_ptr<runtime::cache_entry> e = state_->cache.find(bucket);
  if (!e) return nullptr;
  const std::shared_ptr<runtime::extent_entry> x = state_->cache.find_extent(*e, key);
  return x ? x->spec : nullptr;
}

NAX_RUNTIME_INLINE const graph::program& executable::program() const noexcept {
  return state_->program;
}
NAX_RUNTIME_INLINE std::string executable::to_dot() const { return graph::to_dot(state_->program); }

NAX_RUNTIME_INLINE std::string executable::to_dot(const nax::bindings& b) {
  std::shared_ptr<const runtime::specialization> s = cached(b);
  if (!s) {
    pre_specialize({b});  // (checks b)
    s = cached(b);
  }
  if (!s)  // evicted by another thread's runs meanwhile: made for this drawing alone
    s = runtime::specialize(state_->program, b, state_->specialization_options());
  const graph::program& p = state_->program;
  std::vector<std::string> notes(p.pipelines.size(), "whole at " + b.to_string());
  for (const runtime::pipeline& pl : s->pipelines)
    notes[pl.chain] =
        detail::message("tile ", pl.tile, " of ", pl.extent, " at ", b.to_string(), " (", pl.tiles,
                        " tiles, ", pl.lanes, " lanes, rings of ", pl.slots, ")");
  std::vector<std::string> step_notes(p.steps.size());
  if (state_->native.enabled())
    for (std::size_t k = 0; k < p.steps.size(); ++k)
      if ((p.steps[k].kind() == graph::op_kind::fused_elementwise ||
           p.steps[k].kind() == graph::op_kind::fused_reduce) &&
          s->kernels[k])
        step_notes[k] = runtime::runs_native(*s->kernels[k]) ? "native" : "interpreted";
  return graph::to_dot(p, notes, step_notes);
}

NAX_RUNTIME_INLINE executable::pinned executable::find(std::span<const dyn_tensor> inputs) const {
  const graph::program& p = state_->program;
  if (inputs.size() != p.num_inputs()) {
    std::string names;
    for (std::size_t k = 0; k < p.num_inputs(); ++k) {
      if (k) names += ", ";
      names += p.input_names[k];
    }
    detail::throw_shape_error("nax::executable::run: ", inputs.size(), " input",
                              inputs.size() == 1 ? "" : "s", " given, the graph has ",
                              p.num_inputs(), " (", names, ")");
  }
  runtime::run_slot& slot = runtime::run_slot::of(state_->id);
  const auto threads = static_cast<std::size_t>(num_threads());
  if (state_->fixed) {
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (!(inputs[k].shape() == state_->fixed->shapes[k])) {
        // Same checks and messages as the dynamic path.
        nax::bindings unused;
        const binding_source src{p.input_names[k], p.values[k].shape, inputs[k].shape()};
        extract_bindings(std::span<const binding_source>(&src, 1), unused);
        detail::throw_shape_error("input '", p.input_names[k],
                                  "': ", detail::concrete_string(inputs[k].shape()), " is not ",
                                  p.values[k].shape.to_string());
      }
    if (state_->fixed->threads == threads) {
      state_->fixed_hits.fetch_add(1, std::memory_order_relaxed);
      if (slot.busy)
        return {state_->fixed.get(), nullptr, nullptr, state_->fixed->pool.get(), {}, {}, {}, {}};
      if (slot.owner != state_->id || slot.entry != state_->fixed_entry)
        slot.set(state_->id, state_->fixed_entry);
      return {state_->fixed.get(), nullptr, &slot, state_->fixed->pool.get(), {}, {}, {}, {}};
    }
  }
  // The key: the dynamic axes' extents, then the thread count.
  runtime::extents_key key;
  const std::size_t axes = p.dynamic_axes.size();
  key.resize(axes + 1);
  if (!state_->signature.read_extents(inputs, key.data()))
    state_->signature.extract(p, inputs, threads, key);
  key[axes] = threads;
  if (!p.value_axes.empty()) runtime::compute_value_axes(p, inputs, key);
  if (state_->buckets.any()) return find_in_bucket(key, slot);

  bool made = false;
  if (slot.busy) {
    std::shared_ptr<runtime::cache_entry> e = state_->cache.lookup(key, nullptr, &made);
    runtime::arena_pool* pool = e->spec->pool.get();
    pinned pin{e->spec.get(), e, nullptr, pool, {}, {}, {}, {}};
    if (made) pin.made = std::move(e);
    return pin;
  }
  if (slot.owner == state_->id && slot.entry &&
      !slot.entry->evicted.load(std::memory_order_relaxed) &&
      runtime::extents_key_equal{}(slot.entry->key, key)) {
    state_->cache.touch(*slot.entry);
    return {slot.entry->spec.get(), nullptr, &slot, slot.entry->spec->pool.get(), {}, {}, {}, {}};
  }
  std::shared_ptr<runtime::cache_entry> e = state_->cache.lookup(key, nullptr, &made);
  const runtime::specialization* spec = e->spec.get();
  slot.set(state_->id, e);
  pinned pin{spec, e, &slot, spec->pool.get(), {}, {}, {}, {}};
  if (made) pin.made = std::move(e);
  return pin;
}

NAX_RUNTIME_INLINE executable::pinned executable::find_in_bucket(const runtime::extents_key& key,
                                                                 runtime::run_slot& slot) const {
  runtime::extents_key bucket;
  bucket_of(key, bucket);
  pinned pin;
  runtime::cache_entry* e = nullptr;
  if (!slot.busy && slot.owner == state_->id && slot.entry &&
      !slot.entry->evicted.load(std::memory_order_relaxed) &&
      runtime::extents_key_equal{}(slot.entry->key, bucket)) {
    state_->cache.touch(*slot.entry);
    e = slot.entry.get();
    if (slot.extent && runtime::extents_key_equal{}(slot.extent->key, key)) {
      state_->cache.touch_extent(*e, *slot.extent);
      pin.extent = slot.extent;
    }
  } else {
    bool made = false;
    pin.hold = lookup_bucket(key, bucket, &made);
    e = pin.hold.get();
    if (made) pin.made = pin.hold;
    if (!slot.busy) slot.set(state_->id, pin.hold);
  }
  if (!pin.extent) {
    bool made = false;
    pin.extent = state_->cache.extent(*e, key, &made);
    if (made && !pin.made) {  // (a new bucket takes its extents with it)
      pin.made_extent = pin.extent;
      pin.made_in = slot.entry && slot.entry.get() == e ? slot.entry : pin.hold;
    }
  }
  pin.spec = pin.extent->spec.get();
  if (pin.extent->own_arena) {
    pin.pool = pin.extent->spec->pool.get();  // (not the slot's: its arena is the bucket's)
  } else {
    pin.pool = e->spec->pool.get();
    if (!slot.busy) pin.slot = &slot;
  }
  if (!slot.busy) slot.extent = pin.extent;
  return pin;
}

NAX_RUNTIME_INLINE void executable::bucket_of(const runtime::extents_key& key,
                                              runtime::extents_key& bucket) const {
  state_->buckets.round(key, bucket);
  if (!state_->any_refused.load(std::memory_order_acquire)) return;
  std::lock_guard lock(state_->refused_mutex);
  for (const runtime::extents_key& r : state_->refused)
    if (runtime::extents_key_equal{}(r, bucket)) bucket = key;
}

NAX_RUNTIME_INLINE std::shared_ptr<runtime::cache_entry> executable::lookup_bucket(
    const runtime::extents_key& key, runtime::extents_key& bucket, bool* made) const {
  bucket_of(key, bucket);
  if (runtime::extents_key_equal{}(bucket, key)) return state_->cache.lookup(key, nullptr, made);
  try {
    return state_->cache.lookup(bucket, nullptr, made);
  } catch (const shape_error&) {
    // The graph does not allow the bucket's extents; whether it allows the run's, the exact
    // specialization tells (and its error is the one the run gets).
    {
      std::lock_guard lock(state_->refused_mutex);
      state_->refused.push_back(bucket);
      state_->any_refused.store(true, std::memory_order_release);
    }
    bucket = key;
    return state_->cache.lookup(key, nullptr, made);
  }
}

// An output given for result k: the same dtype and extents; its dimensions may be unnamed (as an
// input's may), and a named one must have the result's name.
NAX_RUNTIME_INLINE void executable::check_output(std::size_t k, const nax::shape& given,
                                                 const nax::shape& result, const char* verb) {
  bool same = given.dtype() == result.dtype() && given.rank() == result.rank();
  std::size_t renamed = given.rank();
  for (std::size_t i = 0; same && i < given.rank(); ++i) {
    const dim& g = given.dims()[i];
    const dim& r = result.dims()[i];
    same = g.extent() == r.extent();
    if (same && g.has_name() && g.name() != r.name() && renamed == given.rank()) renamed = i;
  }
  if (same && renamed == given.rank()) return;
  const std::string what =
      detail::message("nax::executable::run: output ", k, verb, detail::concrete_string(given),
                      ", the result is ", detail::concrete_string(result));
  if (!same) detail::throw_shape_error(what);
  detail::throw_shape_error(what, ": dimension ", renamed, " is named '",
                            given.dims()[renamed].name().view(), "', the result's '",
                            result.dims()[renamed].name().view(),
                            "' (an output's dimension may be unnamed, or named as the result's)");
}

NAX_RUNTIME_INLINE void executable::check_bounds(const runtime::extents_key& key) const {
  const graph::program& p = state_->program;
  for (std::size_t k = 0; k < p.num_inputs(); ++k)
    for (const dim& d : p.values[k].shape.dims()) {
      if (!d.is_dynamic() || !d.has_name() || !d.has_bound()) continue;
      const auto at = static_cast<std::size_t>(
          std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), d.name()) -
          p.dynamic_axes.begin());
      if (at < p.dynamic_axes.size() && key[at] > d.bound())
        detail::throw_shape_error("input '", p.input_names[k], "': axis '", d.name().view(),
                                  "': extent ", key[at], " exceeds its bound ", d.bound());
    }
}

NAX_RUNTIME_INLINE void executable::execute(const pinned& pin, std::span<const dyn_tensor> inputs,
                                            std::span<dyn_tensor> outputs) const {
  const runtime::specialization& s = *pin.spec;
  const runtime::run_arena a(pin.slot, *pin.pool);
  const graph::program& p = state_->program;
  if (a->layout != s.id) s.lay_out(*a);  // an arena of the bucket, last used by other extents
  void** values = a->values.data();
  for (std::size_t k = 0; k < inputs.size(); ++k) values[k] = const_cast<void*>(inputs[k].data());
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const graph::program_value& v = p.values[p.outputs[k]];
    if (v.role == graph::value_role::output && v.index == k)
      values[p.outputs[k]] = outputs[k].data();
  }
  for (const runtime::specialization::view& v : s.views) values[v.value] = values[v.of];
  std::byte* arena = a->memory.get();
  const detail::trace_use traced;
  nax::trace* const tr = traced.get();
  const std::uint64_t run_id = tr ? tr->begin_run() : 0;
  auto run_step = [&](std::uint32_t k, std::size_t g) {
    if (tr == nullptr) [[likely]] {
      s.kernels[k]->run(values, arena);
      return;
    }
    const double start = tr->now_us();
    s.kernels[k]->run(values, arena);
    tr->record(graph::name(p.steps[k].kind()), k, static_cast<std::uint32_t>(g), run_id, start,
               tr->now_us());
  };
  const runtime::step_schedule& plan = s.schedule;
  for (std::size_t g = 0; g < plan.groups(); ++g) {
    const std::span<const std::uint32_t> group = plan.group(g);
    if (!s.pipeline_of.empty() && s.pipeline_of[g] != runtime::specialization::none) {
      runtime::run_pipeline(s.pipelines[s.pipeline_of[g]], p, values, arena, tr, run_id);
      continue;
    }
    if (group.size() == 1) {
      run_step(group[0], g);
      continue;
    }
    // Side by side, one step per lane; each step's own loops run inline on its lane.
    auto body = [&](std::size_t c) { run_step(group[c], g); };
    detail::global_pool().run(static_cast<std::size_t>(num_threads()), group.size(), body);
  }
  // Results that are inputs, constants or repeats of another result.
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const graph::program_value& v = p.values[p.outputs[k]];
    if (v.role == graph::value_role::output && v.index == k) continue;
    if (outputs[k].bytes())
      std::memcpy(outputs[k].data(), values[p.outputs[k]], outputs[k].bytes());
  }
}

}  // namespace nax::NAX_ISA
#endif  // NAX_RUNTIME_DEFINITIONS
