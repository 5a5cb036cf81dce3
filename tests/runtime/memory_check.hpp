#pragma once
// The memory plan of a specialization checked independently of how it was made: every
// intermediate against every other live in the same group of its schedule (a value lives from
// the first to the last group of a step that writes or reads it; a reshape's result and its
// operand are one buffer; a pipelined chain's ring is its slots' bytes; a view of an input or a
// result is not in the arena). Needs doctest.

#include <nax/graph/program.hpp>
#include <nax/runtime/executable.hpp>
#include <nax/runtime/specialization.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace memory_check {

namespace g = nax::graph;

// The value whose buffer v is: a reshape between intermediates keeps its operand's.
inline std::size_t buffer_owner(const g::program& p, std::size_t v) {
  for (const g::program_step& st : p.steps)
    if (st.result == v && st.kind() == g::op_kind::reshape &&
        p.values[st.args[0]].role == g::value_role::intermediate &&
        p.values[v].role == g::value_role::intermediate)
      return buffer_owner(p, st.args[0]);
  return v;
}

// Whether v is a view of a caller's buffer (specialization::views), which the arena does not
// hold: a reshape or a prefix of an input or a result.
inline bool is_view(const nax::runtime::specialization& s, const g::program& p, std::size_t v) {
  for (const nax::runtime::specialization::view& w : s.views)
    if (w.value == v) {
      CHECK(p.values[w.of].role != g::value_role::intermediate);
      return true;
    }
  return false;
}

// The bytes of v's buffer: a ring of tiles for a pipelined chain's value that lives in one.
inline std::size_t buffer_bytes(const nax::runtime::specialization& s, std::size_t v) {
  for (const nax::runtime::pipeline& pl : s.pipelines)
    for (const nax::runtime::pipeline::tiled_value& t : pl.values)
      if (t.ring && t.value == v) return t.stride * pl.slots;
  return s.shapes[v].num_bytes();
}

inline void check(const nax::runtime::specialization& s, const g::program& p) {
  const std::size_t n = p.values.size();
  std::vector<std::size_t> first(n, ~std::size_t{0}), last(n, 0);
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const std::size_t grp = s.schedule.group_of[k];
    auto touch = [&](std::size_t v) {
      first[v] = std::min(first[v], grp);
      last[v] = std::max(last[v], grp);
    };
    touch(p.steps[k].result);
    for (auto e : p.steps[k].extra_results) touch(e);
    for (auto a : p.steps[k].args) touch(a);
  }
  for (std::size_t a = 0; a < n; ++a) {
    if (p.values[a].role != g::value_role::intermediate || is_view(s, p, a)) continue;
    const std::size_t abytes = buffer_bytes(s, a);
    CHECK(s.offsets[a] + abytes <= s.arena_bytes);
    for (std::size_t c = a + 1; c < n; ++c) {
      if (p.values[c].role != g::value_role::intermediate || is_view(s, p, c)) continue;
      const bool meet = first[a] <= last[c] && first[c] <= last[a];
      const std::size_t cbytes = buffer_bytes(s, c);
      const bool disjoint =
          s.offsets[a] + abytes <= s.offsets[c] || s.offsets[c] + cbytes <= s.offsets[a];
      if (buffer_owner(p, a) == buffer_owner(p, c)) {
        CHECK(s.offsets[a] == s.offsets[c]);
        continue;
      }
      if (meet && abytes && cbytes) CHECK(disjoint);
    }
  }
  CHECK(s.live_peak_bytes <= s.arena_bytes);
}

inline void check(const nax::executable& ex, const nax::bindings& bd) {
  const auto s = ex.cached(bd);
  REQUIRE(s);
  check(*s, ex.program());
}

}  // namespace memory_check
