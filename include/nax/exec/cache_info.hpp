#pragma once
// The data cache sizes of the machine, read once from Linux's sysfs, else from the CPUID
// instruction (x86), else defaults, for the kernels that size their blocking or choose
// streaming stores by them.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>

namespace nax::NAX_ISA {

/// Where a cache size came from.
enum class cache_source { fallback, sysfs, cpuid };

inline const char* to_string(cache_source s) {
  switch (s) {
    case cache_source::fallback: return "default";
    case cache_source::sysfs: return "sysfs";
    case cache_source::cpuid: return "cpuid";
  }
  return "?";
}

struct cache_sizes {
  std::size_t l1d = 32 * 1024;       // per core
  std::size_t l2 = 1024 * 1024;      // per core
  std::size_t l3 = 8 * 1024 * 1024;  // last level, shared by `l3_sharing` logical CPUs
  std::size_t l3_sharing = 1;
  // Benchmarks print these next to the machine (l3_source covers l3_sharing too).
  cache_source l1d_source = cache_source::fallback, l2_source = cache_source::fallback,
               l3_source = cache_source::fallback;
};

namespace detail {

/// The four registers one CPUID query returns.
struct cpuid_regs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

/// One cache as a subleaf of Intel's leaf 4 or AMD's 0x8000001D describes it (the same layout):
/// type EAX[4:0] (0: no more caches, 1 data, 2 instruction, 3 unified), level EAX[7:5], logical
/// CPUs sharing it EAX[25:14] + 1, and size = ways EBX[31:22] x partitions EBX[21:12] x line
/// size EBX[11:0] x sets ECX (each stored minus 1).
struct cpuid_cache {
  unsigned type = 0, level = 0;
  std::size_t size = 0, sharing = 0;
};

inline cpuid_cache decode_cache_leaf(const cpuid_regs& r) {
  cpuid_cache c;
  c.type = r.eax & 0x1f;
  c.level = (r.eax >> 5) & 0x7;
  c.sharing = ((r.eax >> 14) & 0xfff) + 1;
  c.size = std::size_t((r.ebx >> 22) + 1) * (((r.ebx >> 12) & 0x3ff) + 1) * ((r.ebx & 0xfff) + 1) *
           (std::size_t(r.ecx) + 1);
  return c;
}

/// AMD's legacy leaves: L1d from 0x80000005 ECX[31:24] in KiB, L2 from 0x80000006 ECX[31:16] in
/// KiB, L3 from 0x80000006 EDX[31:18] in units of 512 KiB.
inline std::size_t decode_amd_l1d(std::uint32_t ecx_80000005) {
  return std::size_t(ecx_80000005 >> 24) << 10;
}
inline std::size_t decode_amd_l2(std::uint32_t ecx_80000006) {
  return std::size_t(ecx_80000006 >> 16) << 10;
}
inline std::size_t decode_amd_l3(std::uint32_t edx_80000006) {
  return std::size_t(edx_80000006 >> 18) << 19;
}

/// What CPUID tells of the caches; 0 where it tells nothing.
struct cpuid_cache_sizes {
  std::size_t l1d = 0, l2 = 0, l3 = 0, l3_sharing = 0;
};

/// The caches by CPUID, through query(leaf, subleaf, regs) (false where the CPU has no such
/// leaf): Intel's leaf 4, AMD's 0x8000001D where CPUID 0x80000001 ECX bit 22 (TOPOEXT) says it
/// is there, AMD's legacy 0x80000005 and 0x80000006 for the levels still unknown (they give no
/// L3 sharing count: l3_sharing stays 0). Other vendors: nothing.
template <class Query>
cpuid_cache_sizes read_cpuid_caches(Query&& query) {
  cpuid_cache_sizes out;
  cpuid_regs r;
  if (!query(0u, 0u, r)) return out;
  const std::uint32_t max_leaf = r.eax;
  char vendor[12];
  std::memcpy(vendor, &r.ebx, 4);
  std::memcpy(vendor + 4, &r.edx, 4);
  std::memcpy(vendor + 8, &r.ecx, 4);
  const std::string_view v(vendor, 12);
  const bool intel = v == "GenuineIntel", amd = v == "AuthenticAMD";
  std::uint32_t leaf = 0;
  cpuid_regs ext;
  const std::uint32_t max_ext = query(0x80000000u, 0u, ext) ? ext.eax : 0;
  if (intel && max_leaf >= 4) leaf = 4;
  if (amd && max_ext >= 0x8000001Du && query(0x80000001u, 0u, r) && ((r.ecx >> 22) & 1))
    leaf = 0x8000001Du;
  if (leaf != 0)
    for (std::uint32_t sub = 0; sub < 16 && query(leaf, sub, r); ++sub) {
      const cpuid_cache c = decode_cache_leaf(r);
      if (c.type == 0) break;
      if (c.type == 2) continue;  // instructions
      if (c.level == 1) out.l1d = c.size;
      if (c.level == 2) out.l2 = c.size;
      if (c.level == 3) {
        out.l3 = c.size;
        out.l3_sharing = c.sharing;
      }
    }
  if (amd && out.l1d == 0 && max_ext >= 0x80000005u && query(0x80000005u, 0u, r))
    out.l1d = decode_amd_l1d(r.ecx);
  if (amd && (out.l2 == 0 || out.l3 == 0) && max_ext >= 0x80000006u && query(0x80000006u, 0u, r)) {
    if (out.l2 == 0) out.l2 = decode_amd_l2(r.ecx);
    if (out.l3 == 0) out.l3 = decode_amd_l3(r.edx);
  }
  return out;
}

/// The machine's answer: sysfs's sizes where it gives them (`sysfs`, with 0 for those it does
/// not), else CPUID's, else the defaults. An L3 without a sharing count (AMD's legacy leaf) is
/// not used: every user wants one core's share, and under a hypervisor that leaf reports the
/// host's whole L3 (508 MiB to the 2-CPU guest these benchmarks ran on), hundreds of MiB per
/// core if taken as unshared; the default (8 MiB) is nearer the truth.
inline cache_sizes merge_cache_sizes(const cache_sizes& sysfs, const cpuid_cache_sizes& cpuid) {
  cache_sizes c;
  const auto pick = [](std::size_t& size, cache_source& source, std::size_t from_sysfs,
                       std::size_t from_cpuid) {
    if (from_sysfs != 0) {
      size = from_sysfs;
      source = cache_source::sysfs;
    } else if (from_cpuid != 0) {
      size = from_cpuid;
      source = cache_source::cpuid;
    }
  };
  pick(c.l1d, c.l1d_source, sysfs.l1d, cpuid.l1d);
  pick(c.l2, c.l2_source, sysfs.l2, cpuid.l2);
  pick(c.l3, c.l3_source, sysfs.l3, cpuid.l3_sharing != 0 ? cpuid.l3 : 0);
  if (c.l3_source == cache_source::sysfs) c.l3_sharing = sysfs.l3_sharing;
  if (c.l3_source == cache_source::cpuid) c.l3_sharing = cpuid.l3_sharing;
  return c;
}

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

/// The sizes sysfs reports for cpu0's caches (0 where it reports none).
NAX_RUNTIME_INLINE cache_sizes read_sysfs_cache_sizes();

/// What CPUID tells of this CPU's caches (nothing off x86).
NAX_RUNTIME_INLINE cpuid_cache_sizes read_machine_cpuid_caches();

/// sysfs's sizes, else CPUID's, else the defaults.
NAX_RUNTIME_INLINE cache_sizes read_cache_sizes();

}  // namespace detail

/// The machine's cache sizes, read on first use.
NAX_RUNTIME_INLINE const cache_sizes& machine_caches();

}  // namespace nax

#if NAX_RUNTIME_DEFINITIONS
#include <fstream>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nax::NAX_ISA {
namespace detail {

inline std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

NAX_RUNTIME_INLINE cache_sizes read_sysfs_cache_sizes() {
  cache_sizes c;
  c.l1d = c.l2 = c.l3 = 0;
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

NAX_RUNTIME_INLINE cpuid_cache_sizes read_machine_cpuid_caches() {
#if defined(__x86_64__) || defined(__i386__)
  return read_cpuid_caches([](std::uint32_t leaf, std::uint32_t sub, cpuid_regs& r) {
    return __get_cpuid_count(leaf, sub, &r.eax, &r.ebx, &r.ecx, &r.edx) != 0;
  });
#else
  return {};
#endif
}

NAX_RUNTIME_INLINE cache_sizes read_cache_sizes() {
  return merge_cache_sizes(read_sysfs_cache_sizes(), read_machine_cpuid_caches());
}

}  // namespace detail

NAX_RUNTIME_INLINE const cache_sizes& machine_caches() {
  static const cache_sizes sizes = detail::read_cache_sizes();
  return sizes;
}

}  // namespace nax
#endif  // NAX_RUNTIME_DEFINITIONS
