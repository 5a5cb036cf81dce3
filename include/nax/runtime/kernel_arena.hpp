#pragma once
// Where a specialization's step kernels live: in a few shared slabs instead of one heap object
// each. A step class derives from arena_allocated as well as from kernels::step_kernel; while a
// kernel_arena_scope is open on the thread (runtime::specialize opens one), `new` of such a class
// takes its room from the scope's current slab, and elsewhere from the heap. The kernels stay
// owned one by one (std::unique_ptr<kernels::step_kernel>, whose delete finds the class's
// operator delete): a slab counts the objects in it and is freed with the last, on whichever
// thread. So a specialization of n steps makes a handful of allocations for its kernels, not n.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::runtime {

namespace detail {

struct kernel_slab {
  // bias while a scope allocates from it, minus the objects freed; the scope, letting go, takes
  // away bias minus the objects it made: zero when the last object is gone.
  static constexpr std::size_t bias = std::size_t{1} << 48;
  std::atomic<std::size_t> live{bias};
  std::size_t made = 0;
  std::size_t used = 0;
  std::size_t capacity = 0;

  std::byte* bytes() noexcept { return reinterpret_cast<std::byte*>(this + 1); }
  static constexpr std::size_t header = 64;  // sizeof(kernel_slab), rounded up to a cache line
};
static_assert(sizeof(kernel_slab) <= kernel_slab::header);

// Before each object: its slab (null for one from the heap), and for one from the heap the
// alignment it was allocated with.
struct kernel_object_header {
  std::size_t alignment;
  kernel_slab* slab;
};

inline void free_slab(kernel_slab* s) noexcept {
  s->~kernel_slab();
  ::operator delete (static_cast<void*>(s), std::align_val_t{64});
}

inline void retire_slab(kernel_slab* s) noexcept {
  const std::size_t drop = kernel_slab::bias - s->made;
  if (s->live.fetch_sub(drop, std::memory_order_acq_rel) == drop) free_slab(s);
}

struct kernel_arena_state {
  kernel_slab* slab = nullptr;
  std::size_t next_capacity = 0;
};

inline thread_local kernel_arena_state* current_kernel_arena = nullptr;

inline void* allocate_kernel(std::size_t n, std::size_t alignment) {
  alignment = std::max<std::size_t>(alignment, alignof(kernel_object_header));
  const std::size_t room = n + alignment + sizeof(kernel_object_header);
  kernel_arena_state* a = current_kernel_arena;
  if (a == nullptr) {
    const std::size_t lead = (sizeof(kernel_object_header) + alignment - 1) / alignment * alignment;
    auto* raw = static_cast<std::byte*>(::operator new (lead + n, std::align_val_t{alignment}));
    std::byte* p = raw + lead;
    *reinterpret_cast<kernel_object_header*>(p - sizeof(kernel_object_header)) = {alignment,
                                                                                  nullptr};
    return p;
  }
  kernel_slab* s = a->slab;
  auto place = [&](kernel_slab* slab) -> std::byte* {
    const auto base = reinterpret_cast<std::uintptr_t>(slab->bytes());
    const std::uintptr_t at =
        (base + slab->used + sizeof(kernel_object_header) + alignment - 1) / alignment * alignment;
    if (at + n > base + slab->capacity) return nullptr;
    slab->used = at + n - base;
    return reinterpret_cast<std::byte*>(at);
  };
  std::byte* p = s ? place(s) : nullptr;
  if (p == nullptr) {
    const std::size_t capacity = std::max(a->next_capacity, room);
    a->next_capacity = std::min<std::size_t>(a->next_capacity * 2, std::size_t{1} << 20);
    void* raw = ::operator new (kernel_slab::header + capacity, std::align_val_t{64});
    auto* fresh = new (raw) kernel_slab;
    fresh->capacity = capacity;
    if (s) retire_slab(s);
    a->slab = s = fresh;
    p = place(s);
  }
  ++s->made;
  *reinterpret_cast<kernel_object_header*>(p - sizeof(kernel_object_header)) = {alignment, s};
  return p;
}

inline void free_kernel(void* p) noexcept {
  if (p == nullptr) return;
  auto* q = static_cast<std::byte*>(p);
  const kernel_object_header h =
      *reinterpret_cast<const kernel_object_header*>(q - sizeof(kernel_object_header));
  if (h.slab == nullptr) {
    const std::size_t lead =
        (sizeof(kernel_object_header) + h.alignment - 1) / h.alignment * h.alignment;
    ::operator delete (static_cast<void*>(q - lead), std::align_val_t{h.alignment});
    return;
  }
  if (h.slab->live.fetch_sub(1, std::memory_order_acq_rel) == 1) free_slab(h.slab);
}

}  // namespace detail

/// While alive, objects of arena_allocated classes made on this thread share slabs, the first of
/// about `first_bytes` (then doubling, up to 1 MiB). Scopes nest (the inner one is used).
class kernel_arena_scope {
 public:
  explicit kernel_arena_scope(std::size_t first_bytes) : outer_(detail::current_kernel_arena) {
    state_.next_capacity = std::clamp<std::size_t>(first_bytes, 4096, std::size_t{1} << 20);
    detail::current_kernel_arena = &state_;
  }
  kernel_arena_scope(const kernel_arena_scope&) = delete;
  kernel_arena_scope& operator=(const kernel_arena_scope&) = delete;
  ~kernel_arena_scope() {
    detail::current_kernel_arena = outer_;
    if (state_.slab) detail::retire_slab(state_.slab);
  }

 private:
  detail::kernel_arena_state state_;
  detail::kernel_arena_state* outer_;
};

/// A base of step classes: their objects come from the thread's kernel_arena_scope if one is open.
struct arena_allocated {
  static void* operator new(std::size_t n) {
    return detail::allocate_kernel(n, __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  }
  static void* operator new(std::size_t n, std::align_val_t a) {
    return detail::allocate_kernel(n, static_cast<std::size_t>(a));
  }
  static void operator delete(void* p) noexcept { detail::free_kernel(p); }
  static void operator delete(void* p, std::align_val_t) noexcept { detail::free_kernel(p); }
};

/// A plan shared by the steps of one specialization that run one op over the same shapes (a graph
/// repeating its layers would otherwise copy it for every step: an elementwise plan is a few
/// hundred bytes, a GEMM's with its operands' copy plans over a kilobyte), kept in the kernel
/// arena next to them and freed with the last. Its users are steps of one specialization, made by
/// the thread that specializes and destroyed with it by one thread: a plain count.
template <class Plan>
class shared_plan {
 public:
  explicit shared_plan(Plan plan) : held_(new holder(std::move(plan))) {}
  shared_plan(const shared_plan& other) noexcept : held_(other.held_) { ++held_->users; }
  shared_plan& operator=(const shared_plan&) = delete;
  ~shared_plan() {
    if (--held_->users == 0) delete held_;
  }
  const Plan& operator*() const noexcept { return held_->plan; }
  const Plan* operator->() const noexcept { return &held_->plan; }

 private:
  struct holder final : arena_allocated {
    explicit holder(Plan p) : plan(std::move(p)) {}
    Plan plan;
    std::size_t users = 1;
  };
  holder* held_;
};

}  // namespace nax::runtime
