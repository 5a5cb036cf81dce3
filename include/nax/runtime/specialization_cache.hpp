#pragma once
// The specializations of one executable, in a bounded cache keyed by the complete binding
// (runtime/binding_key.hpp) and evicted least recently used. A miss specializes outside the
// lock, so other bindings keep running; two threads missing one binding both build it and the
// first to insert wins. Uses are counted by one atomic clock tick, so that hits served without
// the lock (a thread repeating its last binding, runtime/run_slot.hpp) keep the LRU order exact.
// Under the size policies buckets and bound (runtime/size_buckets.hpp) an entry is a bucket's:
// its specialization, made at the bucket's extents, holds the memory plan and the arenas, and
// the extents it serves each get their steps, made for their real shapes on their first run (the
// entry's extents, bounded and evicted least recently used as well).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <nax/core/bindings.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/binding_key.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/specialization_stats.hpp>

namespace nax::NAX_ISA::runtime {

/// Under buckets or bound: the steps of one run's real extents inside a bucket's specialization.
struct extent_entry {
  extents_key key;                       // the real extents, then the thread count
  std::shared_ptr<specialization> spec;  // made for the real extents
  /// Its memory plan is larger than the bucket's (a choice made for the real extents, such as
  /// not pipelining, can need more than the bucket's): it runs in arenas of its own pool.
  bool own_arena = false;
  std::atomic<std::uint64_t> last_use{0};  // a tick of its bucket's extents_clock
};

/// A cached specialization and its place in the LRU order.
struct cache_entry {
  extents_key key;
  std::shared_ptr<specialization> spec;
  std::atomic<std::uint64_t> last_use{0};  // a tick of the cache's clock
  std::atomic<bool> evicted{false};        // no longer served; alive while someone holds it
  // Under buckets or bound: the extents served so far.
  std::mutex extents_mutex;
  std::unordered_map<extents_key, std::shared_ptr<extent_entry>, extents_key_hash,
                     extents_key_equal>
      extents;
  std::atomic<std::uint64_t> extents_clock{0};
};

class specialization_cache {
 public:
  /// A cache of at most `capacity` (>= 1) specializations of p (which must outlive it), made
  /// with `options` (and the thread count of each key).
  NAX_RUNTIME_INLINE specialization_cache(const graph::program& p, std::size_t capacity,
                                          specialize_options options = {},
                                          std::size_t extents_capacity = 64);

  /// The entry for `key` (b: the same as bindings, if the caller has them), specialized on a
  /// miss (then the least recently used entries beyond the capacity are evicted).
  /// `created`, if given, is set when this call specialized and inserted the entry.
  NAX_RUNTIME_INLINE std::shared_ptr<cache_entry> lookup(const extents_key& key,
                                                         const nax::bindings* b,
                                                         bool* created = nullptr);

  /// Removes entry e if the cache still holds it (a run failed on the entry it had just made):
  /// the cache is left as it was before. Runs holding e finish with it; none is served it again.
  NAX_RUNTIME_INLINE void drop(const std::shared_ptr<cache_entry>& e);

  /// The entry for `key` if it is cached, else null (counts nothing).
  NAX_RUNTIME_INLINE std::shared_ptr<cache_entry> find(const extents_key& key) const;

  /// The steps of the real extents `key` in bucket entry e, made on the first use (then the
  /// least recently used extents of e beyond the capacity are dropped).
  /// `created`, if given, is set when this call made the steps.
  NAX_RUNTIME_INLINE std::shared_ptr<extent_entry> extent(cache_entry& e, const extents_key& key,
                                                          bool* created = nullptr);

  /// Removes extents x from bucket entry e if e still holds them (see drop).
  NAX_RUNTIME_INLINE void drop_extent(cache_entry& e, const std::shared_ptr<extent_entry>& x);

  /// The same if e has them, else null (counts nothing).
  NAX_RUNTIME_INLINE std::shared_ptr<extent_entry> find_extent(cache_entry& e,
                                                               const extents_key& key) const;

