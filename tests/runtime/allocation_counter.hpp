#pragma once
// An allocation counter for the tests that check what a run or a specialization allocates:
// `allocations` counts every call of every form of operator new (plain, array, nothrow,
// aligned), which this header replaces. Include it in one file of a test program only.
//
// ThreadSanitizer's runtime, which clang links statically, defines operator new itself, so the
// counter cannot replace it there: NAX_TEST_COUNT_ALLOCATIONS is then 0, and the tests that count
// skip themselves (`doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)`; other builds run them).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// (g++ sees the malloc behind a replaced operator new and warns about the matching free.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
#if defined(__SANITIZE_THREAD__)
#define NAX_TEST_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NAX_TEST_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef NAX_TEST_COUNT_ALLOCATIONS
#define NAX_TEST_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<long> allocations{0};
}

#if NAX_TEST_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t align) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (std::max<std::size_t>(n, 1) + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t align) { return operator new(n, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif
