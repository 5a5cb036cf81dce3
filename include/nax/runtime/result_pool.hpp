#pragma once
// The buffers of the results that executable::run(inputs) returns, per executable: a released
// result's buffer (the last dyn_tensor sharing it gone) is handed to a later run's result of the
// same byte size instead of mapping and faulting in a new one. The buffers are not cleared: every
// step writes the whole of its result (the arena's intermediates are not cleared between runs
// either, nor are the caller's tensors of run(inputs, outputs)), so no old byte shows through.
//
// Bound: the pool keeps track of at most max_buffers buffers, of at most max_bytes bytes together
// (those its results still hold included); a buffer that would break either is not tracked and
// freed as usual when released, after the pool has dropped released buffers, least recently
// handed out first, to make room. So an idle executable holds at most max_bytes of results'
// buffers. Thread-safe. The pool holds its buffers by shared_ptr and each result shares one, so
// results outlive the pool (and the executable) safely; a buffer is free again when the pool's is
// the only reference left.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::runtime {

class result_pool {
 public:
  static constexpr std::size_t max_buffers = 8;
  static constexpr std::size_t max_bytes = std::size_t{256} << 20;

  /// A buffer of `bytes` (> 0), 64-byte aligned, uninitialized or holding an old result's bytes.
  /// A reused one costs no allocation.
  std::shared_ptr<std::byte> get(std::size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      for (slot& s : slots_)
        if (s.buffer && s.bytes == bytes && s.buffer.use_count() == 1) {
          // Only the pool holds it, and only the pool hands it out (under this lock): the last
          // result to release it did so with a release decrement; this fence orders its writes
          // and reads of the buffer before ours.
          std::atomic_thread_fence(std::memory_order_acquire);
          s.used = ++clock_;
          return std::shared_ptr<std::byte>(s.buffer, s.buffer->get());
        }
    }
    auto fresh = std::make_shared<nax::detail::aligned_ptr<std::byte>>(
        nax::detail::allocate_aligned<std::byte>(bytes));
    std::shared_ptr<std::byte> out(fresh, fresh->get());
    std::lock_guard lock(mutex_);
    if (bytes > max_bytes) return out;
    // Room: drop released buffers, least recently handed out first, until this one fits.
    for (;;) {
      slot* empty = nullptr;
      for (slot& s : slots_)
        if (!s.buffer) empty = &s;
      if (empty && held_ + bytes <= max_bytes) {
        empty->buffer = std::move(fresh);
        empty->bytes = bytes;
        empty->used = ++clock_;
        held_ += bytes;
        return out;
      }
      slot* oldest = nullptr;
      for (slot& s : slots_)
        if (s.buffer && s.buffer.use_count() == 1 && (!oldest || s.used < oldest->used))
          oldest = &s;
      if (!oldest) return out;  // every tracked buffer is a live result's: this one is not kept
      held_ -= oldest->bytes;
      oldest->buffer.reset();
    }
  }

  /// Buffers tracked now (released or not), and their bytes (for tests).
  std::size_t buffers() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const slot& s : slots_) n += s.buffer != nullptr;
    return n;
  }
  std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return held_;
  }

 private:
  struct slot {
    std::shared_ptr<nax::detail::aligned_ptr<std::byte>> buffer;
    std::size_t bytes = 0;
    std::uint64_t used = 0;  // clock_ when last handed out
  };
  mutable std::mutex mutex_;
  std::array<slot, max_buffers> slots_;
  std::size_t held_ = 0;  // bytes of the tracked buffers
  std::uint64_t clock_ = 0;
};

}  // namespace nax::runtime