  /// A use of extents x of entry e served without e's lock (a thread repeating its last
  /// extents): counted, and x becomes e's most recently used.
  void touch_extent(cache_entry& e, extent_entry& x) noexcept {
    extent_hits_.fetch_add(1, std::memory_order_relaxed);
    x.last_use.store(e.extents_clock.fetch_add(1, std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
  }

  /// A use of entry e served without the lock: it becomes the most recently used.
  void touch(cache_entry& e) noexcept {
    e.last_use.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  NAX_RUNTIME_INLINE specialization_stats stats() const;

 private:
  std::uint64_t tick() noexcept {  // with mutex_ held
    ++locked_ticks_;
    return clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  const graph::program& program_;
  std::size_t capacity_, extents_capacity_;
  specialize_options options_;
  std::atomic<std::size_t> extent_hits_{0}, extent_misses_{0};
  mutable std::mutex mutex_;
  std::unordered_map<extents_key, std::shared_ptr<cache_entry>, extents_key_hash, extents_key_equal>
      index_;
  // One tick per use of a cached specialization: hits served without the lock count only here;
  // those under the mutex count in stats_ as well, and in locked_ticks_.
  std::atomic<std::uint64_t> clock_{0};
  std::uint64_t locked_ticks_ = 0;
  specialization_stats stats_;
};

}  // namespace nax::NAX_ISA::runtime

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE specialization_cache::specialization_cache(const graph::program& p,
                                                              std::size_t capacity,
                                                              specialize_options options,
                                                              std::size_t extents_capacity)
    : program_(p), capacity_(capacity), extents_capacity_(extents_capacity), options_(options) {}

NAX_RUNTIME_INLINE std::shared_ptr<cache_entry> specialization_cache::lookup(const extents_key& key,
                                                                             const nax::bindings* b,
                                                                             bool* created) {
  {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      ++stats_.hits;
      it->second->last_use.store(tick(), std::memory_order_relaxed);
      return it->second;
    }
  }
  nax::bindings made;
  if (!b) {
    made = bindings_of(program_.dynamic_axes, key);
    b = &made;
  }
  const auto start = std::chrono::steady_clock::now();
  auto e = std::make_shared<cache_entry>();
  e->key = key;
  specialize_options o = options_;
  o.threads = threads_of(key);
  e->spec = specialize(program_, *b, o);
  const auto took = std::chrono::steady_clock::now() - start;
  std::lock_guard lock(mutex_);
  ++stats_.misses;
  auto it = index_.find(key);
  if (it != index_.end()) {
    it->second->last_use.store(tick(), std::memory_order_relaxed);
    return it->second;
  }
  ++stats_.total;
  stats_.last_specialization_time = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
  e->last_use.store(tick(), std::memory_order_relaxed);
  index_.emplace(key, e);
  if (created) *created = true;
  while (index_.size() > capacity_) {
    // The least recently used: the oldest tick (a linear scan; this is a miss anyway).
    auto oldest = index_.begin();
    for (auto i = index_.begin(); i != index_.end(); ++i)
      if (i->second->last_use.load(std::memory_order_relaxed) <
          oldest->second->last_use.load(std::memory_order_relaxed))
        oldest = i;
    // A run still holding it keeps it alive until it finishes; no thread serves it again.
    oldest->second->evicted.store(true, std::memory_order_relaxed);
    index_.erase(oldest);
    ++stats_.evictions;
  }
  return e;
}

NAX_RUNTIME_INLINE void specialization_cache::drop(const std::shared_ptr<cache_entry>& e) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(e->key);
  if (it == index_.end() || it->second != e) return;
  e->evicted.store(true, std::memory_order_relaxed);
  index_.erase(it);
}

NAX_RUNTIME_INLINE void specialization_cache::drop_extent(cache_entry& e,
                                                          const std::shared_ptr<extent_entry>& x) {
  std::lock_guard lock(e.extents_mutex);
  auto it = e.extents.find(x->key);
  if (it != e.extents.end() && it->second == x) e.extents.erase(it);
}

NAX_RUNTIME_INLINE std::shared_ptr<extent_entry> specialization_cache::extent(
    cache_entry& e, const extents_key& key, bool* created) {
  {
    std::lock_guard lock(e.extents_mutex);
    auto it = e.extents.find(key);
    if (it != e.extents.end()) {
      touch_extent(e, *it->second);
      return it->second;
    }
  }
  auto x = std::make_shared<extent_entry>();
  x->key = key;
  if (extents_key_equal{}(key, e.key)) {  // the bucket's own extents: its specialization
    x->spec = e.spec;
  } else {
    specialize_options o = options_;
    o.threads = threads_of(key);
    x->spec = specialize(program_, bindings_of(program_.dynamic_axes, key), o);
    x->own_arena = x->spec->arena_bytes > e.spec->pool->bytes();
  }
  extent_misses_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(e.extents_mutex);
  auto [it, inserted] = e.extents.emplace(key, x);
  if (created) *created = inserted;
  it->second->last_use.store(e.extents_clock.fetch_add(1, std::memory_order_relaxed) + 1,
                             std::memory_order_relaxed);
  while (e.extents.size() > extents_capacity_) {
    auto oldest = e.extents.begin();
    for (auto i = e.extents.begin(); i != e.extents.end(); ++i)
      if (i->second->last_use.load(std::memory_order_relaxed) <
          oldest->second->last_use.load(std::memory_order_relaxed))
        oldest = i;
    e.extents.erase(oldest);  // a run or a run slot holding it keeps it alive
  }
  return it->second;
}

NAX_RUNTIME_INLINE std::shared_ptr<extent_entry> specialization_cache::find_extent(
    cache_entry& e, const extents_key& key) const {
  std::lock_guard lock(e.extents_mutex);
  auto it = e.extents.find(key);
  return it == e.extents.end() ? nullptr : it->second;
}

NAX_RUNTIME_INLINE std::shared_ptr<cache_entry> specialization_cache::find(
    const extents_key& key) const {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : it->second;
}

NAX_RUNTIME_INLINE specialization_stats specialization_cache::stats() const {
  std::lock_guard lock(mutex_);
  specialization_stats s = stats_;
  s.live = index_.size();
  s.hits += clock_.load(std::memory_order_relaxed) - locked_ticks_;
  s.extent_hits = extent_hits_.load(std::memory_order_relaxed);
  s.extent_misses = extent_misses_.load(std::memory_order_relaxed);
  for (const auto& [key, e] : index_) {
    s.arena_bytes += e->spec->pool->bytes() * e->spec->pool->arenas();
    std::lock_guard extents_lock(e->extents_mutex);
    for (const auto& [k, x] : e->extents) {
      s.live_extents += 1;
      if (x->own_arena) s.arena_bytes += x->spec->pool->bytes() * x->spec->pool->arenas();
    }
  }
  return s;
}

}  // namespace nax::NAX_ISA::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
