// nax::runtime::arena_pool: an arena is never lent to two holders at once, arenas are reused
// (beyond the lock-free slots too), and each is laid out once.
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
  arena_pool pool(256, 3, [&](arena& a) {
    ++layouts;
    a.values[2] = a.memory.get();
  });
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
