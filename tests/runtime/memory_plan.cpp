#include <nax/runtime/memory_plan.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

namespace {

using nax::buffer_request;
using nax::memory_plan;
using std::size_t;

constexpr size_t size_max = std::numeric_limits<size_t>::max();

size_t peak(const std::vector<buffer_request>& requests, size_t alignment = 64) {
  return nax::live_bytes_peak(requests, alignment);
}
size_t pool(const std::vector<buffer_request>& requests) { return nax::pow2_pool_bytes(requests); }

// Plans `requests`, checks the plan with the independent checker and returns it.
memory_plan checked_plan(const std::vector<buffer_request>& requests, size_t alignment = 64) {
  memory_plan plan = nax::plan_memory(requests, alignment);
  CHECK(plan.alignment == alignment);
  CHECK(nax::check_memory_plan(requests, plan) == "");
  return plan;
}

// Buffer i lives from step i to step i + 1: produced by one step, read by the next, like the
// intermediates of an MLP.
std::vector<buffer_request> chain(const std::vector<size_t>& bytes) {
  std::vector<buffer_request> requests;
  for (size_t i = 0; i < bytes.size(); ++i) requests.push_back({bytes[i], i, i + 1});
  return requests;
}

// A random request set: sizes from 0 to a few MB with repeats, as a graph's intermediates are.
// Sparse sets have mostly short lifetimes, some spanning most of the plan (inputs, residuals);
// crowded ones squeeze long lifetimes into a few steps, so that buffers meet hundreds of others,
// as a training graph's activations do.
std::vector<buffer_request> random_requests(std::mt19937& rng, size_t count, bool crowded = false) {
  const size_t steps = crowded ? std::uniform_int_distribution<size_t>(1, 60)(rng)
                               : std::uniform_int_distribution<size_t>(1, 2 * count)(rng);
  std::uniform_int_distribution<size_t> step(0, steps - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::vector<buffer_request> requests;
  for (size_t i = 0; i < count; ++i) {
    size_t bytes = 0;
    switch (kind(rng)) {
      case 0: bytes = 0; break;
      case 1:
      case 2: bytes = std::uniform_int_distribution<size_t>(1, 100)(rng); break;
      case 3: bytes = 4096; break;
      default: bytes = std::uniform_int_distribution<size_t>(1, 4u << 20)(rng); break;
    }
    const size_t first = step(rng);
    const size_t length = crowded || kind(rng) == 0
                              ? std::uniform_int_distribution<size_t>(0, steps)(rng)
                              : std::uniform_int_distribution<size_t>(0, 3)(rng);
    requests.push_back({bytes, first, first + length});
  }
  return requests;
}

bool meet(const buffer_request& a, const buffer_request& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The most bytes live at any step where some request starts, summed request by request.
size_t quadratic_peak(const std::vector<buffer_request>& requests, size_t alignment) {
  size_t peak = 0;
  for (const buffer_request& at : requests) {
    size_t live = 0;
    for (const buffer_request& r : requests) {
      if (r.first_step <= at.first_step && at.first_step <= r.last_step) {
        live += nax::detail::align_up(r.bytes, alignment);
      }
    }
    peak = std::max(peak, live);
  }
  return peak;
}

// Greedy by size as TFLite's planner does it: largest first (ties: earlier first_step, lower
// index), each at the lowest offset clear of every placed request it meets, found by sorting
// them all. Returns offsets by request; the arena is their highest end.
std::vector<size_t> quadratic_greedy_by_size(const std::vector<buffer_request>& requests,
                                             size_t alignment) {
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto size_of = [&](size_t i) { return nax::detail::align_up(requests[i].bytes, alignment); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (size_of(a) != size_of(b)) return size_of(a) > size_of(b);
    if (requests[a].first_step != requests[b].first_step) {
      return requests[a].first_step < requests[b].first_step;
    }
    return a < b;
  });
  std::vector<size_t> offsets(requests.size(), 0);
  std::vector<size_t> placed;
  for (const size_t r : order) {
    if (size_of(r) == 0) continue;
    std::vector<std::pair<size_t, size_t>> met;
    for (const size_t p : placed) {
      if (meet(requests[p], requests[r])) met.emplace_back(offsets[p], offsets[p] + size_of(p));
    }
    std::sort(met.begin(), met.end());
    size_t offset = 0;
    for (const auto& [begin, end] : met) {
      if (begin >= offset + size_of(r)) break;
      offset = std::max(offset, end);
    }
    offsets[r] = offset;
    placed.push_back(r);
  }
  return offsets;
}

// A placement holds offsets by position in the step order; a plan holds them by request.
memory_plan as_plan(const nax::detail::step_order& order, const nax::detail::placement& placed,
                    size_t alignment) {
  memory_plan plan{std::vector<size_t>(order.request.size()), placed.arena, alignment};
  for (size_t p = 0; p < order.request.size(); ++p) {
    plan.offsets[order.request[p]] = placed.offsets[p];
  }
  return plan;
}

}  // namespace

TEST_CASE("buffers whose lifetimes do not meet share offset 0") {
  const std::vector<buffer_request> requests = {{100, 0, 1}, {200, 2, 3}, {50, 4, 4}, {64, 5, 9}};
  const memory_plan plan = checked_plan(requests);
  CHECK(plan.offsets == std::vector<size_t>{0, 0, 0, 0});
  CHECK(plan.arena_bytes == 256);  // the largest, 200, rounded up to 64
}

TEST_CASE("buffers whose lifetimes meet, even at one step, get disjoint bytes") {
  SUBCASE("nested") {
    const std::vector<buffer_request> requests = {{100, 0, 5}, {100, 2, 3}};
    const memory_plan plan = checked_plan(requests);
    CHECK(plan.arena_bytes == 256);
    CHECK(std::min(plan.offsets[0], plan.offsets[1]) == 0);
    CHECK(std::max(plan.offsets[0], plan.offsets[1]) == 128);
  }
  SUBCASE("meeting at one step") {
    const std::vector<buffer_request> requests = {{64, 0, 1}, {64, 1, 2}};
    const memory_plan plan = checked_plan(requests);
    CHECK(plan.arena_bytes == 128);
    CHECK(plan.offsets[0] != plan.offsets[1]);
  }
  SUBCASE("two small buffers reuse a dead large one's space side by side") {
    const std::vector<buffer_request> requests = {{256, 0, 0}, {128, 1, 1}, {128, 1, 1}};
    const memory_plan plan = checked_plan(requests);
    CHECK(plan.arena_bytes == 256);
    CHECK(plan.offsets[1] != plan.offsets[2]);
  }
  SUBCASE("a buffer goes back to offset 0 when only what it meets is above") {
    // 0 and 1 never meet, so both go to offset 0; 2 meets both and goes above them; 3 meets
    // only 2.
    const std::vector<buffer_request> requests = {
        {512, 0, 1}, {512, 3, 4}, {128, 1, 3}, {128, 2, 2}};
    const memory_plan plan = checked_plan(requests);
    CHECK(plan.offsets[0] == 0);
    CHECK(plan.offsets[1] == 0);
    CHECK(plan.offsets[2] == 512);
    CHECK(plan.offsets[3] == 0);
    CHECK(plan.arena_bytes == 640);
  }
}

TEST_CASE("zero-byte buffers take offset 0 and no space") {
  CHECK(checked_plan({{0, 0, 3}}).arena_bytes == 0);
  CHECK(checked_plan({}).arena_bytes == 0);
  CHECK(checked_plan({}).offsets.empty());
  const std::vector<buffer_request> requests = {{0, 0, 3}, {64, 0, 3}, {0, 1, 2}, {64, 2, 3}};
  const memory_plan plan = checked_plan(requests);
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[2] == 0);
  CHECK(plan.arena_bytes == 128);
  CHECK(nax::live_bytes_peak(requests) == 128);
}

