#pragma once
// nax::plan_memory: byte offsets in one arena for the intermediates of a linear plan of steps,
// chosen from their lifetimes so that buffers never live at the same time share memory. A graph's
// specialization (one axis binding) plans once, then every run makes a single allocation.
//
// Two greedy placements are tried and the smaller arena kept: by size (largest first, each at the
// lowest offset clear of the placed buffers it meets in time: TFLite's "greedy by size") and by
// step (in order of first use, best fit under the live-bytes peak). The second is exact on chains
// of two-step lifetimes, where the first can lose a buffer's worth. Both are deterministic. By
// step goes first, given up as soon as it cannot reach the peak: where it does (most inference
// graphs), that is the plan, found in linear time.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA {

/// One intermediate buffer: `bytes` (possibly 0) live from step `first_step` to `last_step`, both
/// included, so two buffers that meet at one step (one's producer is the other's last reader)
/// cannot share memory.
struct buffer_request {
  std::size_t bytes = 0;
  std::size_t first_step = 0;
  std::size_t last_step = 0;
};

/// Where each request lives in one arena of `arena_bytes` bytes whose base is `alignment`-aligned.
struct memory_plan {
  std::vector<std::size_t> offsets;  ///< one per request, each a multiple of `alignment`
  std::size_t arena_bytes = 0;       ///< a multiple of `alignment`
  std::size_t alignment = 64;
  std::size_t live_peak_bytes = 0;  ///< live_bytes_peak of the requests: no arena is smaller
};

namespace detail {

inline constexpr std::size_t max_size = std::numeric_limits<std::size_t>::max();

[[nodiscard]] inline std::string steps_text(const buffer_request& r) {
  return "steps [" + std::to_string(r.first_step) + ", " + std::to_string(r.last_step) + "]";
}

/// Throws std::invalid_argument, naming `caller`, for what no plan can serve: an alignment that is
/// not a power of two, a lifetime that ends before it starts, a size that overflows when rounded.
inline void validate_requests(std::span<const buffer_request> requests, std::size_t alignment,
                              const char* caller) {
  if (!std::has_single_bit(alignment)) {
    throw std::invalid_argument(std::string(caller) + ": alignment " + std::to_string(alignment) +
                                " is not a power of two");
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const buffer_request& r = requests[i];
    if (r.first_step > r.last_step) {
      throw std::invalid_argument(std::string(caller) + ": request " + std::to_string(i) +
                                  " has first_step " + std::to_string(r.first_step) +
                                  " > last_step " + std::to_string(r.last_step));
    }
    if (r.bytes > max_size - (alignment - 1)) {
      throw std::invalid_argument(std::string(caller) + ": request " + std::to_string(i) + " of " +
                                  std::to_string(r.bytes) + " bytes overflows std::size_t when " +
                                  "rounded up to alignment " + std::to_string(alignment));
    }
  }
}

/// `bytes` rounded up to `alignment` (a power of two; validate_requests rules out overflow).
[[nodiscard]] constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment) noexcept {
  return (bytes + alignment - 1) & ~(alignment - 1);
}

/// a + b, or std::overflow_error: a total beyond std::size_t is no one request's fault, but it must
/// not wrap into a small, wrong answer.
[[nodiscard]] inline std::size_t checked_add(std::size_t a, std::size_t b, const char* caller) {
  if (b > max_size - a) {
    throw std::overflow_error(std::string(caller) + ": the total bytes exceed std::size_t");
  }
  return a + b;
}

/// The requests in order of first_step (ties: larger first, then lower index), which the peak and
/// both placements walk, with each position's lifetime in terms of positions: the requests that
/// start during the lifetime of position p are those at [group_begin[p], reach[p]), so positions
/// p <= q have meeting lifetimes exactly when reach[p] > group_begin[q]. Steps of any size thus
/// compare as small counts, found once by sorting instead of once per query.
struct step_order {
  std::vector<std::size_t> request;      ///< the request at each position
  std::vector<std::size_t> size;         ///< its bytes rounded up to the alignment
  std::vector<std::size_t> group_begin;  ///< the first position with the same first_step
  std::vector<std::size_t> reach;        ///< how many positions start at or before its last_step

