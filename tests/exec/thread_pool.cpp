#include <nax/exec/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "support/threads.hpp"

#if defined(__unix__)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace {

using nax::index_range;
using std::size_t;
using thread_id = std::thread::id;
using steady = std::chrono::steady_clock;

// Restores the thread count a test case found.
using keep_num_threads = nax_test::threads_guard;

// Holds every chunk of a region until all `n` have started, so that each runs on its own
// thread (the caller cannot take a lane back before its own chunk returns). Only for a free
// pool. Gives up after 10 s, so a bug fails the test instead of hanging it.
struct rendezvous {
  explicit rendezvous(size_t count) : n(count) {}
  bool arrive() {
    arrived.fetch_add(1);
    const auto deadline = steady::now() + std::chrono::seconds(10);
    while (arrived.load() < n) {
      if (steady::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  std::atomic<size_t> arrived{0};
  size_t n;
};

struct chunk_call {
  size_t lo, hi;
  thread_id thread;
};

bool by_lo(const chunk_call& a, const chunk_call& b) { return a.lo < b.lo; }

// Runs parallel_for and returns its chunks in order of `lo`. With `together`, every chunk waits
// for all the others to start.
std::vector<chunk_call> record_chunks(size_t begin, size_t end, size_t grain,
                                      bool together = false) {
  std::mutex m;
  std::vector<chunk_call> calls;
  const size_t k =
      nax::detail::chunk_count(end - begin, grain, static_cast<size_t>(nax::num_threads()));
  rendezvous all(k);
  nax::parallel_for(begin, end, grain, [&](size_t lo, size_t hi) {
    if (together) CHECK(all.arrive());
    std::lock_guard lock(m);
    calls.push_back({lo, hi, std::this_thread::get_id()});
  });
  std::sort(calls.begin(), calls.end(), by_lo);
  return calls;
}

// The serial reference for parallel_reduce: the same chunks, combined in the same order.
float serial_sum_by_chunks(const std::vector<float>& x, size_t grain, size_t threads) {
  const size_t chunks = nax::detail::chunk_count(x.size(), grain, threads);
  float acc = 0.0f;
  for (size_t c = 0; c < chunks; ++c) {
    const index_range r = nax::split_range(0, x.size(), c, chunks);
    float p = 0.0f;
    for (size_t i = r.begin; i < r.end; ++i) p += x[i];
    acc += p;
  }
  return acc;
}

float parallel_sum(const std::vector<float>& x, size_t grain) {
  return nax::parallel_reduce(
      size_t{0}, x.size(), grain, 0.0f,
      [&](size_t lo, size_t hi) {
        float p = 0.0f;
        for (size_t i = lo; i < hi; ++i) p += x[i];
        return p;
      },
      [](float a, float b) { return a + b; });
}

std::vector<float> harmonic(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 1.0f / static_cast<float>(i + 1);
  return x;
}

}  // namespace

TEST_CASE("split_range cuts a range into contiguous, balanced, ordered parts") {
  CHECK(nax::split_range(0, 10, 0, 3) == index_range{0, 4});
  CHECK(nax::split_range(0, 10, 1, 3) == index_range{4, 7});
  CHECK(nax::split_range(0, 10, 2, 3) == index_range{7, 10});
  CHECK(nax::split_range(5, 5, 0, 1) == index_range{5, 5});
  for (size_t n = 0; n <= 40; ++n) {
    for (size_t parts = 1; parts <= 9; ++parts) {
      size_t next = 100;
      for (size_t p = 0; p < parts; ++p) {
        const index_range r = nax::split_range(100, 100 + n, p, parts);
        CHECK(r.begin == next);
        CHECK(r.size() == n / parts + (p < n % parts ? 1 : 0));
        next = r.end;
      }
      CHECK(next == 100 + n);
    }
  }
  // No overflow at the top of size_t.
  constexpr size_t top = std::numeric_limits<size_t>::max();
  size_t next = 0;
  for (size_t p = 0; p < 7; ++p) {
    const index_range r = nax::split_range(0, top, p, 7);
    CHECK(r.begin == next);
    CHECK(r.end > r.begin);
    next = r.end;
  }
  CHECK(next == top);
  CHECK(nax::split_range(top - 10, top, 3, 4) == index_range{top - 2, top});
}

TEST_CASE("chunk_count: at most the thread count, each chunk at least the grain") {
  using nax::detail::chunk_count;
  CHECK(chunk_count(0, 1, 4) == 1);
  CHECK(chunk_count(5, 10, 4) == 1);
  CHECK(chunk_count(19, 10, 4) == 1);
  CHECK(chunk_count(20, 10, 4) == 2);
  CHECK(chunk_count(1000, 10, 4) == 4);
  CHECK(chunk_count(1000, 0, 4) == 4);  // a grain of 0 counts as 1
  CHECK(chunk_count(7, 1, 8) == 7);
  CHECK(chunk_count(1000, 1, 1) == 1);
}

TEST_CASE("parallel_for visits every index once, in the documented contiguous chunks") {
  keep_num_threads keep;
  const thread_id caller = std::this_thread::get_id();
  for (int threads : {1, 2, 3, 4, 7}) {
    nax::set_num_threads(threads);
    for (size_t begin : {size_t{0}, size_t{5}}) {
      for (size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 100, 1000, 1001}) {
        for (size_t grain : {0, 1, 2, 3, 7, 64, 100, 5000}) {
          CAPTURE(threads);
          CAPTURE(begin);
          CAPTURE(n);
          CAPTURE(grain);
          std::vector<std::atomic<int>> visits(n);
          std::mutex m;
          std::vector<chunk_call> calls;
          nax::parallel_for(begin, begin + n, grain, [&](size_t lo, size_t hi) {
            for (size_t i = lo; i < hi; ++i) visits[i - begin].fetch_add(1);
            std::lock_guard lock(m);
            calls.push_back({lo, hi, std::this_thread::get_id()});
          });
          CHECK(std::all_of(visits.begin(), visits.end(), [](auto& v) { return v.load() == 1; }));
          if (n == 0) {
            CHECK(calls.empty());
            continue;
          }
          std::sort(calls.begin(), calls.end(), by_lo);
          const size_t k = nax::detail::chunk_count(n, grain, static_cast<size_t>(threads));
          REQUIRE(calls.size() == k);
          std::map<thread_id, int> chunks_of;
          for (size_t c = 0; c < k; ++c) {
            CHECK(calls[c].lo == nax::split_range(begin, begin + n, c, k).begin);
            CHECK(calls[c].hi == nax::split_range(begin, begin + n, c, k).end);
            if (k > 1) CHECK(calls[c].hi - calls[c].lo >= std::max<size_t>(grain, 1));
            ++chunks_of[calls[c].thread];
          }
          CHECK(calls.front().thread == caller);  // chunk 0 on the calling thread
          // Chunk c on worker c, or taken back by the caller: no worker runs two chunks.
          for (const auto& [thread, count] : chunks_of) {
            if (thread != caller) CHECK(count == 1);
          }
        }
      }
    }
  }
}

TEST_CASE("parallel_for: chunk c runs on worker c, the same persistent thread every time") {
  keep_num_threads keep;
  nax::set_num_threads(4);
  const std::vector<chunk_call> first = record_chunks(0, 4000, 1, true);
  REQUIRE(first.size() == 4);
  CHECK(first[0].thread == std::this_thread::get_id());
  CHECK(std::set<thread_id>{first[0].thread, first[1].thread, first[2].thread, first[3].thread}
            .size() == 4);
  CHECK(nax::detail::global_pool().num_workers() == 3);
  for (int round = 0; round < 20; ++round) {
    const std::vector<chunk_call> again = record_chunks(0, 4000, 1, true);
    REQUIRE(again.size() == 4);
    for (size_t c = 0; c < 4; ++c) CHECK(again[c].thread == first[c].thread);
  }
}

TEST_CASE("parallel_for: a lane whose worker is late is run by the caller") {
  keep_num_threads keep;
  nax::set_num_threads(2);
  auto& pool = nax::detail::global_pool();
  (void)record_chunks(0, 2, 1);
  const auto before = pool.lanes_taken_back();
  // The worker is asleep; the caller's chunk takes no time: waiting for the worker to wake up
  // would cost more than running its chunk.
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::vector<chunk_call> calls = record_chunks(0, 2, 1);
    REQUIRE(calls.size() == 2);
  }
  CHECK(pool.lanes_taken_back() > before);
}