TEST_CASE("offsets and the arena are multiples of the alignment") {
  const std::vector<buffer_request> requests = {{1, 0, 2}, {300, 1, 2}, {5, 2, 3}};
  SUBCASE("256") {
    const memory_plan plan = checked_plan(requests, 256);
    for (const size_t offset : plan.offsets) CHECK(offset % 256 == 0);
    CHECK(plan.arena_bytes == 256 + 512 + 256);  // all three are live at step 2
  }
  SUBCASE("1 packs bytes exactly") {
    const memory_plan plan = checked_plan(requests, 1);
    CHECK(plan.arena_bytes == 1 + 300 + 5);
  }
  SUBCASE("the default is 64") {
    const memory_plan plan = nax::plan_memory(requests);
    CHECK(plan.alignment == 64);
    CHECK(plan.arena_bytes == 64 + 320 + 64);
  }
}

TEST_CASE("live_bytes_peak counts each step's live bytes, rounded up") {
  CHECK(peak({}) == 0);
  CHECK(peak({{1, 0, 0}}) == 64);
  CHECK(peak({{1, 0, 0}}, 1) == 1);
  CHECK(peak({{64, 0, 0}, {64, 1, 1}}) == 64);
  CHECK(peak({{64, 0, 1}, {64, 1, 2}}) == 128);  // both live at step 1
  CHECK(peak({{100, 0, 9}, {100, 2, 3}, {100, 3, 4}, {100, 8, 9}}) == 384);
  // Steps near the top of size_t are still steps.
  CHECK(peak({{64, size_max - 1, size_max}, {64, size_max, size_max}}) == 128);
}