  step_order(std::span<const buffer_request> requests, std::size_t alignment) {
    const std::size_t n = requests.size();
    struct key {
      std::size_t first_step, size, index;
    };
    const auto before = [](const key& a, const key& b) {
      return a.first_step != b.first_step ? a.first_step < b.first_step : a.size > b.size;
    };
    const auto key_of = [&](std::size_t i) -> key {
      return {requests[i].first_step, align_up(requests[i].bytes, alignment), i};
    };
    request.resize(n);
    size.resize(n);
    group_begin.resize(n);
    reach.resize(n);
    std::vector<std::size_t> firsts(n);
    // Requests usually come in this order already: then no keys are sorted.
    bool in_order = true;
    for (std::size_t i = 1; i < n && in_order; ++i) in_order = !before(key_of(i), key_of(i - 1));
    const auto put = [&](std::size_t p, const key& k) {
      request[p] = k.index;
      size[p] = k.size;
      firsts[p] = k.first_step;
      group_begin[p] = p > 0 && firsts[p] == firsts[p - 1] ? group_begin[p - 1] : p;
    };
    if (in_order) {
      for (std::size_t p = 0; p < n; ++p) put(p, key_of(p));
    } else {
      std::vector<key> keys(n);
      for (std::size_t i = 0; i < n; ++i) keys[i] = key_of(i);
      std::stable_sort(keys.begin(), keys.end(), before);  // stable: indices break ties
      for (std::size_t p = 0; p < n; ++p) put(p, keys[p]);
    }
    for (std::size_t p = 0; p < n; ++p) {
      reach[p] = first_above(firsts, p, requests[request[p]].last_step);
    }
  }

  /// The first index after `from` whose value in `sorted` exceeds `value` (>= sorted[from]), or
  /// sorted.size(). Gallops from `from` before bisecting: most lifetimes are short, so the answer
  /// is usually a few positions away.
  [[nodiscard]] static std::size_t first_above(const std::vector<std::size_t>& sorted,
                                               std::size_t from, std::size_t value) {
    const std::size_t n = sorted.size();
    std::size_t low = from + 1, high = low;  // sorted[low - 1] <= value
    for (std::size_t step = 1; high < n && sorted[high] <= value; step *= 2) {
      low = high + 1;
      high = low + step;
    }
    const std::size_t* data = sorted.data();
    return static_cast<std::size_t>(std::upper_bound(data + low, data + std::min(high, n), value) -
                                    data);
  }
};

/// The most bytes live at one step: requests leave at the position their reach names, and every
/// step's peak is reached just after one of its requests arrives.
[[nodiscard]] inline std::size_t peak_of(const step_order& order, const char* caller) {
  const std::size_t n = order.request.size();
  std::vector<std::size_t> leaving(n + 1, 0);  // sums may wrap; their differences are exact
  // (All departures first: in one loop, reading leaving[p] right after writing leaving[p] in
  // most iterations made every one of them a few times slower.)
  for (std::size_t p = 0; p < n; ++p) leaving[order.reach[p]] += order.size[p];
  std::size_t live = 0, peak = 0;
  for (std::size_t p = 0; p < n; ++p) {
    live -= leaving[p];  // (reach[p] > p: none of p's own)
    live = checked_add(live, order.size[p], caller);
    peak = std::max(peak, live);
  }
  return peak;
}

/// Offsets by position, and the arena they need.
struct placement {
  std::vector<std::size_t> offsets;
  std::size_t arena = 0;
};

struct arena_range {
  std::size_t begin, end;
};

