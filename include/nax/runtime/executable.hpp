#pragma once
// nax::executable: a compiled graph and its specializations. run() reads the axis binding off
// the inputs (checking them against the graph's parameters), finds the specialization for it in
// a bounded LRU cache keyed by the complete binding (building it on a miss), leases an arena
// and runs the steps. A graph without dynamic axes has one specialization, built at compile
// time, and skips binding extraction and the cache.
//
// The hit path is built for a thread repeating a binding: the extents are read through a table
// made once per executable (no name lookups), and each thread's last specialization and arena
// of this executable are reused when the extents match, with no hashing, lock or reference
// count (one atomic increment keeps the hit count and LRU order exact).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/specialization.hpp>

namespace nax {

/// The counters of an executable's specialization cache.
struct specialization_stats {
  std::size_t hits = 0;       // runs (and pre_specialize calls) that found their binding
  std::size_t misses = 0;     // ... that had to specialize
  std::size_t evictions = 0;  // specializations dropped as least recently used
  std::size_t live = 0;       // specializations held now
  std::size_t total = 0;      // specializations ever built
  std::chrono::nanoseconds last_specialization_time{0};
};

class executable {
 public:
  executable(graph::program p, graph::compile_options options)
      : state_(std::make_unique<state>(std::move(p), options)) {
    if (state_->program.dynamic_axes.empty()) {
      const auto start = std::chrono::steady_clock::now();
      state_->fixed = runtime::specialize(state_->program, nax::bindings{});
      state_->fixed_entry = std::make_shared<cache_entry>();
      state_->fixed_entry->spec = state_->fixed;
      state_->stats.last_specialization_time = std::chrono::steady_clock::now() - start;
      state_->stats.total = state_->stats.live = 1;
    }
  }

  /// Runs the graph on `inputs` (one per parameter, in the order the parameters were made) and
  /// returns the requested outputs, in order.
  std::vector<dyn_tensor> run(std::span<const dyn_tensor> inputs) {
    const pinned s = find(inputs);
    std::vector<dyn_tensor> outputs;
    outputs.reserve(state_->program.outputs.size());
    for (graph::value_index v : state_->program.outputs) outputs.emplace_back(s.spec->shapes[v]);
    execute(s, inputs, outputs);
    return outputs;
  }
  std::vector<dyn_tensor> run(std::initializer_list<dyn_tensor> inputs) {
    return run(std::span<const dyn_tensor>(inputs.begin(), inputs.size()));
  }

  /// The same, writing into `outputs`, whose shapes must be the results' (nothing is allocated
  /// once this binding has been run before).
  void run(std::span<const dyn_tensor> inputs, std::span<dyn_tensor> outputs) {
    const pinned s = find(inputs);
    const std::vector<graph::value_index>& wanted = state_->program.outputs;
    if (outputs.size() != wanted.size())
      detail::throw_shape_error("nax::executable::run: ", outputs.size(),
                                " outputs given, the graph has ", wanted.size());
    for (std::size_t k = 0; k < wanted.size(); ++k)
      if (!(outputs[k].shape() == s.spec->shapes[wanted[k]]))
        detail::throw_shape_error("nax::executable::run: output ", k, " is ",
                                  detail::concrete_string(outputs[k].shape()), ", the result is ",
                                  detail::concrete_string(s.spec->shapes[wanted[k]]));
    execute(s, inputs, outputs);
  }

  /// Builds the specializations for `bindings` now, so that the first runs with them are hits.
  void pre_specialize(std::span<const nax::bindings> bindings) {
    for (const nax::bindings& b : bindings) {
      for (axis_name a : state_->program.dynamic_axes)
        if (!b.find(a))
          detail::throw_shape_error("nax::executable::pre_specialize: ", b.to_string(),
                                    " does not bind axis '", a.view(), "'");
      for (const nax::binding& e : b)
        if (std::find(state_->program.dynamic_axes.begin(), state_->program.dynamic_axes.end(),
                      e.name) == state_->program.dynamic_axes.end())
          detail::throw_shape_error("nax::executable::pre_specialize: ", b.to_string(),
                                    " binds axis '", e.name.view(),
                                    "', which no input of the graph has");
      if (!state_->fixed) {
        extents_key key;
        (void)key_of(b, key);
        (void)lookup(key, &b);
      }
    }
  }
  void pre_specialize(std::initializer_list<nax::bindings> bindings) {
    pre_specialize(std::span<const nax::bindings>(bindings.begin(), bindings.size()));
  }

