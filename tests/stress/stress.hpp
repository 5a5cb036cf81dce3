#pragma once
// What the stress tests share: how long to run (NAX_STRESS_SECONDS), and the process's resident
// size (/proc/self/statm), read to check that long runs do not grow memory.

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "support/sanitizers.hpp"

// Under AddressSanitizer freed memory waits in a quarantine (256 MiB by default) before it is
// reused, and ThreadSanitizer's shadow and history memory grow with the memory a program touches:
// there the resident size of a program that frees what it allocates grows anyway, and says
// nothing about leaks. (A program that allocates nothing still must not grow.)

namespace stress {

/// Whether the resident size of a program that allocates and frees tells a leak (see above).
inline constexpr bool resident_size_tells_leaks = !nax_test::under_asan && !nax_test::under_tsan;

/// Seconds a stress test runs: NAX_STRESS_SECONDS if set (a positive decimal number, e.g. `600`
/// or `0.5`), else `fallback` (a few seconds, so that every CI configuration stays fast).
inline double seconds(double fallback) {
  const char* text = std::getenv("NAX_STRESS_SECONDS");
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end != '\0' || !(s > 0) || s > 1e7)
    throw std::invalid_argument(std::string("NAX_STRESS_SECONDS must be a positive number of "
                                            "seconds, got '") +
                                text + "'");
  return s;
}

/// The process's resident set in bytes (Linux: /proc/self/statm, its second field in pages).
inline std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) throw std::runtime_error("/proc/self/statm cannot be read");
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace stress