TEST_CASE("parallel_for: an empty or reversed range calls nothing") {
  int calls = 0;
  nax::parallel_for(5, 5, 1, [&](size_t, size_t) { ++calls; });
  nax::parallel_for(9, 3, 1, [&](size_t, size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("a range below two grains runs inline on the caller, without the pool") {
  keep_num_threads keep;
  nax::set_num_threads(4);
  auto& pool = nax::detail::global_pool();
  const auto dispatched = pool.regions_dispatched();
  const auto inlined = pool.regions_inlined();
  for (size_t n : {1, 10, 99, 199}) {
    const std::vector<chunk_call> calls = record_chunks(1, 1 + n, 100);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].lo == 1);
    CHECK(calls[0].hi == 1 + n);
    CHECK(calls[0].thread == std::this_thread::get_id());
  }
  CHECK(pool.regions_dispatched() == dispatched);
  CHECK(pool.regions_inlined() == inlined);
  // One thread: never the pool.
  nax::set_num_threads(1);
  CHECK(record_chunks(0, 100000, 1).size() == 1);
  CHECK(pool.regions_dispatched() == dispatched);
}

TEST_CASE("set_num_threads and num_threads") {
  keep_num_threads keep;
  CHECK(nax::num_threads() >= 1);
  nax::set_num_threads(3);
  CHECK(nax::num_threads() == 3);
  CHECK_THROWS_WITH_AS(nax::set_num_threads(0),
                       "nax::set_num_threads: the thread count must be at least 1, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nax::set_num_threads(-2),
                       "nax::set_num_threads: the thread count must be at least 1, got -2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nax::set_num_threads(nax::max_num_threads + 1),
                       "nax::set_num_threads: 1025 threads requested, at most 1024 are supported",
                       std::invalid_argument);
  CHECK(nax::num_threads() == 3);  // unchanged by the errors
  nax::set_num_threads(1);
  CHECK(nax::num_threads() == 1);
}

TEST_CASE("parse_num_threads: what NAX_NUM_THREADS may hold") {
  using nax::detail::parse_num_threads;
  CHECK(parse_num_threads("1") == 1);
  CHECK(parse_num_threads("4") == 4);
  CHECK(parse_num_threads("007") == 7);
  CHECK(parse_num_threads(" 8\n") == 8);
  CHECK(parse_num_threads("1024") == 1024);
  for (const char* bad : {"", "   ", "0", "-1", "+2", "-0", "4,2", "2x", "x2", "2 3", "1.5", "abc",
                          "1025", "99999999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_num_threads(bad).has_value());
  }
  CHECK_FALSE(parse_num_threads(nullptr).has_value());
}

#if defined(__unix__)
TEST_CASE("default_num_threads: NAX_NUM_THREADS, else the hardware's count") {
  const char* old = std::getenv("NAX_NUM_THREADS");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  const int hw = static_cast<int>(
      std::clamp(std::thread::hardware_concurrency(), 1u, unsigned{nax::max_num_threads}));
  ::setenv("NAX_NUM_THREADS", "3", 1);
  CHECK(nax::detail::default_num_threads() == 3);
  ::setenv("NAX_NUM_THREADS", "three", 1);  // invalid: ignored
  CHECK(nax::detail::default_num_threads() == hw);
  ::setenv("NAX_NUM_THREADS", "0", 1);
  CHECK(nax::detail::default_num_threads() == hw);
  ::unsetenv("NAX_NUM_THREADS");
  CHECK(nax::detail::default_num_threads() == hw);
  if (saved) ::setenv("NAX_NUM_THREADS", saved->c_str(), 1);
}
#endif

TEST_CASE("parallel_for_each_thread gives every thread its index") {
  keep_num_threads keep;
  for (int threads : {1, 2, 3}) {
    nax::set_num_threads(threads);
    CAPTURE(threads);
    for (bool together : {false, true}) {
      std::mutex m;
      std::vector<std::pair<size_t, thread_id>> seen;
      rendezvous all(static_cast<size_t>(threads));
      nax::parallel_for_each_thread([&](size_t t, size_t count) {
        CHECK(count == static_cast<size_t>(threads));
        if (together) CHECK(all.arrive());
        std::lock_guard lock(m);
        seen.emplace_back(t, std::this_thread::get_id());
      });
      std::sort(seen.begin(), seen.end());
      REQUIRE(seen.size() == static_cast<size_t>(threads));
      std::set<thread_id> distinct;
      for (size_t t = 0; t < seen.size(); ++t) {
        CHECK(seen[t].first == t);
        distinct.insert(seen[t].second);
      }
      CHECK(seen[0].second == std::this_thread::get_id());
      if (together) CHECK(distinct.size() == seen.size());
    }
  }
}

TEST_CASE("parallel_reduce is reproducible and matches the serial chunked sum") {
  keep_num_threads keep;
  const std::vector<float> x = harmonic(100000);
  for (int threads : {1, 2, 3, 4}) {
    nax::set_num_threads(threads);
    CAPTURE(threads);
    for (size_t grain : {1, 1000, 60000, 200000}) {
      CAPTURE(grain);
      const float expected = serial_sum_by_chunks(x, grain, static_cast<size_t>(threads));
      for (int run = 0; run < 5; ++run) CHECK(parallel_sum(x, grain) == expected);
    }
  }
  // Nested (so inline, on one thread): the same chunks, the same bits.
  nax::set_num_threads(3);
  const float top = parallel_sum(x, 1);
  std::vector<float> nested(3);
  nax::parallel_for_each_thread([&](size_t t, size_t) { nested[t] = parallel_sum(x, 1); });
  for (float v : nested) CHECK(v == top);
  // An empty range gives the identity; T needs no default constructor.
  struct total {
    explicit total(long v) : value(v) {}
    long value;
  };
  auto add = [](total a, total b) { return total(a.value + b.value); };
  auto count = [](size_t lo, size_t hi) { return total(static_cast<long>(hi - lo)); };
  CHECK(nax::parallel_reduce(size_t{3}, size_t{3}, 1, total(-1), count, add).value == -1);
  CHECK(nax::parallel_reduce(size_t{0}, size_t{1000}, 1, total(5), count, add).value == 1005);
}

TEST_CASE("nested parallel loops run inline on the thread that calls them") {
  keep_num_threads keep;
  nax::set_num_threads(2);
  auto& pool = nax::detail::global_pool();
  const auto inlined = pool.regions_inlined();
  std::mutex m;
  std::vector<chunk_call> inner;
  std::atomic<int> innermost{0};
  rendezvous both(2);
  nax::parallel_for(0, 2, 1, [&](size_t lo, size_t) {
    CHECK(both.arrive());
    const thread_id outer = std::this_thread::get_id();
    nax::parallel_for(lo * 100, lo * 100 + 100, 1, [&](size_t a, size_t b) {
      CHECK(std::this_thread::get_id() == outer);
      nax::parallel_for(0, 10, 1, [&](size_t x, size_t y) {  // a third level
        CHECK(std::this_thread::get_id() == outer);
        innermost.fetch_add(static_cast<int>(y - x));
      });
      std::lock_guard lock(m);
      inner.push_back({a, b, outer});
    });
  });
  CHECK(innermost.load() == 4 * 10);
  std::sort(inner.begin(), inner.end(), by_lo);
  REQUIRE(inner.size() == 4);
  // The same chunks as a top-level call would make.
  CHECK(inner[0].lo == 0);
  CHECK(inner[0].hi == 50);
  CHECK(inner[1].lo == 50);
  CHECK(inner[2].lo == 100);
  CHECK(inner[3].hi == 200);
  CHECK(inner[0].thread == std::this_thread::get_id());
  CHECK(inner[2].thread != inner[0].thread);
  CHECK(pool.regions_inlined() == inlined + 2 + 4);
}

TEST_CASE("exceptions reach the caller after every chunk has finished") {
  keep_num_threads keep;
  nax::set_num_threads(2);
  auto& pool = nax::detail::global_pool();

  // From a worker's chunk.
  CHECK_THROWS_WITH_AS(nax::parallel_for(0, 2, 1,
                                         [](size_t lo, size_t) {
                                           if (lo == 1) throw std::runtime_error("chunk 1");
                                         }),
                       "chunk 1", std::runtime_error);

  // From the caller's chunk: the other chunk still runs to its end.
  std::atomic<bool> other_done{false};
  CHECK_THROWS_WITH_AS(
      nax::parallel_for(0, 2, 1,
                        [&](size_t lo, size_t) {
                          if (lo == 0) throw std::logic_error("chunk 0");
                          std::this_thread::sleep_for(std::chrono::milliseconds(20));
                          other_done = true;
                        }),
      "chunk 0", std::logic_error);
  CHECK(other_done.load());

  // From every chunk: one of them, the first.
  try {
    nax::parallel_for(
        0, 2, 1, [](size_t lo, size_t) { throw std::runtime_error(lo == 0 ? "first" : "second"); });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK((std::string(e.what()) == "first" || std::string(e.what()) == "second"));
  }

  // Any type, from parallel_for_each_thread and parallel_reduce; inline ranges too.
  CHECK_THROWS_AS(nax::parallel_for_each_thread([](size_t t, size_t) {
                    if (t == 1) throw 42;
                  }),
                  int);
  CHECK_THROWS_AS((void)nax::parallel_reduce(
                      size_t{0}, size_t{10}, 1, 0,
                      [](size_t lo, size_t) -> int {
                        if (lo > 0) throw std::out_of_range("reduce");
                        return 1;
                      },
                      [](int a, int b) { return a + b; }),
                  std::out_of_range);
  CHECK_THROWS_AS(nax::parallel_for(0, 5, 10, [](size_t, size_t) { throw 7; }), int);

  // Inline (nested): every chunk still runs, and the first (in chunk order) is rethrown.
  std::atomic<int> ran{0};
  nax::parallel_for(0, 2, 1, [&](size_t lo, size_t) {
    if (lo != 1) return;
    CHECK_THROWS_WITH_AS(nax::parallel_for(0, 4, 1,
                                           [&](size_t a, size_t) {
                                             ran.fetch_add(1);
                                             throw std::runtime_error(std::to_string(a));
                                           }),
                         "0", std::runtime_error);
  });
  CHECK(ran.load() == 2);

  // Through a nested region.
  CHECK_THROWS_WITH_AS(nax::parallel_for(0, 2, 1,
                                         [](size_t lo, size_t) {
                                           nax::parallel_for(0, 4, 1, [&](size_t a, size_t) {
                                             if (lo == 1 && a == 2) {
                                               throw std::runtime_error("nested");
                                             }
                                           });
                                         }),
                       "nested", std::runtime_error);

  // The pool is still usable and still parallel.
  const auto dispatched = pool.regions_dispatched();
  const std::vector<chunk_call> calls = record_chunks(0, 100, 1, true);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].thread != calls[1].thread);
  CHECK(pool.regions_dispatched() == dispatched + 1);
}

