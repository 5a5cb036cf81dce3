#pragma once
// The run-time memory of one specialization: arenas of the planned size, each with the table of
// value addresses its intermediates and constants resolve to. A run leases one; concurrent runs
// lease different ones; a finished run returns its arena for the next, so a run on a warm
// specialization allocates nothing.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
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

class arena_pool {
 public:
  /// `layout(a)` sets up a new arena's fixed addresses (called once per arena, under no lock).
  template <class Layout>
  arena_pool(std::size_t bytes, std::size_t num_values, Layout layout)
      : bytes_(bytes), num_values_(num_values), layout_(std::move(layout)) {}
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
    return all_.back().get();
  }

  /// Returns an arena from take() (of this pool) for other runs.
  void give_back(arena* a) noexcept {
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

  std::size_t bytes() const noexcept { return bytes_; }
  /// Arenas made so far: the most runs this specialization has had at the same time.
  std::size_t arenas() const {
    std::lock_guard lock(mutex_);
    return all_.size();
  }

 private:
  static constexpr std::size_t fast_slots = 4;

  std::size_t bytes_, num_values_;
  std::function<void(arena&)> layout_;
  std::atomic<arena*> fast_[fast_slots] = {};
  mutable std::mutex mutex_;
  std::vector<arena*> free_;                 // the free arenas not in fast_
  std::vector<std::unique_ptr<arena>> all_;  // owns every arena made
};

}  // namespace nax::runtime
