// nax::runtime::arena_pool: an arena is never lent to two holders at once, arenas are reused
// (beyond the lock-free slots too), each is laid out once, and at most max_kept stay alive once
// given back.
#include <nax/runtime/arena_pool.hpp>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

using nax::runtime::arena;
using nax::runtime::arena_pool;

TEST_CASE("arenas are reused, each laid out once") {
  int layouts = 0;
  arena_pool pool(
      256, 3,
      [&](arena& a) {
        ++layouts;
        a.values[2] = a.memory.get();
      },
      8);  // keeps all 7
  std::vector<arena*> held;
  for (int i = 0; i < 7; ++i) held.push_back(pool.take());  // more than the lock-free slots
  CHECK(std::set<arena*>(held.begin(), held.end()).size() == 7);
  for (arena* a : held) {
    CHECK(a->values.size() == 3);
    CHECK(a->values[2] == a->memory.get());
    pool.give_back(a);
  }
  std::set<arena*> again;
  for (int i = 0; i < 7; ++i) again.insert(pool.take());
  CHECK(again == std::set<arena*>(held.begin(), held.end()));
  CHECK(pool.arenas() == 7);
  CHECK(layouts == 7);
  for (arena* a : again) pool.give_back(a);
  {
    auto lease = pool.acquire();
    CHECK(again.count(&*lease) == 1);
  }
  CHECK(pool.arenas() == 7);
}

TEST_CASE("concurrent holders never share an arena") {
  arena_pool pool(64, 1, [](arena&) {});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        auto lease = pool.acquire();
        // Tag the arena, let others run, check the tag survived.
        std::memset(lease->memory.get(), t + 1, 64);
        std::this_thread::yield();
        for (int j = 0; j < 64; ++j)
          if (lease->memory.get()[j] != static_cast<std::byte>(t + 1)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(pool.arenas() <= 6);
}

TEST_CASE("a pool keeps at most max_kept arenas alive once they are given back") {
  int layouts = 0;
  arena_pool pool(
      64, 1, [&](arena&) { ++layouts; }, 3);
  CHECK(pool.max_kept() == 3);
  std::vector<arena*> held;
  for (int i = 0; i < 8; ++i) held.push_back(pool.take());  // beyond the cap: never refused
  CHECK(std::set<arena*>(held.begin(), held.end()).size() == 8);
  CHECK(pool.arenas() == 8);
  CHECK(pool.over_cap());
  for (arena* a : held) pool.give_back(a);  // the first 5 are freed, the last 3 kept
  CHECK(pool.arenas() == 3);
  CHECK(!pool.over_cap());
  CHECK(pool.made() == 8);
  CHECK(pool.peak() == 8);
  // The 3 kept are reused, 2 more made; given back, 3 stay again.
  std::set<arena*> again;
  for (int i = 0; i < 5; ++i) again.insert(pool.take());
  CHECK(again.size() == 5);
  CHECK(pool.arenas() == 5);
  CHECK(pool.made() == 10);
  CHECK(layouts == 10);
  for (arena* a : again) pool.give_back(a);
  CHECK(pool.arenas() == 3);
  CHECK(pool.peak() == 8);
  // Leases follow the same rule.
  {
    auto a = pool.acquire(), b = pool.acquire(), c = pool.acquire(), d = pool.acquire();
    CHECK(pool.arenas() == 4);
  }
  CHECK(pool.arenas() == 3);
  CHECK(pool.made() == 11);
}

TEST_CASE("a pool's default cap is at least 4") {
  arena_pool pool(64, 1, [](arena&) {});
  CHECK(pool.max_kept() == nax::runtime::default_max_kept_arenas());
  CHECK(pool.max_kept() >= 4);
  CHECK(pool.max_kept() >= 2 * std::thread::hardware_concurrency());
}

TEST_CASE("concurrent holders beyond the cap: never shared, at most the cap kept") {
  arena_pool pool(
      64, 1, [](arena&) {}, 2);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        arena* a = pool.take();
        std::memset(a->memory.get(), t + 1, 64);
        std::this_thread::yield();
        for (int j = 0; j < 64; ++j)
          if (a->memory.get()[j] != static_cast<std::byte>(t + 1)) ++failures;
        pool.give_back(a);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(pool.arenas() <= 2);
  CHECK(pool.peak() <= 6);
}
