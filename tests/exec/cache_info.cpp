#include <nax/exec/cache_info.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <doctest/doctest.h>

TEST_CASE("cache sizes parse from sysfs's notation") {
  using nax::detail::parse_cache_size;
  CHECK(parse_cache_size("48K") == 48 * 1024);
  CHECK(parse_cache_size("2048K\n") == 2048 * 1024);
  CHECK(parse_cache_size("105M") == 105u << 20);
  CHECK(parse_cache_size("1G") == 1u << 30);
  CHECK(parse_cache_size("4096") == 4096);
  CHECK(parse_cache_size("") == 0);
  CHECK(parse_cache_size("K") == 0);
  CHECK(parse_cache_size("12X") == 0);
}

TEST_CASE("CPU lists count their CPUs") {
  using nax::detail::count_cpu_list;
  CHECK(count_cpu_list("0") == 1);
  CHECK(count_cpu_list("0-1") == 2);
  CHECK(count_cpu_list("0,2,4-7") == 6);
  CHECK(count_cpu_list("") == 0);
}

TEST_CASE("the machine's caches are plausible") {
  const nax::cache_sizes& c = nax::machine_caches();
  CHECK(c.l1d >= 4 * 1024);
  CHECK(c.l2 >= c.l1d);
  CHECK(c.l3 >= 1);
  CHECK(c.l3_sharing >= 1);
  CHECK(&nax::machine_caches() == &c);  // read once
}

namespace {

using nax::detail::cpuid_regs;

// A CPU answering CPUID from a table of (leaf, subleaf) -> registers; leaf 0 carries the vendor.
struct fake_cpu {
  struct entry {
    std::uint32_t leaf, sub;
    cpuid_regs regs;
  };
  std::vector<entry> table;

  fake_cpu(const char (&vendor)[13], std::uint32_t max_leaf, std::uint32_t max_ext) {
    cpuid_regs v{max_leaf, 0, 0, 0};
    std::memcpy(&v.ebx, vendor, 4);
    std::memcpy(&v.edx, vendor + 4, 4);
    std::memcpy(&v.ecx, vendor + 8, 4);
    table.push_back({0, 0, v});
    table.push_back({0x80000000u, 0, {max_ext, 0, 0, 0}});
  }
  void add(std::uint32_t leaf, std::uint32_t sub, cpuid_regs r) { table.push_back({leaf, sub, r}); }
  bool operator()(std::uint32_t leaf, std::uint32_t sub, cpuid_regs& out) const {
    for (const entry& e : table)
      if (e.leaf == leaf && e.sub == sub) {
        out = e.regs;
        return true;
      }
    out = {};  // a leaf within range that the table leaves out reads as zeros, as on hardware
    return leaf < 0x80000000u ? leaf <= table[0].regs.eax : leaf <= table[1].regs.eax;
  }
};

// Leaf 4 / 0x8000001D subleaves, written field by field from the documented layout.
constexpr std::uint32_t cache_eax(unsigned type, unsigned level, unsigned sharing) {
  return type | level << 5 | 1u << 8 /* self-initializing */ | (sharing - 1) << 14;
}
constexpr std::uint32_t cache_ebx(unsigned ways, unsigned partitions, unsigned line) {
  return (ways - 1) << 22 | (partitions - 1) << 12 | (line - 1);
}

}  // namespace

TEST_CASE("CPUID's deterministic cache parameters decode") {
  using nax::detail::decode_cache_leaf;
  // Intel leaf 4: a 48 KiB 12-way L1d with 64 sets of 64-byte lines, shared by 2 logical CPUs;
  // EAX[31:26] = 7 (8 cores per package) must not leak into the sharing count.
  const auto l1d = decode_cache_leaf({0x1C004121u, 0x02C0003Fu, 0x3Fu, 0});
  CHECK(l1d.type == 1);
  CHECK(l1d.level == 1);
  CHECK(l1d.size == 48 * 1024);
  CHECK(l1d.sharing == 2);
  // A 32 MiB 16-way L3 in 2 partitions of 16384 sets, shared by 16.
  const auto l3 = decode_cache_leaf({0x1C03C163u, 0x03C0103Fu, 0x3FFFu, 0});
  CHECK(l3.type == 3);
  CHECK(l3.level == 3);
  CHECK(l3.size == 32u << 20);
  CHECK(l3.sharing == 16);
  // The subleaf after the last cache: type 0.
  CHECK(decode_cache_leaf({0, 0, 0, 0}).type == 0);
  // The helpers the fake CPUs below use write the same registers.
  CHECK(cache_eax(1, 1, 2) == 0x00004121u);
  CHECK(cache_ebx(12, 1, 64) == 0x02C0003Fu);
}