/// Insertion sort for the few ranges one buffer usually meets, std::sort for many: a std::sort
/// call per placement would otherwise cost more than the rest of it.
inline void sort_by_offset(std::span<arena_range> ranges) {
  if (ranges.size() > 16) {
    std::sort(ranges.begin(), ranges.end(),
              [](const arena_range& a, const arena_range& b) { return a.begin < b.begin; });
    return;
  }
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    const arena_range moving = ranges[i];
    std::size_t j = i;
    for (; j > 0 && ranges[j - 1].begin > moving.begin; --j) ranges[j] = ranges[j - 1];
    ranges[j] = moving;
  }
}

/// Greedy by size: largest first (ties: earlier first_step, then lower index), each at the lowest
/// offset where it overlaps no placed request whose lifetime meets its own.
///
/// Positions p and q meet when reach[p] > group_begin[q] and reach[q] > group_begin[p]; an
/// unplaced position has placed_reach 0, so it meets nothing. The placed positions meeting q are
/// collected without branches from the first position that can meet q, skipping blocks whose
/// reaches are all too small (so one long-lived request does not lengthen every scan), then
/// sorted by offset for the gap search. Once some buffer meets `many` (a training graph, where
/// every activation lives across the turn), all placed positions are also kept in offset order:
/// walking them all costs less than sorting that many for each placement.
[[nodiscard]] inline placement place_by_size(const step_order& order, const char* caller) {
  const std::size_t n = order.request.size();
  struct job {
    std::size_t size, position;
  };
  std::vector<job> jobs(n);
  for (std::size_t p = 0; p < n; ++p) jobs[p] = {order.size[p], p};
  // (Positions break ties: the order a stable sort by size would give.)
  std::sort(jobs.begin(), jobs.end(), [](const job& a, const job& b) {
    return a.size != b.size ? a.size > b.size : a.position < b.position;
  });

  // Reaches only grow past a threshold from the first position whose reach does, so no position
  // before lowest[q] meets q.
  std::vector<std::size_t> lowest(n);
  for (std::size_t q = 0, p = 0, reach_so_far = 0; q < n; ++q) {
    for (; reach_so_far <= order.group_begin[q]; ++p) {
      reach_so_far = std::max(reach_so_far, order.reach[p]);
    }
    lowest[q] = p - 1;
  }

  constexpr std::size_t block = 32, many = 128;
  std::vector<std::size_t> placed_reach(n, 0), block_reach((n + block - 1) / block, 0);
  std::vector<arena_range> taken(n);   // a prefix holds the placed requests that meet q
  std::vector<std::size_t> by_offset;  // placed positions, once some position meets `many`
  bool keeping_by_offset = false;
  placement result{std::vector<std::size_t>(n, 0), 0};
  const auto before = [&](std::size_t a, std::size_t b) {
    return result.offsets[a] < result.offsets[b];
  };
  for (const job& next : jobs) {
    const std::size_t size = next.size, q = next.position;  // not a binding: clang 14 lambdas
    if (size == 0) break;  // the rest are empty too: offset 0 overlaps nothing
    const std::size_t threshold = order.group_begin[q], end = order.reach[q];
    std::size_t count = 0;
    for (std::size_t b = lowest[q] / block; b * block < end; ++b) {
      if (block_reach[b] <= threshold) continue;
      const std::size_t stop = std::min(end, b * block + block);
      for (std::size_t p = std::max(lowest[q], b * block); p < stop; ++p) {
        taken[count] = {result.offsets[p], result.offsets[p] + order.size[p]};
        count += static_cast<std::size_t>(placed_reach[p] > threshold);
      }
    }

    // The lowest offset below, between or above the ranges met, visited in offset order.
    std::size_t offset = 0;
    const auto fits_below = [&](std::size_t begin, std::size_t range_end) {
      if (begin >= offset && begin - offset >= size) return true;
      offset = std::max(offset, range_end);
      return false;
    };
    if (count > many && !keeping_by_offset) {
      for (std::size_t p = 0; p < n; ++p) {
        if (placed_reach[p] != 0) by_offset.push_back(p);
      }
      std::stable_sort(by_offset.begin(), by_offset.end(), before);
      keeping_by_offset = true;
    }
    if (count > many) {
      for (const std::size_t p : by_offset) {
        if (placed_reach[p] > threshold && end > order.group_begin[p] &&
            fits_below(result.offsets[p], result.offsets[p] + order.size[p])) {
          break;
        }
      }
    } else {
      const std::span<arena_range> meeting(taken.data(), count);
      sort_by_offset(meeting);
      for (const auto [begin, range_end] : meeting) {
        if (fits_below(begin, range_end)) break;
      }
    }

    result.offsets[q] = offset;
    result.arena = std::max(result.arena, checked_add(offset, size, caller));
    placed_reach[q] = end;
    block_reach[q / block] = std::max(block_reach[q / block], end);
    if (keeping_by_offset) {
      by_offset.insert(std::upper_bound(by_offset.begin(), by_offset.end(), q, before), q);
    }
  }
  return result;
}