TEST_CASE("four user threads calling parallel loops at once") {
  keep_num_threads keep;
  nax::set_num_threads(2);
  auto& pool = nax::detail::global_pool();
  const auto before = pool.regions_dispatched() + pool.regions_inlined();
  const auto inlined_before = pool.regions_inlined();
  const std::vector<float> x = harmonic(5000);
  const float expected = serial_sum_by_chunks(x, 100, 2);
  constexpr int rounds = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 4; ++u) {
    users.emplace_back([&, u] {
      for (int i = 0; i < rounds; ++i) {
        const size_t n = 500 + static_cast<size_t>((u * 7 + i) % 13);
        std::vector<std::atomic<int>> visits(n);
        nax::parallel_for(0, n, 1, [&](size_t lo, size_t hi) {
          for (size_t j = lo; j < hi; ++j) visits[j].fetch_add(1);
        });
        for (auto& v : visits) {
          if (v.load() != 1) failures.fetch_add(1);
        }
        if (parallel_sum(x, 100) != expected) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : users) t.join();
  CHECK(failures.load() == 0);
  // Every call either had the pool or ran inline.
  CHECK(pool.regions_dispatched() + pool.regions_inlined() == before + 4 * rounds * 2);
  MESSAGE("4 user threads, 2 pool threads: " << 4 * rounds * 2 << " regions, "
                                             << pool.regions_inlined() - inlined_before
                                             << " of them inline");
}

TEST_CASE("set_num_threads while other threads run regions, and from inside one") {
  keep_num_threads keep;
  nax::set_num_threads(2);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 2; ++u) {
    users.emplace_back([&] {
      while (!stop.load()) {
        std::vector<std::atomic<int>> visits(300);
        nax::parallel_for(0, 300, 1, [&](size_t lo, size_t hi) {
          for (size_t j = lo; j < hi; ++j) visits[j].fetch_add(1);
        });
        for (auto& v : visits) {
          if (v.load() != 1) failures.fetch_add(1);
        }
      }
    });
  }
  for (int i = 0; i < 50; ++i) nax::set_num_threads(1 + i % 4);
  stop = true;
  for (auto& t : users) t.join();
  CHECK(failures.load() == 0);

  // From inside a region: takes effect for the next one.
  nax::set_num_threads(2);
  nax::parallel_for(0, 2, 1, [](size_t lo, size_t) {
    if (lo == 1) nax::set_num_threads(3);
  });
  CHECK(nax::num_threads() == 3);
  CHECK(record_chunks(0, 300, 1).size() == 3);
  CHECK(nax::detail::global_pool().num_workers() == 2);
}

TEST_CASE("resizing between regions") {
  keep_num_threads keep;
  for (int threads : {1, 2, 4, 3, 1, 2, 5}) {
    nax::set_num_threads(threads);
    CAPTURE(threads);
    std::mutex m;
    std::set<thread_id> distinct;
    rendezvous all(static_cast<size_t>(threads));
    nax::parallel_for_each_thread([&](size_t, size_t) {
      CHECK(all.arrive());
      std::lock_guard lock(m);
      distinct.insert(std::this_thread::get_id());
    });
    CHECK(distinct.size() == static_cast<size_t>(threads));
    CHECK(nax::detail::global_pool().num_workers() == static_cast<size_t>(threads - 1));
  }
}

TEST_CASE("ten thousand tiny regions in a row") {
  keep_num_threads keep;
  std::atomic<size_t> total{0};
  auto tiny = [&](size_t lo, size_t hi) { total.fetch_add(hi - lo, std::memory_order_relaxed); };
  nax::set_num_threads(2);
  for (int i = 0; i < 10000; ++i) nax::parallel_for(0, 2, 1, tiny);
  CHECK(total.load() == 20000);
  // Workers that take part in every region.
  std::atomic<size_t> started{0};
  auto together = [&](size_t lo, size_t hi) {
    const size_t mine = started.fetch_add(1) / 2;
    while (started.load() < 2 * (mine + 1)) std::this_thread::yield();
    total.fetch_add(hi - lo, std::memory_order_relaxed);
  };
  for (int i = 0; i < 200; ++i) nax::parallel_for(0, 2, 1, together);
  CHECK(total.load() == 20400);
  nax::set_num_threads(4);  // more threads than this machine may have cores
  for (int i = 0; i < 2000; ++i) nax::parallel_for(0, 4, 1, tiny);
  CHECK(total.load() == 28400);
  // With the workers asleep before each region: the wake-up path.
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    nax::parallel_for(0, 4, 1, tiny);
  }
  CHECK(total.load() == 28480);
}

