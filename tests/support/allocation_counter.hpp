#pragma once
// An allocation counter for the tests that check what a run or a specialization allocates:
// `nax_test::allocations` counts every call of every form of operator new (plain, array,
// nothrow, aligned). allocation_counter.cpp replaces them; the test programs that use the counter
// (runtime, stress) link it, so it counts for the whole program.
//
// ThreadSanitizer's runtime, which clang links statically, defines operator new itself, so the
// counter cannot replace it there: NAX_TEST_COUNT_ALLOCATIONS is then 0, and the tests that count
// skip themselves (`doctest::skip(!NAX_TEST_COUNT_ALLOCATIONS)`; other builds run them).

#include <atomic>

#include "support/sanitizers.hpp"

#define NAX_TEST_COUNT_ALLOCATIONS (!NAX_TEST_TSAN)

namespace nax_test {
/// Calls of operator new so far, on every thread (0 forever where NAX_TEST_COUNT_ALLOCATIONS is 0).
extern std::atomic<long> allocations;
}  // namespace nax_test