TEST_CASE("AMD's legacy cache leaves decode") {
  // 0x80000005 ECX: a 48 KiB L1d ([31:24] = 0x30), 12-way, 1 line per tag, 64-byte lines.
  CHECK(nax::detail::decode_amd_l1d(0x300C0140u) == 48 * 1024);
  // 0x80000006 ECX: a 1 MiB L2 ([31:16] = 0x400), associativity code 6 (8-way), 64-byte lines.
  CHECK(nax::detail::decode_amd_l2(0x04006140u) == 1024 * 1024);
  // 0x80000006 EDX: a 32 MiB L3 ([31:18] = 64 units of 512 KiB), 64-byte lines; and what the
  // 2-CPU KVM guest on an EPYC these tests were written on reports, 1016 units: 508 MiB.
  CHECK(nax::detail::decode_amd_l3(0x01000140u) == 32u << 20);
  CHECK(nax::detail::decode_amd_l3(0x0FE09140u) == 508u << 20);
}

TEST_CASE("CPUID's caches by vendor: Intel leaf 4, AMD 0x8000001D or legacy leaves") {
  using nax::detail::read_cpuid_caches;
  // Intel: L1d 48 KiB, L1i 32 KiB (skipped), L2 2 MiB shared by 2, L3 32 MiB shared by 16.
  fake_cpu intel("GenuineIntel", 0x20, 0x80000008u);
  intel.add(4, 0, {cache_eax(1, 1, 2), cache_ebx(12, 1, 64), 63, 0});
  intel.add(4, 1, {cache_eax(2, 1, 2), cache_ebx(8, 1, 64), 63, 0});
  intel.add(4, 2, {cache_eax(3, 2, 2), cache_ebx(16, 1, 64), 2047, 0});
  intel.add(4, 3, {cache_eax(3, 3, 16), cache_ebx(16, 1, 64), 32767, 0});
  const auto i = read_cpuid_caches(intel);
  CHECK(i.l1d == 48 * 1024);
  CHECK(i.l2 == 2 * 1024 * 1024);
  CHECK(i.l3 == 32u << 20);
  CHECK(i.l3_sharing == 16);

  // AMD with TOPOEXT (0x80000001 ECX bit 22): L1d 32 KiB, L2 1 MiB, L3 32 MiB shared by 16;
  // the legacy leaves (here saying otherwise) are not asked.
  fake_cpu amd("AuthenticAMD", 0x10, 0x80000021u);
  amd.add(0x80000001u, 0, {0, 0, 1u << 22, 0});
  amd.add(0x8000001Du, 0, {cache_eax(1, 1, 2), cache_ebx(8, 1, 64), 63, 0});
  amd.add(0x8000001Du, 1, {cache_eax(2, 1, 2), cache_ebx(8, 1, 64), 63, 0});
  amd.add(0x8000001Du, 2, {cache_eax(3, 2, 2), cache_ebx(8, 1, 64), 2047, 0});
  amd.add(0x8000001Du, 3, {cache_eax(3, 3, 16), cache_ebx(16, 1, 64), 32767, 0});
  amd.add(0x80000005u, 0, {0, 0, 0x300C0140u, 0});
  amd.add(0x80000006u, 0, {0, 0, 0x02006140u, 0x0FE09140u});
  const auto a = read_cpuid_caches(amd);
  CHECK(a.l1d == 32 * 1024);
  CHECK(a.l2 == 1024 * 1024);
  CHECK(a.l3 == 32u << 20);
  CHECK(a.l3_sharing == 16);

  // The same CPU without TOPOEXT: legacy leaves, an L3 with no sharing count.
  amd.table[2].regs.ecx = 0;
  const auto legacy = read_cpuid_caches(amd);
  CHECK(legacy.l1d == 48 * 1024);
  CHECK(legacy.l2 == 512 * 1024);
  CHECK(legacy.l3 == 508u << 20);
  CHECK(legacy.l3_sharing == 0);

  // Intel without leaf 4, or another vendor: nothing.
  const auto old = read_cpuid_caches(fake_cpu("GenuineIntel", 2, 0x80000008u));
  CHECK(old.l1d == 0);
  CHECK(old.l3 == 0);
  fake_cpu other("SomeOtherCPU", 0x20, 0x80000008u);
  other.add(4, 0, {cache_eax(1, 1, 2), cache_ebx(12, 1, 64), 63, 0});
  CHECK(read_cpuid_caches(other).l1d == 0);
}