#if defined(__linux__)
TEST_CASE("an idle pool burns no CPU") {
  keep_num_threads keep;
  nax::set_num_threads(4);
  (void)record_chunks(0, 4, 1, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin
  auto cpu_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  const double cpu0 = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double cpu = cpu_seconds() - cpu0;
  MESSAGE("CPU time of the process during 200 ms idle with 3 workers: " << cpu * 1e3 << " ms");
  CHECK(cpu < 0.05);  // one spinning worker alone would use 200 ms
}
#endif

#if defined(__unix__)
TEST_CASE("after fork(), the child runs parallel loops inline and exits without waiting") {
  keep_num_threads keep;
  nax::set_num_threads(3);
  (void)record_chunks(0, 3, 1, true);  // the parent has workers
  REQUIRE(nax::detail::global_pool().num_workers() == 2);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // No doctest here: the child reports through its exit status.
    std::vector<std::atomic<int>> visits(1000);
    std::atomic<bool> ok{true};
    const thread_id me = std::this_thread::get_id();
    const auto inlined = nax::detail::global_pool().regions_inlined();
    nax::parallel_for(0, 1000, 1, [&](size_t lo, size_t hi) {
      if (std::this_thread::get_id() != me) ok = false;
      for (size_t i = lo; i < hi; ++i) visits[i].fetch_add(1);
    });
    for (auto& v : visits) {
      if (v.load() != 1) ok = false;
    }
    if (nax::detail::global_pool().regions_inlined() != inlined + 1) ok = false;
    nax::set_num_threads(2);  // must not try to join the parent's workers
    {
      // What exit() runs for the pool: must not wait for the parent's workers. (Not exit()
      // itself: the sanitizers' exit-time work in a forked child is slow and noisy.)
      nax::detail::global_pool_shutdown at_exit{&nax::detail::global_pool()};
    }
    ::_exit(ok ? 0 : 3);
  }
  int status = 0;
  const auto deadline = steady::now() + std::chrono::seconds(20);
  pid_t done = 0;
  while ((done = ::waitpid(child, &status, WNOHANG)) == 0 && steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  CHECK(done == child);  // else the child hung
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif

TEST_CASE("a pool of its own: lazy start, shutdown, destruction") {
  nax::detail::thread_pool pool;
  pool.resize(3);  // not started: nothing to do yet
  CHECK(pool.num_workers() == 0);
  std::atomic<int> ran{0};
  auto body = [&](size_t) { ran.fetch_add(1); };
  pool.run(3, 3, body);
  CHECK(ran.load() == 3);
  CHECK(pool.num_workers() == 2);
  pool.resize(2);  // idle: now
  CHECK(pool.num_workers() == 1);
  std::mutex m;
  std::vector<size_t> chunks;
  auto record = [&](size_t c) {
    std::lock_guard lock(m);
    chunks.push_back(c);
  };
  pool.run(2, 5, record);  // more chunks than threads: each lane takes several
  std::sort(chunks.begin(), chunks.end());
  CHECK(chunks == std::vector<size_t>{0, 1, 2, 3, 4});
  pool.shutdown();
  CHECK(pool.num_workers() == 0);
  const thread_id caller = std::this_thread::get_id();
  auto on_caller = [&](size_t) { CHECK(std::this_thread::get_id() == caller); };
  pool.run(2, 4, on_caller);  // after shutdown: inline
  CHECK(pool.regions_inlined() == 1);

  nax::detail::thread_pool other;
  other.run(4, 4, body);
  CHECK(ran.load() == 7);
}  // `other` joins its workers here

TEST_CASE("dispatch overhead (printed, not checked)") {
  keep_num_threads keep;
  // The median time of a region, in microseconds: with empty chunks (what tiny work costs; the
  // caller may take the worker's lane back), and with chunks that wait for each other (a full
  // fork and join in which every thread takes part). `idle`: the workers are asleep first.
  auto median_us = [](int regions, bool all_threads, bool idle) {
    std::atomic<size_t> started{0};
    const auto threads = static_cast<size_t>(nax::num_threads());
    auto body = [&](size_t, size_t) {
      if (!all_threads) return;
      const size_t mine = started.fetch_add(1) / threads;
      for (int spin = 0; started.load() < threads * (mine + 1); ++spin) {
        if (spin < 10000) {
          nax::detail::cpu_relax();
        } else {
          std::this_thread::yield();  // a worker preempted by another process
        }
      }
    };
    std::vector<double> t;
    const auto give_up = steady::now() + std::chrono::milliseconds(200);  // a loaded machine
    for (int i = 0; i < regions && steady::now() < give_up; ++i) {
      if (idle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const auto start = steady::now();
      nax::parallel_for(0, threads, 1, body);
      t.push_back(std::chrono::duration<double, std::micro>(steady::now() - start).count());
    }
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    return t[t.size() / 2];
  };
  nax::set_num_threads(1);
  const double one = median_us(10000, false, false);
  nax::set_num_threads(2);
  median_us(500, true, false);  // warm up
  const double empty_hot = median_us(5000, false, false);
  const double all_hot = median_us(5000, true, false);
  const double empty_idle = median_us(20, false, true);
  const double all_idle = median_us(20, true, true);
  MESSAGE("median parallel_for region: 1 thread "
          << one * 1e3 << " ns (timer included); "
          << "2 threads back to back " << empty_hot << " us (empty chunks), " << all_hot
          << " us (both threads); 2 threads after 1 ms idle " << empty_idle << " us, " << all_idle
          << " us");
}
