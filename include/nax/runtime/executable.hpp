#pragma once
// nax::executable: a compiled graph and its specializations. run() reads the axis binding off
// the inputs (checking them against the graph's parameters), finds the specialization for it in
// a bounded LRU cache keyed by the complete binding (building it on a miss), leases an arena
// and runs the steps. A graph without dynamic axes has one specialization, built at compile
// time, and skips binding extraction and the cache.

#include <chrono>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
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
      state_->stats.last_specialization_time = std::chrono::steady_clock::now() - start;
      state_->stats.total = state_->stats.live = 1;
    }
  }

  /// Runs the graph on `inputs` (one per parameter, in the order the parameters were made) and
  /// returns the requested outputs, in order.
  std::vector<dyn_tensor> run(std::span<const dyn_tensor> inputs) {
    const std::shared_ptr<runtime::specialization> s = find(inputs);
    std::vector<dyn_tensor> outputs;
    outputs.reserve(state_->program.outputs.size());
    for (graph::value_index v : state_->program.outputs) outputs.emplace_back(s->shapes[v]);
    execute(*s, inputs, outputs);
    return outputs;
  }
  std::vector<dyn_tensor> run(std::initializer_list<dyn_tensor> inputs) {
    return run(std::span<const dyn_tensor>(inputs.begin(), inputs.size()));
  }

  /// The same, writing into `outputs`, whose shapes must be the results' (nothing is allocated
  /// once this binding has been run before).
  void run(std::span<const dyn_tensor> inputs, std::span<dyn_tensor> outputs) {
    const std::shared_ptr<runtime::specialization> s = find(inputs);
    const std::vector<graph::value_index>& wanted = state_->program.outputs;
    if (outputs.size() != wanted.size())
      detail::throw_shape_error("nax::executable::run: ", outputs.size(),
                                " outputs given, the graph has ", wanted.size());
    for (std::size_t k = 0; k < wanted.size(); ++k)
      if (!(outputs[k].shape() == s->shapes[wanted[k]]))
        detail::throw_shape_error("nax::executable::run: output ", k, " is ",
                                  detail::concrete_string(outputs[k].shape()), ", the result is ",
                                  detail::concrete_string(s->shapes[wanted[k]]));
    execute(*s, inputs, outputs);
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
      if (!state_->fixed) (void)lookup(b);
    }
  }
  void pre_specialize(std::initializer_list<nax::bindings> bindings) {
    pre_specialize(std::span<const nax::bindings>(bindings.begin(), bindings.size()));
  }

  specialization_stats stats() const {
    std::lock_guard lock(state_->mutex);
    specialization_stats s = state_->stats;
    if (!state_->fixed) s.live = state_->lru.size();
    return s;
  }

  /// The specialization for `b` if it is cached (for inspection: shapes, arena size).
  std::shared_ptr<const runtime::specialization> cached(const nax::bindings& b) const {
    if (state_->fixed) return state_->fixed;
    std::lock_guard lock(state_->mutex);
    auto it = state_->index.find(b.key());
    return it == state_->index.end() ? nullptr : it->second->second;
  }

  const graph::program& program() const noexcept { return state_->program; }
  std::string to_dot() const { return graph::to_dot(state_->program); }

 private:
  using entry = std::pair<binding_key, std::shared_ptr<runtime::specialization>>;

  struct state {
    state(graph::program p, graph::compile_options o) : program(std::move(p)), options(o) {
      if (options.max_specializations == 0)
        detail::throw_shape_error(
            "nax::graph::compile: max_specializations must be at least 1, got 0");
    }
    graph::program program;
    graph::compile_options options;
    std::shared_ptr<runtime::specialization> fixed;  // when there are no dynamic axes
    mutable std::mutex mutex;
    std::list<entry> lru;  // most recently used first
    std::unordered_map<binding_key, std::list<entry>::iterator> index;
    specialization_stats stats;
  };

  std::shared_ptr<runtime::specialization> find(std::span<const dyn_tensor> inputs) const {
    const graph::program& p = state_->program;
    if (inputs.size() != p.num_inputs()) {
      std::string names;
      for (std::size_t k = 0; k < p.num_inputs(); ++k) names += (k ? ", " : "") + p.input_names[k];
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
      return state_->fixed;
    }
    // Up to 8 inputs without allocating.
    constexpr std::size_t inline_inputs = 8;
    nax::bindings b;
    if (inputs.size() <= inline_inputs) {
      alignas(binding_source) std::byte raw[inline_inputs * sizeof(binding_source)];
      auto* src = reinterpret_cast<binding_source*>(raw);
      for (std::size_t k = 0; k < inputs.size(); ++k)
        new (src + k) binding_source{p.input_names[k], p.values[k].shape, inputs[k].shape()};
      extract_bindings(std::span<const binding_source>(src, inputs.size()), b);
    } else {
      std::vector<binding_source> src;
      for (std::size_t k = 0; k < inputs.size(); ++k)
        src.push_back({p.input_names[k], p.values[k].shape, inputs[k].shape()});
      extract_bindings(src, b);
    }
    return lookup(b);
  }

  std::shared_ptr<runtime::specialization> lookup(const nax::bindings& b) const {
    state& st = *state_;
    binding_key key(b);
    {
      std::lock_guard lock(st.mutex);
      auto it = st.index.find(key);
      if (it != st.index.end()) {
        ++st.stats.hits;
        st.lru.splice(st.lru.begin(), st.lru, it->second);
        return it->second->second;
      }
    }
    // Built outside the lock: other bindings keep running meanwhile. Two threads missing the
    // same binding both build it; the first to insert wins.
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<runtime::specialization> s = runtime::specialize(st.program, b);
    const auto took = std::chrono::steady_clock::now() - start;
    std::lock_guard lock(st.mutex);
    ++st.stats.misses;
    auto it = st.index.find(key);
    if (it != st.index.end()) return it->second->second;
    ++st.stats.total;
    st.stats.last_specialization_time = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
    st.lru.emplace_front(key, s);
    st.index.emplace(std::move(key), st.lru.begin());
    while (st.lru.size() > st.options.max_specializations) {
      st.index.erase(st.lru.back().first);
      st.lru.pop_back();  // a run still holding it keeps it alive until it finishes
      ++st.stats.evictions;
    }
    return s;
  }

  void execute(const runtime::specialization& s, std::span<const dyn_tensor> inputs,
               std::span<dyn_tensor> outputs) const {
    const graph::program& p = state_->program;
    auto lease = s.pool->acquire();
    void** values = lease->values.data();
    for (std::size_t k = 0; k < inputs.size(); ++k) values[k] = const_cast<void*>(inputs[k].data());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const graph::program_value& v = p.values[p.outputs[k]];
      if (v.role == graph::value_role::output && v.index == k)
        values[p.outputs[k]] = outputs[k].data();
    }
    std::byte* arena = lease->memory.get();
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
