#include <nax/exec/cache_info.hpp>

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