  specialization_stats stats() const {
    std::lock_guard lock(state_->mutex);
    specialization_stats s = state_->stats;
    if (!state_->fixed) {
      s.live = state_->index.size();
      s.hits += state_->clock.load(std::memory_order_relaxed) - state_->locked_ticks;
    }
    return s;
  }

  /// The specialization for `b` if it is cached (for inspection: shapes, arena size).
  std::shared_ptr<const runtime::specialization> cached(const nax::bindings& b) const {
    if (state_->fixed) return state_->fixed;
    extents_key key;
    if (!key_of(b, key)) return nullptr;
    std::lock_guard lock(state_->mutex);
    auto it = state_->index.find(key);
    return it == state_->index.end() ? nullptr : it->second->spec;
  }

  const graph::program& program() const noexcept { return state_->program; }
  std::string to_dot() const { return graph::to_dot(state_->program); }

 private:
  // The extents of the dynamic axes, in program.dynamic_axes order: the complete binding, and
  // the cache's key.
  using extents_key = nax::detail::small_vector<std::size_t, 8>;
  struct key_hash {
    std::size_t operator()(const extents_key& k) const noexcept {
      std::uint64_t h = 0x9e3779b97f4a7c15ull;
      for (std::size_t v : k) h = (h ^ v) * 0x100000001b3ull + (h >> 29);
      return static_cast<std::size_t>(h);
    }
  };
  struct key_equal {
    bool operator()(const extents_key& a, const extents_key& b) const noexcept {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)  // a loop: a call to memcmp costs more here
        if (a[i] != b[i]) return false;
      return true;
    }
  };

  struct cache_entry {
    extents_key key;
    std::shared_ptr<runtime::specialization> spec;
    std::atomic<std::uint64_t> last_use{0};  // a tick of state::clock: the LRU order
    std::atomic<bool> evicted{false};
  };

  struct last_hit;
  // A specialization held for one run: by this thread's last_hit slot (which also lends the
  // run its arena), or by `hold`, or by the state when the graph is static.
  struct pinned {
    const runtime::specialization* spec = nullptr;
    std::shared_ptr<cache_entry> hold;
    last_hit* slot = nullptr;
  };

  // One dimension of an input's pattern, as run() checks it without looking names up.
  static constexpr std::uint32_t no_slot = ~std::uint32_t{0};
  struct dim_check {
    axis_name name;                // a concrete dimension with a name must have this one
    std::size_t extent = 0;        // static: the extent; dynamic: the bound
    std::uint32_t slot = no_slot;  // dynamic and named: its axis's index in dynamic_axes
    bool dynamic = false;
    bool first = false;  // the first dimension of all inputs with this axis: it sets the extent
  };
  struct input_check {
    nax::dtype type = nax::dtype::f32;
    std::uint32_t begin = 0, rank = 0;  // its dimensions in state::dims
  };

  struct state {
    state(graph::program p, graph::compile_options o)
        : program(std::move(p)), options(o), id(next_id()) {
      if (options.max_specializations == 0)
        detail::throw_shape_error(
            "nax::graph::compile: max_specializations must be at least 1, got 0");
      std::vector<bool> seen(program.dynamic_axes.size(), false);
      for (std::size_t k = 0; k < program.num_inputs(); ++k) {
        const nax::shape& pat = program.values[k].shape;
        inputs.push_back({pat.dtype(), static_cast<std::uint32_t>(dims.size()),
                          static_cast<std::uint32_t>(pat.rank())});
        for (const dim& d : pat.dims()) {
          dim_check c;
          c.name = d.name();
          c.dynamic = d.is_dynamic();
          c.extent = c.dynamic ? d.bound() : d.extent();
          if (c.dynamic && d.has_name()) {
            const auto at =
                std::find(program.dynamic_axes.begin(), program.dynamic_axes.end(), d.name()) -
                program.dynamic_axes.begin();
            c.slot = static_cast<std::uint32_t>(at);
            c.first = !seen[c.slot];
            seen[c.slot] = true;
          }
          dims.push_back(c);
        }
      }
    }
    static std::uint64_t next_id() {
      static std::atomic<std::uint64_t> last{0};
      return last.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    graph::program program;
    graph::compile_options options;
    const std::uint64_t id;  // never reused: tells this executable's thread-local hits apart
    std::vector<input_check> inputs;
    std::vector<dim_check> dims;
    std::shared_ptr<runtime::specialization> fixed;  // when there are no dynamic axes
    std::shared_ptr<cache_entry> fixed_entry;        // the same, for last_hit slots
    mutable std::mutex mutex;
    std::unordered_map<extents_key, std::shared_ptr<cache_entry>, key_hash, key_equal> index;
    // One tick per use of a cached specialization: hits on the thread-local path count only
    // here; those under the mutex count in stats as well, and in locked_ticks.
    std::atomic<std::uint64_t> clock{0};
    std::uint64_t locked_ticks = 0;
    specialization_stats stats;
  };

