#pragma once
// The hit path's memory: each thread remembers, per executable (for a few executables, by id),
// the specialization of its last run and an arena of it. A run with the same extents reuses both
// with no hashing, lock or reference count. The slot holds the specialization strongly: an
// evicted one is never served from it, but stays alive until this thread's next run replaces it
// or the thread ends. A run that finds the slot busy (a run nested in a step of the same
// executable) leases an arena from the specialization's pool instead. A run that ends while
// the pool has more arenas alive than it keeps (arena_pool::max_kept) returns its arena to the
// pool, which frees it, rather than keeping it in the slot.

#include <cstdint>
#include <memory>

#include <nax/core/isa.hpp>
#include <nax/runtime/arena_pool.hpp>
#include <nax/runtime/specialization_cache.hpp>

namespace nax::NAX_ISA::runtime {

struct run_slot {
  std::uint64_t owner = 0;  // the executable's id
  std::shared_ptr<cache_entry> entry;
  std::shared_ptr<extent_entry> extent;  // under buckets or bound: entry's last extents
  runtime::arena* arena = nullptr;       // of entry's pool, kept out for this thread's runs
  bool busy = false;                     // a run is using it

  run_slot() = default;
  run_slot(const run_slot&) = delete;
  run_slot& operator=(const run_slot&) = delete;
  ~run_slot() { set(0, nullptr); }

  void set(std::uint64_t o, std::shared_ptr<cache_entry> e) noexcept {
    if (arena) entry->spec->pool->give_back(arena);
    arena = nullptr;
    owner = o;
    extent = nullptr;
    entry = std::move(e);
  }

  /// This thread's slot for the executable with id `owner` (shared by ids equal modulo 4).
  static run_slot& of(std::uint64_t owner) {
    thread_local run_slot slots[4];
    return slots[owner & 3];
  }
};

/// The arena of one run: its slot's (taken out of the slot for the run and put back after) or,
/// without a slot, one leased from the specialization's pool.
class run_arena {
 public:
  run_arena(run_slot* slot, arena_pool& pool) : slot_(slot), pool_(pool) {
    if (slot_) {
      slot_->busy = true;
      arena_ = slot_->arena ? slot_->arena : pool_.take();
      slot_->arena = nullptr;
    } else {
      arena_ = pool_.take();
    }
  }
  run_arena(const run_arena&) = delete;
  run_arena& operator=(const run_arena&) = delete;
  ~run_arena() {
    if (slot_) {
      // Kept for this thread's next run unless the pool has more arenas alive than it keeps
      // (more threads running at once than its cap): then returned, to be freed.
      if (pool_.over_cap())
        pool_.give_back(arena_);
      else
        slot_->arena = arena_;
      slot_->busy = false;
    } else {
      pool_.give_back(arena_);
    }
  }
  runtime::arena& operator*() const noexcept { return *arena_; }
  runtime::arena* operator->() const noexcept { return arena_; }

 private:
  run_slot* slot_;
  arena_pool& pool_;
  runtime::arena* arena_ = nullptr;
};

}  // namespace nax::runtime
