#pragma once
// The data cache sizes of the machine, read once from Linux's sysfs (with defaults where it is
// not available), for the kernels that size their blocking or choose streaming stores by them.

#include <cstddef>
#include <string>
#include <string_view>

#include <nax/core/linkage.hpp>

namespace nax {

struct cache_sizes {
  std::size_t l1d = 32 * 1024;       // per core
  std::size_t l2 = 1024 * 1024;      // per core
  std::size_t l3 = 8 * 1024 * 1024;  // last level, shared by `l3_sharing` logical CPUs
  std::size_t l3_sharing = 1;
};

namespace detail {

/// "48K", "2048K", "105M", "1G" or a plain byte count; 0 if the text is not a size.
inline std::size_t parse_cache_size(std::string_view text) {
  std::size_t value = 0, digits = 0;
  for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits)
    value = value * 10 + static_cast<std::size_t>(text[digits] - '0');
  if (digits == 0) return 0;
  std::string_view unit = text.substr(digits);
  while (!unit.empty() && (unit.back() == '\n' || unit.back() == ' ')) unit.remove_suffix(1);
  if (unit.empty()) return value;
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return 0;
}

/// The number of CPUs in a sysfs CPU list such as "0-1" or "0,2,4-7".
inline std::size_t count_cpu_list(std::string_view list) {
  std::size_t count = 0;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    const std::size_t dash = item.find('-');
    auto number = [](std::string_view s) {
      std::size_t v = 0;
      for (char ch : s)
        if (ch >= '0' && ch <= '9') v = v * 10 + static_cast<std::size_t>(ch - '0');
      return v;
    };
    count += dash == std::string_view::npos
                 ? 1
                 : number(item.substr(dash + 1)) - number(item.substr(0, dash)) + 1;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return count;
}

/// The sizes sysfs reports for cpu0's caches (the defaults where it reports none).
NAX_RUNTIME_INLINE cache_sizes read_cache_sizes();

}  // namespace detail

/// The machine's cache sizes, read on first use.
NAX_RUNTIME_INLINE const cache_sizes& machine_caches();

}  // namespace nax

#if NAX_RUNTIME_DEFINITIONS
#include <fstream>

namespace nax {
namespace detail {

inline std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

NAX_RUNTIME_INLINE cache_sizes read_cache_sizes() {
  cache_sizes c;
  for (int index = 0; index < 8; ++index) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    if (level.empty()) break;
    if (type == "Instruction") continue;
    const std::size_t size = parse_cache_size(read_line(dir + "size"));
    if (size == 0) continue;
    if (level == "1") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") {
      c.l3 = size;
      const std::size_t sharing = count_cpu_list(read_line(dir + "shared_cpu_list"));
      c.l3_sharing = sharing > 0 ? sharing : 1;
    }
  }
  return c;
}

}  // namespace detail

NAX_RUNTIME_INLINE const cache_sizes& machine_caches() {
  static const cache_sizes sizes = detail::read_cache_sizes();
  return sizes;
}

}  // namespace nax
#endif  // NAX_RUNTIME_DEFINITIONS