TEST_CASE("the power-of-two pool reuses a bucket once its buffer is dead") {
  CHECK(pool({}) == 0);
  CHECK(pool({{0, 0, 5}}) == 0);
  CHECK(pool({{65, 0, 0}}) == 128);
  CHECK(pool({{100, 0, 0}, {100, 1, 1}}) == 128);               // reused
  CHECK(pool({{100, 0, 0}, {120, 1, 1}}) == 128);               // same bucket
  CHECK(pool({{100, 0, 1}, {100, 1, 2}}) == 256);               // both live at step 1
  CHECK(pool({{100, 0, 0}, {200, 1, 1}}) == 384);               // other bucket
  CHECK(pool({{300, 0, 0}, {100, 1, 1}}) == 640);               // no splitting
  CHECK(pool({{100, 1, 1}, {100, 0, 0}}) == 128);               // requests out of step order
  CHECK(pool({{100, 0, 3}, {100, 1, 1}, {100, 2, 2}}) == 256);  // ends out of order
  CHECK(pool({{64, 0, 0}, {64, 0, 0}, {64, 1, 1}, {64, 1, 1}, {64, 1, 1}}) == 192);
  // Order of the requests does not matter, only their steps.
  CHECK(pool({{64, 1, 1}, {64, 0, 0}}) == 64);
}

TEST_CASE("chains of two-step lifetimes need exactly their live-bytes peak") {
  // Sizes on which greedy by size alone needs 26 units for a peak of 19: 9 goes on top of 10,
  // 8 at the bottom, and 7, alive with 9 and 8, above everything.
  const std::vector<size_t> units = {10, 9, 7, 8};
  std::vector<size_t> bytes;
  for (const size_t u : units) bytes.push_back(u * 1024);
  const std::vector<buffer_request> mlp = chain(bytes);
  CHECK(nax::live_bytes_peak(mlp) == 19 * 1024);
  CHECK(checked_plan(mlp).arena_bytes == 19 * 1024);

  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t length = std::uniform_int_distribution<size_t>(1, 60)(rng);
    std::vector<size_t> sizes(length);
    for (size_t& s : sizes) s = std::uniform_int_distribution<size_t>(0, 1u << 20)(rng);
    const std::vector<buffer_request> requests = chain(sizes);
    CAPTURE(trial);
    CHECK(checked_plan(requests).arena_bytes == nax::live_bytes_peak(requests));
  }
}

TEST_CASE("the checker names both requests of an overlap") {
  const std::vector<buffer_request> requests = {{100, 0, 2}, {64, 5, 6}, {128, 2, 3}};
  memory_plan plan = nax::plan_memory(requests);
  REQUIRE(nax::check_memory_plan(requests, plan) == "");
  plan.offsets = {0, 0, 64};
  plan.arena_bytes = 192;
  CHECK(nax::check_memory_plan(requests, plan) ==
        "request 0 (steps [0, 2], bytes [0, 128)) and request 2 (steps [2, 3], bytes [64, 192)) "
        "overlap in memory while both live at step 2");
  plan.offsets = {128, 128, 0};  // 1 shares 0's bytes, but never lives with it
  plan.arena_bytes = 256;
  CHECK(nax::check_memory_plan(requests, plan) == "");
}

TEST_CASE("the checker rejects misaligned, out-of-arena and malformed plans") {
  const std::vector<buffer_request> requests = {{100, 0, 2}, {64, 1, 6}};
  CHECK(nax::check_memory_plan(requests, {{0, 130}, 256, 64}) ==
        "request 1 has offset 130, not a multiple of alignment 64");
  CHECK(nax::check_memory_plan(requests, {{0, 128}, 128, 64}) ==
        "request 1 (steps [1, 6], 64 bytes at offset 128) does not fit in arena_bytes 128");
  CHECK(nax::check_memory_plan(requests, {{0, size_max - 63}, 192, 64}) ==
        "request 1 (steps [1, 6], 64 bytes at offset " + std::to_string(size_max - 63) +
            ") does not fit in arena_bytes 192");
  CHECK(nax::check_memory_plan(requests, {{0}, 192, 64}) == "1 offsets for 2 requests");
  CHECK(nax::check_memory_plan(requests, {{0, 128}, 200, 64}) ==
        "arena_bytes 200 is not a multiple of alignment 64");
  CHECK(nax::check_memory_plan(requests, {{0, 128}, 192, 48}) ==
        "alignment 48 is not a power of two");
  CHECK(nax::check_memory_plan(std::vector<buffer_request>{{1, 3, 2}}, {{0}, 64, 64}) ==
        "request 0 has first_step 3 > last_step 2");
  CHECK(nax::check_memory_plan(requests, {{0, 128}, 192, 64}) == "");
}

