#pragma once
// The thread pool's size, put back when a test that changes it ends (however it ends), so that
// the next test case of the same program starts with the size it expects.

#include <nax/exec/thread_pool.hpp>

namespace nax_test {

struct threads_guard {
  int saved = nax::num_threads();
  threads_guard() = default;
  /// n threads until the guard ends.
  explicit threads_guard(int n) { nax::set_num_threads(n); }
  threads_guard(const threads_guard&) = delete;
  threads_guard& operator=(const threads_guard&) = delete;
  ~threads_guard() { nax::set_num_threads(saved); }
};

}  // namespace nax_test