  // Each thread remembers the specialization of its last run per executable (for a few
  // executables, by id) with an arena of it: a run with the same extents reuses both without
  // hashing, locking or reference counting. The slot holds the specialization strongly: an
  // evicted one is never served from here (cache_entry::evicted) but stays alive until this
  // thread's next run that replaces it, or until the thread ends.
  struct last_hit {
    std::uint64_t owner = 0;
    std::shared_ptr<cache_entry> entry;
    runtime::arena* arena = nullptr;  // of entry's pool, kept out for this thread's runs
    bool busy = false;                // a run is using it (a nested run leaves it alone)

    last_hit() = default;
    last_hit(const last_hit&) = delete;
    last_hit& operator=(const last_hit&) = delete;
    ~last_hit() { set(0, nullptr); }
    void set(std::uint64_t o, std::shared_ptr<cache_entry> e) noexcept {
      if (arena) entry->spec->pool->give_back(arena);
      arena = nullptr;
      owner = o;
      entry = std::move(e);
    }
  };
  static last_hit& last_hit_slot(std::uint64_t owner) {
    thread_local last_hit slots[4];
    return slots[owner & 3];
  }

  // The extents of the dynamic axes read off `inputs` into ext (sized already), or false if
  // any input is not as its pattern says (the slow path then words the error).
  bool read_extents(std::span<const dyn_tensor> inputs, std::size_t* ext) const noexcept {
    const state& st = *state_;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const nax::shape& c = inputs[k].shape();
      const input_check& in = st.inputs[k];
      if (c.dtype() != in.type || c.rank() != in.rank) return false;
      const dim* cd = c.dims().data();
      const dim_check* pd = st.dims.data() + in.begin;
      for (std::size_t i = 0; i < in.rank; ++i) {
        const dim_check& d = pd[i];
        const std::size_t v = cd[i].extent();
        if (v == dynamic_extent) return false;
        if (cd[i].has_name() && !d.name.empty() && cd[i].name() != d.name) return false;
        if (!d.dynamic) {
          if (v != d.extent) return false;
          continue;
        }
        if (v > d.extent) return false;
        if (d.slot == no_slot) continue;
        if (d.first)
          ext[d.slot] = v;
        else if (ext[d.slot] != v)
          return false;
      }
    }
    return true;
  }

  // The full extraction with its error messages (what read_extents refused throws here).
  void extract_slowly(std::span<const dyn_tensor> inputs, extents_key& key) const {
    const graph::program& p = state_->program;
    std::vector<binding_source> src;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      src.push_back({p.input_names[k], p.values[k].shape, inputs[k].shape()});
    nax::bindings b;
    extract_bindings(src, b);
    if (!key_of(b, key))
      detail::throw_shape_error("nax::executable::run: the inputs bind ", b.to_string(),
                                ", not every dynamic axis of the graph");
  }

  // b as a key; false if it does not bind every dynamic axis.
  bool key_of(const nax::bindings& b, extents_key& key) const {
    const std::vector<axis_name>& axes = state_->program.dynamic_axes;
    key.resize(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::optional<std::size_t> v = b.find(axes[i]);
      if (!v) return false;
      key[i] = *v;
    }
    return true;
  }

  pinned find(std::span<const dyn_tensor> inputs) const {
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
      last_hit& slot = last_hit_slot(state_->id);
      if (slot.busy) return {state_->fixed.get(), nullptr, nullptr};
      if (slot.owner != state_->id) slot.set(state_->id, state_->fixed_entry);
      return {state_->fixed.get(), nullptr, &slot};
    }
    extents_key key;
    key.resize(p.dynamic_axes.size());
    if (!read_extents(inputs, key.data())) extract_slowly(inputs, key);

