#pragma once
// The counters of an executable's specialization cache (nax::executable::stats()).

#include <chrono>
#include <cstddef>

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

}  // namespace nax
