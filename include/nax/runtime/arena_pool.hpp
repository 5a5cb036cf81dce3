#pragma once
// The run-time memory of one specialization: arenas of the planned size, each with the table of
// value addresses its intermediates and constants resolve to. A run leases one; concurrent runs
// lease different ones; a finished run returns its arena for the next, so a run on a warm
// specialization allocates nothing. The pool keeps at most `max_kept` arenas alive between runs
// (graph::compile_options::max_kept_arenas): runs beyond it still get one (never wait or fail),
// but an arena returned while more than `max_kept` are alive is freed, so a burst of concurrent
// runs does not leave its peak of arenas behind.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::runtime {

struct arena {
  nax::detail::aligned_ptr<std::byte> memory;
  std::vector<void*> values;  // inputs and outputs are filled per run, the rest once...
  /// ... for this layout (a specialization's id, never reused: an address could be, by a
  /// specialization made after this one is freed); a run with another, sharing the arena (the
  /// extents of one bucket, runtime/specialization_cache.hpp), sets the rest again.
  std::uint64_t layout = 0;
};

/// The arenas a pool keeps alive between runs when not told (max_kept 0): max(4, 2 x the
/// hardware threads). Every thread that runs an executable keeps one arena of it in its run slot
/// (runtime/run_slot.hpp), so the cap must cover the threads that run it at once for their warm
/// runs to allocate nothing: 4 covers one or two client threads with a nested run each, even on
/// a small machine, and 2 x the hardware threads covers as many client threads as can make
/// progress at once, with room for as many again time-sliced (threads beyond that wait for a core
/// anyway, and an allocation is small beside a run's wait). Beyond it, memory stays bounded:
/// a pool keeps at most this many arenas of its specialization's size, however many threads come.
inline std::size_t default_max_kept_arenas() noexcept {
  static const std::size_t n =
      std::max<std::size_t>(4, 2 * static_cast<std::size_t>(std::thread::hardware_concurrency()));
  return n;
}

class arena_pool {
 public:
  /// `layout(a)` sets up a new arena's fixed addresses (called once per arena, under no lock).
  /// `max_kept`: the most arenas alive once runs finish (0: default_max_kept_arenas()).
  template <class Layout>
  arena_pool(std::size_t bytes, std::size_t num_values, Layout layout, std::size_t max_kept = 0)
      : bytes_(bytes),
        num_values_(num_values),
        max_kept_(max_kept ? max_kept : default_max_kept_arenas()),
        layout_(std::move(layout)) {}
  arena_pool(const arena_pool&) = delete;
  arena_pool& operator=(const arena_pool&) = delete;

  class lease {
   public:
    lease(arena_pool& pool, arena* a) noexcept : pool_(&pool), arena_(a) {}
    lease(lease&& other) noexcept : pool_(other.pool_), arena_(other.arena_) {
      other.arena_ = nullptr;
    }
    lease& operator=(lease&&) = delete;
    ~lease() {
      if (arena_) pool_->give_back(arena_);
    }
    arena& operator*() const noexcept { return *arena_; }
    arena* operator->() const noexcept { return arena_; }

   private:
    arena_pool* pool_;
    arena* arena_;
  };

  lease acquire() { return lease(*this, take()); }

  /// An arena for the caller alone until it gives it back (acquire() without the lease).
  arena* take() {
    // A few free arenas sit in atomic slots: taking one is one exchange, no lock (the common
    // case, a run or two at a time). An exchange cannot hand one arena to two runs.
    for (std::atomic<arena*>& slot : fast_)
      if (slot.load(std::memory_order_relaxed))
        if (arena* a = slot.exchange(nullptr, std::memory_order_acquire)) return a;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        arena* a = free_.back();
        free_.pop_back();
        return a;
      }
    }
    auto a = std::make_unique<arena>();
    a->memory = nax::detail::allocate_aligned<std::byte>(bytes_);
    a->values.assign(num_values_, nullptr);
    layout_(*a);
    std::lock_guard lock(mutex_);
    all_.push_back(std::move(a));
    // Room for every arena in the free list, so giving one back never allocates.
    free_.reserve(all_.size());
    ++made_;
    // (under the lock: alive_ changes elsewhere only by release(), which holds it too)
    const std::size_t alive = alive_.load(std::memory_order_relaxed) + 1;
    alive_.store(alive, std::memory_order_relaxed);
    peak_ = std::max(peak_, alive);
    return all_.back().get();
  }

  /// Returns an arena from take() (of this pool) for other runs, or frees it if more than
  /// max_kept() arenas are alive.
  void give_back(arena* a) noexcept {
    // The count read by a read-modify-write, never a stale one (an arena is kept only if the
    // kept ones stay within the cap; not the hit path, which reads it with over_cap()).
    if (alive_.fetch_add(0, std::memory_order_relaxed) > max_kept_ && release(a)) return;
    for (std::atomic<arena*>& slot : fast_) {
      arena* empty = nullptr;
      if (!slot.load(std::memory_order_relaxed) &&
          slot.compare_exchange_strong(empty, a, std::memory_order_release,
                                       std::memory_order_relaxed))
        return;
    }
    std::lock_guard lock(mutex_);
    free_.push_back(a);  // reserved in take(): does not allocate
  }

  /// Whether more than max_kept() arenas are alive: a thread's run slot then gives its arena back
  /// (to be freed) instead of keeping it. One relaxed load, for the hit path.
  bool over_cap() const noexcept { return alive_.load(std::memory_order_relaxed) > max_kept_; }

  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t max_kept() const noexcept { return max_kept_; }
  /// Arenas alive now: in runs, kept in run slots and free in the pool.
  std::size_t arenas() const noexcept { return alive_.load(std::memory_order_relaxed); }
  /// Arenas made so far (freed ones included).
  std::size_t made() const {
    std::lock_guard lock(mutex_);
    return made_;
  }
  /// The most arenas alive at once so far: about the most runs this specialization has had at the
  /// same time.
  std::size_t peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }

 private:
  static constexpr std::size_t fast_slots = 4;

  // Frees `a` if more than max_kept_ arenas are still alive (rechecked under the lock, so that two
  // runs returning at once never free below the cap); false: the caller keeps it.
  bool release(arena* a) noexcept {
    std::unique_ptr<arena> freed;
    {
      std::lock_guard lock(mutex_);
      const std::size_t alive = alive_.load(std::memory_order_relaxed);
      if (alive <= max_kept_) return false;
      for (std::unique_ptr<arena>& owned : all_)
        if (owned.get() == a) {
          freed = std::move(owned);
          owned = std::move(all_.back());
          all_.pop_back();
          break;
        }
      alive_.store(alive - 1, std::memory_order_relaxed);
    }
    return true;  // (freed here, outside the lock)
  }

  std::size_t bytes_, num_values_, max_kept_;
  std::function<void(arena&)> layout_;
  std::atomic<arena*> fast_[fast_slots] = {};
  mutable std::mutex mutex_;
  std::vector<arena*> free_;                 // the free arenas not in fast_
  std::vector<std::unique_ptr<arena>> all_;  // owns every arena alive
  std::atomic<std::size_t> alive_{0};        // all_.size(), changed under mutex_, read without
  std::size_t made_ = 0, peak_ = 0;          // under mutex_
};

}  // namespace nax::runtime