TEST_CASE("sizes come from sysfs, else CPUID, else the defaults; each says which") {
  using nax::cache_source;
  nax::cache_sizes sysfs;
  sysfs.l1d = sysfs.l2 = sysfs.l3 = 0;
  nax::detail::cpuid_cache_sizes cpuid;
  // Nothing known: the defaults.
  auto c = nax::detail::merge_cache_sizes(sysfs, cpuid);
  CHECK(c.l1d == nax::cache_sizes{}.l1d);
  CHECK(c.l3 == nax::cache_sizes{}.l3);
  CHECK(c.l1d_source == cache_source::fallback);
  CHECK(c.l3_source == cache_source::fallback);
  // CPUID for L1d and L2; its L3 without a sharing count stays the default.
  cpuid = {48 * 1024, 1024 * 1024, 508u << 20, 0};
  c = nax::detail::merge_cache_sizes(sysfs, cpuid);
  CHECK(c.l1d == 48 * 1024);
  CHECK(c.l1d_source == cache_source::cpuid);
  CHECK(c.l2 == 1024 * 1024);
  CHECK(c.l2_source == cache_source::cpuid);
  CHECK(c.l3 == nax::cache_sizes{}.l3);
  CHECK(c.l3_sharing == 1);
  CHECK(c.l3_source == cache_source::fallback);
  // With one, CPUID's L3 and its sharing count.
  cpuid.l3_sharing = 16;
  c = nax::detail::merge_cache_sizes(sysfs, cpuid);
  CHECK(c.l3 == 508u << 20);
  CHECK(c.l3_sharing == 16);
  CHECK(c.l3_source == cache_source::cpuid);
  // sysfs wins where it has a size.
  sysfs.l2 = 2 * 1024 * 1024;
  sysfs.l3 = 105u << 20;
  sysfs.l3_sharing = 2;
  c = nax::detail::merge_cache_sizes(sysfs, cpuid);
  CHECK(c.l1d_source == cache_source::cpuid);
  CHECK(c.l2 == 2 * 1024 * 1024);
  CHECK(c.l2_source == cache_source::sysfs);
  CHECK(c.l3 == 105u << 20);
  CHECK(c.l3_sharing == 2);
  CHECK(c.l3_source == cache_source::sysfs);
  CHECK(std::string(nax::to_string(cache_source::cpuid)) == "cpuid");
  CHECK(std::string(nax::to_string(cache_source::fallback)) == "default");
}

#if defined(__x86_64__) || defined(__i386__)
TEST_CASE("on x86, CPUID gives this machine plausible sizes") {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __get_cpuid(0, &eax, &ebx, &ecx, &edx);
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  const std::string v(vendor, 12);
  if (v != "GenuineIntel" && v != "AuthenticAMD") return;  // no decoder for others
  const auto c = nax::detail::read_machine_cpuid_caches();
  CHECK(c.l1d >= 8 * 1024);
  CHECK(c.l1d <= 1024 * 1024);
  CHECK(c.l2 >= c.l1d);
  CHECK(c.l2 <= 64u << 20);
  if (c.l3 != 0) {
    CHECK(c.l3 >= c.l2);
    CHECK(c.l3 <= std::size_t{4} << 30);
  }
  // machine_caches() takes them where sysfs has none.
  const nax::cache_sizes& m = nax::machine_caches();
  if (m.l1d_source == nax::cache_source::cpuid) CHECK(m.l1d == c.l1d);
  CHECK(m.l1d_source != nax::cache_source::fallback);
}
#endif