TEST_CASE("random request sets get sound plans no smaller than the live peak") {
  std::mt19937 rng(2024);
  const size_t alignments[] = {1, 8, 64, 4096};
  for (int trial = 0; trial < 500; ++trial) {
    const size_t count = std::uniform_int_distribution<size_t>(1, 300)(rng);
    const size_t alignment = alignments[trial % 4];
    const bool crowded = trial % 3 == 0;
    const std::vector<buffer_request> requests = random_requests(rng, count, crowded);
    const memory_plan plan = nax::plan_memory(requests, alignment);
    CAPTURE(trial);
    REQUIRE(nax::check_memory_plan(requests, plan) == "");
    size_t total = 0;
    for (const buffer_request& r : requests) total += nax::detail::align_up(r.bytes, alignment);
    const size_t live_peak = nax::live_bytes_peak(requests, alignment);
    CHECK(live_peak == quadratic_peak(requests, alignment));
    CHECK(plan.arena_bytes >= live_peak);
    CHECK(plan.live_peak_bytes == live_peak);
    CHECK(plan.arena_bytes <= total);
    CHECK(plan.arena_bytes % alignment == 0);
    const memory_plan again = nax::plan_memory(requests, alignment);
    CHECK(again.offsets == plan.offsets);
    CHECK(again.arena_bytes == plan.arena_bytes);
  }
}

TEST_CASE("greedy by size places exactly as the plain quadratic greedy; by step stays sound") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    const bool crowded = trial % 2 == 0;
    const size_t count = std::uniform_int_distribution<size_t>(1, crowded ? 400 : 200)(rng);
    const std::vector<buffer_request> requests = random_requests(rng, count, crowded);
    const nax::detail::step_order order(requests, 64);
    const size_t live_peak = nax::live_bytes_peak(requests);
    const nax::detail::placement by_size = nax::detail::place_by_size(order, "test");
    const nax::detail::placement by_step = *nax::detail::place_by_step(order, live_peak, "test");
    const memory_plan by_size_plan = as_plan(order, by_size, 64);
    CAPTURE(trial);
    CHECK(by_size_plan.offsets == quadratic_greedy_by_size(requests, 64));
    CHECK(nax::check_memory_plan(requests, by_size_plan) == "");
    CHECK(nax::check_memory_plan(requests, as_plan(order, by_step, 64)) == "");
    CHECK(nax::plan_memory(requests).arena_bytes == std::min(by_size.arena, by_step.arena));
  }
}

TEST_CASE("the quick try by step gives up only where it cannot reach the live peak cheaply") {
  SUBCASE("a chain: it reaches the peak, and that is the plan") {
    const std::vector<buffer_request> requests = chain({64, 640, 64, 640, 128, 64, 64});
    const nax::detail::step_order order(requests, 64);
    const size_t live_peak = nax::live_bytes_peak(requests);
    const auto quick = nax::detail::place_by_step(order, live_peak, "test", true);
    REQUIRE(quick.has_value());
    CHECK(quick->arena == live_peak);
    CHECK(as_plan(order, *quick, 64).offsets == nax::plan_memory(requests).offsets);
  }
  SUBCASE("an arena over the peak: it gives up, and greedy by size decides") {
    // By step leaves 1 and 3 at [256, 320) and [128, 192) while 0 lives, so 2 (192 bytes) finds
    // no gap under the peak of 320 at step 2. By size places 2 first, at 0, and fits in 320.
    const std::vector<buffer_request> requests = {{128, 0, 1}, {64, 1, 2}, {192, 2, 4}, {64, 1, 2}};
    const nax::detail::step_order order(requests, 64);
    const size_t live_peak = nax::live_bytes_peak(requests);
    REQUIRE(live_peak == 320);
    const nax::detail::placement full = *nax::detail::place_by_step(order, live_peak, "test");
    CHECK(full.arena > live_peak);
    CHECK_FALSE(nax::detail::place_by_step(order, live_peak, "test", true).has_value());
    CHECK(checked_plan(requests).arena_bytes == live_peak);
  }
  SUBCASE("many buffers live at once: it gives up, and the plan is still the smaller one") {
    std::vector<buffer_request> requests;
    for (size_t i = 0; i < 100; ++i) requests.push_back({64 * (1 + i % 5), i, i + 40});
    const nax::detail::step_order order(requests, 64);
    const size_t live_peak = nax::live_bytes_peak(requests);
    CHECK_FALSE(nax::detail::place_by_step(order, live_peak, "test", true).has_value());
    const size_t by_size = nax::detail::place_by_size(order, "test").arena;
    const size_t by_step = nax::detail::place_by_step(order, live_peak, "test")->arena;
    CHECK(checked_plan(requests).arena_bytes == std::min(by_size, by_step));
  }
}

