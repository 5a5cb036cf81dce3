#pragma once
// Memory aligned for SIMD and cache lines (64 bytes), allocated in one place: owned buffers of
// tensors, dyn_tensors and arenas, and the per-thread scratch buffers that kernels grow and keep.

#include <cstddef>
#include <memory>
#include <new>

namespace nax::core_detail {

/// The alignment of every buffer nax allocates: a cache line, and the widest SIMD vector.
inline constexpr std::size_t buffer_alignment = 64;

struct aligned_free {
  void operator()(void* p) const noexcept {
    ::operator delete(p, std::align_val_t{buffer_alignment});
  }
};

template <class T = std::byte>
using aligned_ptr = std::unique_ptr<T, aligned_free>;

/// Uninitialized room for n elements of T, 64-byte aligned; null for n == 0.
template <class T>
aligned_ptr<T> allocate_aligned(std::size_t n) {
  if (n == 0) return nullptr;
  return aligned_ptr<T>(
      static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{buffer_alignment})));
}

/// The calling thread's scratch buffer of at least `bytes` (64-byte aligned, uninitialized),
/// one per Tag, grown when asked for more and kept for the thread's later calls.
template <class Tag>
std::byte* thread_scratch(std::size_t bytes) {
  thread_local aligned_ptr<std::byte> buffer;
  thread_local std::size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset();  // (the old buffer first: no moment with both)
    buffer = allocate_aligned<std::byte>(bytes);
    capacity = bytes;
  }
  return buffer.get();
}

}  // namespace nax::core_detail
