#pragma once
// The counters of an executable's specialization cache (nax::executable::stats()).

#include <chrono>
#include <cstddef>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA {

/// The counters of an executable's specialization cache.
struct specialization_stats {
  // A graph without dynamic axes is specialized when compiled (total 1, misses 0): each of its
  // runs is a hit.
  std::size_t hits = 0;       // runs (and pre_specialize calls) that found their specialization
  std::size_t misses = 0;     // ... that had to specialize (under buckets: for a new bucket)
  std::size_t evictions = 0;  // specializations dropped as least recently used
  std::size_t live = 0;       // specializations held now
  std::size_t total = 0;      // specializations ever built
  std::chrono::nanoseconds last_specialization_time{0};
  // Under the size policies buckets and bound (graph::size_policy), where a specialization
  // serves a bucket of extents, each with its own steps:
  std::size_t extent_hits = 0;    // runs whose real extents had their steps
  std::size_t extent_misses = 0;  // ... that made them
  std::size_t live_extents = 0;   // extents whose steps are held now
  /// The bytes of the arenas the live specializations hold now (each run at a time needs one;
  /// once runs finish, at most graph::compile_options::max_kept_arenas per specialization).
  std::size_t arena_bytes = 0;
  // The native tier (graph::native_policy, docs/native.md): the native kernels this
  // executable's fused groups asked for, by state (two groups with one program share one).
  std::size_t native_ready = 0;    // running native
  std::size_t native_pending = 0;  // being compiled or loaded: the interpreter runs them
  std::size_t native_failed = 0;   // never native (no compiler, a failed compilation)
};

}  // namespace nax
