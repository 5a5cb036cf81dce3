#pragma once
// Which sanitizer instruments this build, for the tests that must know: g++ defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang++ answers __has_feature.

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define NAX_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NAX_TEST_ASAN 1
#endif
#endif
#ifndef NAX_TEST_ASAN
#define NAX_TEST_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define NAX_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NAX_TEST_TSAN 1
#endif
#endif
#ifndef NAX_TEST_TSAN
#define NAX_TEST_TSAN 0
#endif

namespace nax_test {

inline constexpr bool under_asan = NAX_TEST_ASAN;
inline constexpr bool under_tsan = NAX_TEST_TSAN;

#if defined(__OPTIMIZE__)
inline constexpr bool optimized = true;
#else
inline constexpr bool optimized = false;
#endif

/// Whether the tests' sweeps are sampled here: under a sanitizer or without optimization, where
/// the same loops run 10 to 50 times slower. The sampled cases still reach every code path the
/// test is about; the optimized, uninstrumented builds (g++ and clang++ in scripts/test) check
/// the whole sweep.
inline constexpr bool sampled = under_asan || under_tsan || !optimized;

/// How many of a sweep's cases a test runs: `all`, or `some` where sweeps are sampled.
constexpr std::size_t sweep(std::size_t all, std::size_t some) { return sampled ? some : all; }

}  // namespace nax_test