TEST_CASE("lifetimes nested around one step, as in training, stack with no waste") {
  // Activation i lives from forward step i to backward step 599 - i: all meet at steps 299-300.
  std::vector<buffer_request> requests;
  for (size_t i = 0; i < 300; ++i) requests.push_back({1000 + 10 * (i % 17), i, 599 - i});
  const memory_plan plan = checked_plan(requests);
  CHECK(plan.arena_bytes == nax::live_bytes_peak(requests));
}

TEST_CASE("a few thousand requests with long lifetimes plan soundly") {
  std::mt19937 rng(5);
  std::vector<buffer_request> requests = random_requests(rng, 3000);
  for (size_t i = 0; i < 300; ++i) requests.push_back({64 * (i + 1), 0, size_max});
  const memory_plan plan = checked_plan(requests);
  CHECK(plan.arena_bytes >= nax::live_bytes_peak(requests));
}

TEST_CASE("invalid requests and alignments throw, naming the request and its values") {
  const std::vector<buffer_request> backwards = {{64, 0, 1}, {64, 5, 2}};
  CHECK_THROWS_WITH_AS((void)nax::plan_memory(backwards),
                       "nax::plan_memory: request 1 has first_step 5 > last_step 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)nax::live_bytes_peak(backwards),
                       "nax::live_bytes_peak: request 1 has first_step 5 > last_step 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)nax::pow2_pool_bytes(backwards),
                       "nax::pow2_pool_bytes: request 1 has first_step 5 > last_step 2",
                       std::invalid_argument);

  const std::vector<buffer_request> fine = {{64, 0, 1}};
  CHECK_THROWS_WITH_AS((void)nax::plan_memory(fine, 48),
                       "nax::plan_memory: alignment 48 is not a power of two",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)nax::plan_memory(fine, 0),
                       "nax::plan_memory: alignment 0 is not a power of two",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)nax::live_bytes_peak(fine, 3),
                       "nax::live_bytes_peak: alignment 3 is not a power of two",
                       std::invalid_argument);

  const std::vector<buffer_request> huge = {{64, 0, 1}, {size_max - 10, 2, 2}};
  const std::string huge_bytes = std::to_string(size_max - 10);
  const std::string unalignable = "nax::plan_memory: request 1 of " + huge_bytes +
                                  " bytes overflows std::size_t when rounded up to alignment 64";
  CHECK_THROWS_WITH_AS((void)nax::plan_memory(huge), unalignable.c_str(), std::invalid_argument);
  const std::string no_bucket = "nax::pow2_pool_bytes: request 1 of " + huge_bytes +
                                " bytes has no power-of-two bucket in std::size_t";
  CHECK_THROWS_WITH_AS((void)nax::pow2_pool_bytes(huge), no_bucket.c_str(), std::invalid_argument);
  CHECK(nax::plan_memory(huge, 1).arena_bytes == size_max - 10);  // fits with alignment 1
}

TEST_CASE("arenas beyond size_t throw instead of wrapping") {
  const std::vector<buffer_request> requests = {{size_max / 2 + 1, 0, 1}, {size_max / 2 + 1, 1, 2}};
  CHECK_THROWS_WITH_AS((void)nax::plan_memory(requests, 1),
                       "nax::plan_memory: the total bytes exceed std::size_t", std::overflow_error);
  CHECK_THROWS_WITH_AS((void)nax::live_bytes_peak(requests, 1),
                       "nax::live_bytes_peak: the total bytes exceed std::size_t",
                       std::overflow_error);
  CHECK_THROWS_WITH_AS((void)nax::pow2_pool_bytes(requests),
                       "nax::pow2_pool_bytes: the total bytes exceed std::size_t",
                       std::overflow_error);
}