/// Greedy by step: in order of first_step (ties: larger first, then lower index), each in the
/// smallest gap between the buffers still live that fits under `ceiling` (the live-bytes peak, or
/// the arena once it has outgrown it), else at the lowest offset above them. A gap touching the
/// ceiling but not 0 is filled from the top, so that a chain's buffers alternate between the two
/// ends of the arena, the optimal layout for two-step lifetimes.
///
/// With `quick`, gives up (an empty result) once the arena outgrows `ceiling` or more than
/// `quick_live` buffers are live at once: each placement walks the live buffers, so a quick try
/// costs O(n quick_live) at most, and an arena over the ceiling cannot shrink back under it.
[[nodiscard]] inline std::optional<placement> place_by_step(const step_order& order,
                                                            std::size_t ceiling, const char* caller,
                                                            bool quick = false) {
  constexpr std::size_t quick_live = 32;
  const std::size_t n = order.request.size();
  struct live_buffer {
    std::size_t offset, end, reach;
  };
  std::vector<live_buffer> live;  // by offset; all live at one step, so disjoint in memory
  placement result{std::vector<std::size_t>(n, 0), 0};
  for (std::size_t q = 0; q < n; ++q) {
    const std::size_t size = order.size[q];
    if (size == 0) continue;
    const std::size_t step_begin = order.group_begin[q];
    std::erase_if(live, [step_begin](const live_buffer& b) { return b.reach <= step_begin; });

    const std::size_t top = std::max(ceiling, result.arena);
    std::size_t best_begin = 0, best_end = 0, best_gap = 0, gap_begin = 0;
    bool found = false;
    for (std::size_t i = 0; i <= live.size(); ++i) {
      const std::size_t gap_end = i < live.size() ? live[i].offset : top;
      const std::size_t gap = gap_end - gap_begin;
      if (gap >= size && (!found || gap < best_gap)) {
        found = true;
        best_begin = gap_begin;
        best_end = gap_end;
        best_gap = gap;
      }
      if (i < live.size()) gap_begin = live[i].end;
    }
    std::size_t offset = gap_begin;  // above every live buffer: the arena grows
    if (found) offset = best_end == top && best_begin != 0 ? best_end - size : best_begin;

    result.offsets[q] = offset;
    const std::size_t end = checked_add(offset, size, caller);
    result.arena = std::max(result.arena, end);
    if (quick && (result.arena > ceiling || live.size() >= quick_live)) return std::nullopt;
    const auto at =
        std::upper_bound(live.begin(), live.end(), offset,
                         [](std::size_t value, const live_buffer& b) { return value < b.offset; });
    live.insert(at, {offset, end, order.reach[q]});
  }
  return result;
}

}  // namespace detail