    last_hit& slot = last_hit_slot(state_->id);
    if (slot.busy) return lookup(key, nullptr);
    if (slot.owner == state_->id && slot.entry &&
        !slot.entry->evicted.load(std::memory_order_relaxed) && key_equal{}(slot.entry->key, key)) {
      slot.entry->last_use.store(state_->clock.fetch_add(1, std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
      return {slot.entry->spec.get(), nullptr, &slot};
    }
    pinned found = lookup(key, nullptr);
    slot.set(state_->id, found.hold);
    found.slot = &slot;
    return found;
  }

  // The cached specialization for `key` (b: the same as bindings, if the caller has them),
  // built on a miss.
  pinned lookup(const extents_key& key, const nax::bindings* b) const {
    state& st = *state_;
    auto tick = [&st] {
      ++st.locked_ticks;
      return st.clock.fetch_add(1, std::memory_order_relaxed) + 1;
    };
    {
      std::lock_guard lock(st.mutex);
      auto it = st.index.find(key);
      if (it != st.index.end()) {
        ++st.stats.hits;
        it->second->last_use.store(tick(), std::memory_order_relaxed);
        return {it->second->spec.get(), it->second};
      }
    }
    // Built outside the lock: other bindings keep running meanwhile. Two threads missing the
    // same binding both build it; the first to insert wins.
    nax::bindings made;
    if (!b) {
      for (std::size_t i = 0; i < key.size(); ++i) made.bind(st.program.dynamic_axes[i], key[i]);
      b = &made;
    }
    const auto start = std::chrono::steady_clock::now();
    auto e = std::make_shared<cache_entry>();
    e->key = key;
    e->spec = runtime::specialize(st.program, *b);
    const auto took = std::chrono::steady_clock::now() - start;
    std::lock_guard lock(st.mutex);
    ++st.stats.misses;
    auto it = st.index.find(key);
    if (it != st.index.end()) {
      it->second->last_use.store(tick(), std::memory_order_relaxed);
      return {it->second->spec.get(), it->second};
    }
    ++st.stats.total;
    st.stats.last_specialization_time = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
    e->last_use.store(tick(), std::memory_order_relaxed);
    st.index.emplace(key, e);
    while (st.index.size() > st.options.max_specializations) {
      // The least recently used: the oldest tick (a linear scan; this is a miss anyway).
      auto oldest = st.index.begin();
      for (auto i = st.index.begin(); i != st.index.end(); ++i)
        if (i->second->last_use.load(std::memory_order_relaxed) <
            oldest->second->last_use.load(std::memory_order_relaxed))
          oldest = i;
      // A run still holding it keeps it alive until it finishes; no thread's last hit will
      // serve it again.
      oldest->second->evicted.store(true, std::memory_order_relaxed);
      st.index.erase(oldest);
      ++st.stats.evictions;
    }
    return {e->spec.get(), std::move(e)};
  }

  void execute(const pinned& pin, std::span<const dyn_tensor> inputs,
               std::span<dyn_tensor> outputs) const {
    const runtime::specialization& s = *pin.spec;
    // The arena: the slot's (kept out of the pool between this thread's runs) or a lease.
    struct arena_guard {
      last_hit* slot;
      runtime::arena_pool& pool;
      runtime::arena* a;
      ~arena_guard() {
        if (slot) {
          slot->arena = a;
          slot->busy = false;
        } else {
          pool.give_back(a);
        }
      }
    } guard{pin.slot, *s.pool, nullptr};
    if (pin.slot) {
      pin.slot->busy = true;
      guard.a = pin.slot->arena ? pin.slot->arena : s.pool->take();
      pin.slot->arena = nullptr;
    } else {
      guard.a = s.pool->take();
    }
    const graph::program& p = state_->program;
    void** values = guard.a->values.data();
    for (std::size_t k = 0; k < inputs.size(); ++k) values[k] = const_cast<void*>(inputs[k].data());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const graph::program_value& v = p.values[p.outputs[k]];
      if (v.role == graph::value_role::output && v.index == k)
        values[p.outputs[k]] = outputs[k].data();
    }
    std::byte* arena = guard.a->memory.get();
    for (const auto& kernel : s.kernels) kernel->run(values, arena);
    // Results that are inputs, constants or repeats of another result.
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const graph::program_value& v = p.values[p.outputs[k]];
      if (v.role == graph::value_role::output && v.index == k) continue;
      if (outputs[k].bytes())
        std::memcpy(outputs[k].data(), values[p.outputs[k]], outputs[k].bytes());
    }
  }

  std::unique_ptr<state> state_;
};

namespace graph {

/// Compiles the part of `g` that `outputs` need (level 1); runs specialize it per binding.
inline executable compile(const builder& g, std::span<const value> outputs,
                          compile_options options = {}) {
  return executable(compile_program(g, outputs, options), options);
}
inline executable compile(const builder& g, std::initializer_list<value> outputs,
                          compile_options options = {}) {
  return compile(g, std::span<const value>(outputs.begin(), outputs.size()), options);
}

}  // namespace graph
}  // namespace nax