/// The most bytes live at any one step, each request rounded up to `alignment`: no plan's arena is
/// smaller, so plan_memory's arena is judged against it.
[[nodiscard]] inline std::size_t live_bytes_peak(std::span<const buffer_request> requests,
                                                 std::size_t alignment = 64) {
  constexpr const char* caller = "nax::live_bytes_peak";
  detail::validate_requests(requests, alignment, caller);
  return detail::peak_of(detail::step_order(requests, alignment), caller);
}

/// Offsets in one arena for `requests` such that two requests whose lifetimes meet never overlap,
/// each reserving its bytes rounded up to `alignment`. Zero-byte requests get offset 0. The same
/// requests always give the same plan. Throws std::invalid_argument for an alignment that is not a
/// power of two or a request with first_step > last_step, std::overflow_error for an arena beyond
/// std::size_t.
[[nodiscard]] inline memory_plan plan_memory(std::span<const buffer_request> requests,
                                             std::size_t alignment = 64) {
  constexpr const char* caller = "nax::plan_memory";
  detail::validate_requests(requests, alignment, caller);
  const detail::step_order order(requests, alignment);
  const std::size_t floor = detail::peak_of(order, caller);
  // Greedy by step first, given up early unless it reaches the floor: it does on the chains that
  // inference graphs mostly are, in linear time, where greedy by size would sort every request.
  std::optional<detail::placement> quick = detail::place_by_step(order, floor, caller, true);
  detail::placement best;
  if (quick) {
    best = std::move(*quick);
  } else {
    best = detail::place_by_size(order, caller);
    if (best.arena > floor) {  // not yet optimal: try the other order in full
      detail::placement by_step = *detail::place_by_step(order, floor, caller);
      if (by_step.arena < best.arena) best = std::move(by_step);
    }
  }
  memory_plan plan{std::vector<std::size_t>(requests.size()), best.arena, alignment, floor};
  for (std::size_t p = 0; p < requests.size(); ++p) {
    plan.offsets[order.request[p]] = best.offsets[p];
  }
  return plan;
}

/// The bytes a power-of-two bucketed pool would allocate for `requests`: the baseline plan_memory
/// is measured against. In order of first_step, a request of b > 0 bytes takes a free buffer of
/// bit_ceil(b) bytes if the pool has one, else allocates one; a buffer is free again after the
/// request's last_step. Zero-byte requests take nothing. Returns the total ever allocated.
[[nodiscard]] inline std::size_t pow2_pool_bytes(std::span<const buffer_request> requests) {
  constexpr const char* caller = "nax::pow2_pool_bytes";
  constexpr std::size_t largest_bucket = detail::max_size / 2 + 1;
  detail::validate_requests(requests, 1, caller);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].bytes > largest_bucket) {
      throw std::invalid_argument(std::string(caller) + ": request " + std::to_string(i) + " of " +
                                  std::to_string(requests[i].bytes) +
                                  " bytes has no power-of-two bucket in std::size_t");
    }
  }
  const std::size_t n = requests.size();
  std::vector<std::size_t> by_first(n), by_last(n);
  std::iota(by_first.begin(), by_first.end(), std::size_t{0});
  std::iota(by_last.begin(), by_last.end(), std::size_t{0});
  // A graph's requests mostly come in step order already: check before sorting.
  auto sort_by = [&](std::vector<std::size_t>& order, auto key) {
    auto before = [&](std::size_t a, std::size_t b) { return key(a) < key(b); };
    if (!std::is_sorted(order.begin(), order.end(), before))
      std::sort(order.begin(), order.end(), before);
  };
  sort_by(by_first, [&](std::size_t i) { return requests[i].first_step; });
  sort_by(by_last, [&](std::size_t i) { return requests[i].last_step; });
  auto bucket = [&](std::size_t i) {
    return static_cast<std::size_t>(std::countr_zero(std::bit_ceil(requests[i].bytes)));
  };

  std::array<std::size_t, std::numeric_limits<std::size_t>::digits> free_buffers{};
  std::size_t total = 0, released = 0;
  for (const std::size_t r : by_first) {
    // Anything that ended before r starts also started before it, so it holds a buffer.
    for (; released < n && requests[by_last[released]].last_step < requests[r].first_step;
         ++released) {
      if (requests[by_last[released]].bytes != 0) ++free_buffers[bucket(by_last[released])];
    }
    if (requests[r].bytes == 0) continue;
    std::size_t& free_in_bucket = free_buffers[bucket(r)];
    if (free_in_bucket > 0) {
      --free_in_bucket;
    } else {
      total = detail::checked_add(total, std::bit_ceil(requests[r].bytes), caller);
    }
  }
  return total;
}

/// "" if `plan` is sound for `requests`: one offset per request, each a multiple of the plan's
/// alignment, each buffer (its bytes rounded up to that alignment, the space plan_memory reserves)
/// inside arena_bytes, and no two buffers whose lifetimes meet overlapping. Otherwise the first
/// problem found, naming the request(s) by index with their lifetimes and byte ranges. Shares no
/// code with the planner, so that tests check one against the other; never throws on bad input.
[[nodiscard]] inline std::string check_memory_plan(std::span<const buffer_request> requests,
                                                   const memory_plan& plan) {
  const std::size_t alignment = plan.alignment;
  if (!std::has_single_bit(alignment)) {
    return "alignment " + std::to_string(alignment) + " is not a power of two";
  }
  if (plan.offsets.size() != requests.size()) {
    return std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(requests.size()) +
           " requests";
  }
  if (plan.arena_bytes % alignment != 0) {
    return "arena_bytes " + std::to_string(plan.arena_bytes) + " is not a multiple of alignment " +
           std::to_string(alignment);
  }
  const std::size_t n = requests.size();
  std::vector<std::size_t> ends(n);
  auto describe = [&](std::size_t i) {
    return "request " + std::to_string(i) + " (" + detail::steps_text(requests[i]) + ", bytes [" +
           std::to_string(plan.offsets[i]) + ", " + std::to_string(ends[i]) + "))";
  };
  for (std::size_t i = 0; i < n; ++i) {
    const buffer_request& r = requests[i];
    const std::size_t offset = plan.offsets[i];
    const std::size_t footprint = r.bytes == 0 ? 0 : ((r.bytes - 1) / alignment + 1) * alignment;
    if (r.first_step > r.last_step) {
      return "request " + std::to_string(i) + " has first_step " + std::to_string(r.first_step) +
             " > last_step " + std::to_string(r.last_step);
    }
    if (offset % alignment != 0) {
      return "request " + std::to_string(i) + " has offset " + std::to_string(offset) +
             ", not a multiple of alignment " + std::to_string(alignment);
    }
    if (footprint < r.bytes || offset > plan.arena_bytes || footprint > plan.arena_bytes - offset) {
      return "request " + std::to_string(i) + " (" + detail::steps_text(r) + ", " +
             std::to_string(r.bytes) + " bytes at offset " + std::to_string(offset) +
             ") does not fit in arena_bytes " + std::to_string(plan.arena_bytes);
    }
    ends[i] = offset + footprint;
  }
  // Sweep the requests by first_step; a request meets exactly the earlier ones still live.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return requests[a].first_step != requests[b].first_step
               ? requests[a].first_step < requests[b].first_step
               : a < b;
  });
  std::vector<std::size_t> live;
  for (const std::size_t j : order) {
    const std::size_t step = requests[j].first_step;
    std::erase_if(live, [&](std::size_t i) { return requests[i].last_step < step; });
    for (const std::size_t i : live) {
      const bool disjoint = plan.offsets[i] == ends[i] || plan.offsets[j] == ends[j] ||
                            ends[i] <= plan.offsets[j] || ends[j] <= plan.offsets[i];
      if (!disjoint) {
        return describe(std::min(i, j)) + " and " + describe(std::max(i, j)) +
               " overlap in memory while both live at step " + std::to_string(step);
      }
    }
    live.push_back(j);
  }
  return "";
}

}  // namespace nax
