#pragma once
// Level 2 of pipelining (seed 003, "Pipelined Execution Design"): a chain that level 1 found
// (graph/pipeline_chains.hpp) run tile by tile for one binding. Each step of the chain is a
// stage with kernels made for a tile's shapes (and the last tile's); a run hands (stage, tile)
// tasks to the lanes of one parallel region: a stage runs tile t once the stages it reads have
// finished tile t, and the deepest ready stage goes first, so a tile flows through the chain
// while it is still in cache. An intermediate that only the chain reads lives in a ring of
// `slots` tiles instead of a whole buffer: a stage writes tile t into slot t mod slots once the
// stages reading that slot have finished tile t - slots.
//
// Tiles split no reduction (level 1 admits no step that mixes positions along the tile axis)
// and every kernel's result is independent of the thread that runs it, so a pipelined run gives
// the bits of the unpipelined one. One exception is guarded here: a product whose tile would
// have one row runs as a matrix-vector product, which sums in another order, so a chain with a
// product never has a one-row tile (the last tile takes the row instead).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>
#include <nax/runtime/specialization_recipe.hpp>

namespace nax::NAX_ISA {
class trace;
}

namespace nax::NAX_ISA::runtime {

/// A chain run tile by tile for one binding (see the file comment).
struct pipeline {
  struct stage {
    std::uint32_t step = 0;
    std::unique_ptr<kernels::step_kernel> kernel;       // for a tile of `tile` positions
    std::unique_ptr<kernels::step_kernel> last_kernel;  // for the last tile, if it differs
    nax::detail::small_vector<std::uint32_t, 4> after;  // stages whose tile t it reads
    nax::detail::small_vector<std::uint32_t, 4> reuse;  // readers of its rings' slots
    bool exclusive = false;  // its kernels use arena scratch: one tile at a time
  };
  /// A value whose address moves from tile to tile: by `stride` bytes per tile, or for a ring
  /// by `stride` bytes per slot.
  struct tiled_value {
    graph::value_index value = 0;
    std::size_t stride = 0;
    bool ring = false;
  };

  std::uint32_t chain = 0;  // in program::pipelines
  std::uint32_t group = 0;  // in the specialization's schedule
  std::size_t extent = 0;   // the tile axis's
  std::size_t tile = 0;     // positions per tile
  std::size_t tiles = 0;
  std::size_t last = 0;   // positions in the last tile
  std::size_t lanes = 1;  // tasks at once (each kernel is planned for threads / lanes)
  std::size_t slots = 1;  // tiles per ring
  std::vector<stage> stages;
  std::vector<tiled_value> values;
  std::size_t ring_bytes = 0;   // the rings, in the arena
  std::size_t whole_bytes = 0;  // what the ring values would take as whole buffers
  std::size_t state = 0;        // arena offset of a run's bookkeeping (state_bytes)
  std::size_t num_values = 0;   // the program's

  /// Bytes of a run's bookkeeping: each lane's table of value addresses, and per stage the next
  /// tile to start, whether it runs (an exclusive stage) and which tiles have finished.
  NAX_RUNTIME_INLINE std::size_t state_bytes() const;
};

/// The tile geometry of chain c of p for the concrete `shapes` on `threads` threads, or none if
/// the chain is better run whole: under `automatic` when its intermediates fit in L2 or it would
/// make fewer than two tiles per lane; under `always` when it would make fewer than two tiles.
/// `tile`, if not 0, is the tile size to use (at least 2 for a chain with a product).
/// (`recipe`: p's, runtime/specialization_recipe.hpp; `value_bytes`: each value's bytes in
/// `shapes`.)
NAX_RUNTIME_INLINE std::optional<pipeline> plan_pipeline(
    const graph::program& p, const specialization_recipe& recipe, std::uint32_t c,
    std::span<const nax::shape> shapes, std::span<const std::size_t> value_bytes,
    std::size_t threads, graph::pipelining mode, std::size_t tile = 0);

/// Makes the stages' kernels (planned for threads / lanes threads; their scratch appended to
/// `scratch`, tagged with the chain's first step) and the tiled values. ring_of[v] is set to
/// the bytes of v's ring for the values that live in one.
NAX_RUNTIME_INLINE void build_pipeline(pipeline& pl, const graph::program& p,
                                       const specialization_recipe& recipe,
                                       std::span<const nax::shape> shapes, std::size_t threads,
                                       std::vector<scratch_request>& scratch,
                                       std::vector<std::size_t>& ring_of);

/// Runs pl over the run's value addresses and arena (values whose tile moves are offset per
/// task; a ring value's entry is its ring's base). Records each task in `tr` if given.
NAX_RUNTIME_INLINE void run_pipeline(const pipeline& pl, const graph::program& p,
                                     void* const* values, std::byte* arena, nax::trace* tr,
                                     std::uint64_t run_id);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>

#include <nax/exec/cache_info.hpp>
#include <nax/exec/planning_threads.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/runtime/step_factory.hpp>
#include <nax/runtime/trace.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

/// Rows a tile has at least (but for a chain of fewer rows) when the chain has a product that
/// reads an operand whole (the weights): each tile packs that operand again, and below this many
/// rows packing it costs more than a few percent of the product.
inline constexpr std::size_t pipeline_product_rows = 512;

inline bool has_axis_first(const nax::shape& s, axis_name axis) {
  return s.rank() > 0 && s[0].has_name() && s[0].name() == axis;
}

inline nax::shape with_first_extent(const nax::shape& s, std::size_t extent) {
  std::vector<dim> dims(s.dims().begin(), s.dims().end());
  dims[0] = dim::named(dims[0].name(), extent);
  return nax::shape(s.dtype(), std::span<const dim>(dims));
}

}  // namespace detail

NAX_RUNTIME_INLINE std::size_t pipeline::state_bytes() const {
  const std::size_t tables = lanes * num_values * sizeof(void*);
  return tables + stages.size() * (sizeof(std::uint32_t) + 1 + tiles);
}

NAX_RUNTIME_INLINE std::optional<pipeline> plan_pipeline(
    const graph::program& p, const specialization_recipe& recipe, std::uint32_t c,
    std::span<const nax::shape> shapes, std::span<const std::size_t> value_bytes,
    std::size_t threads, graph::pipelining mode, std::size_t tile) {
  if (mode == graph::pipelining::off) return std::nullopt;
  const graph::pipeline_chain& chain = p.pipelines[c];
  const nax::shape& first = shapes[p.steps[chain.steps.front()].result];
  const std::size_t n = first[0].extent();
  if (n < 2) return std::nullopt;
  // A product (a one-row tile of it would sum in another order, see the file comment), and
  // one that reads an operand whole in every tile (weights, packed again per tile).
  bool product = false, shared_operand = false;
  for (std::uint32_t k : recipe.chain_products[c]) {
    const graph::program_step& s = p.steps[k];
    product = true;
    shared_operand = shared_operand || !detail::has_axis_first(shapes[s.args[0]], chain.axis) ||
                     !detail::has_axis_first(shapes[s.args[1]], chain.axis);
  }
  // Bytes per position of the tile axis: of everything a tile touches, and of the rings.
  // (Each value's bytes are a multiple of n: one division at the end.)
  std::size_t row_bytes = 0, ring_row_bytes = 0;
  for (const specialization_recipe::chain_value& cv : recipe.chain_values[c]) {
    const std::size_t b = value_bytes[cv.value];
    row_bytes += b;
    if (cv.ring) ring_row_bytes += b;
  }
  row_bytes /= n;
  ring_row_bytes /= n;
  const std::size_t l2 = nax::machine_caches().l2 ? nax::machine_caches().l2 : 256 * 1024;
  threads = std::max<std::size_t>(threads, 1);
  pipeline pl;
  pl.chain = c;
  pl.extent = n;
  if (tile) {
    pl.tile = std::min(tile, n);
    if (product) pl.tile = std::max<std::size_t>(pl.tile, 2);
  } else {
    // A lane's tile of everything fits in half of its L2, but a product that reads an operand
    // whole has tiles of pipeline_product_rows or more, to pay for packing it again; then the
    // tiles are evened out (1000 = 2 x 500, not 512 + 488).
    const std::size_t fits = std::max<std::size_t>(1, l2 / 2 / std::max<std::size_t>(row_bytes, 1));
    const std::size_t tiles = shared_operand && fits < detail::pipeline_product_rows
                                  ? std::max<std::size_t>(1, n / detail::pipeline_product_rows)
                                  : (n + fits - 1) / fits;
    pl.tile = (n + tiles - 1) / tiles;
  }
  pl.tiles = (n + pl.tile - 1) / pl.tile;
  pl.last = n - (pl.tiles - 1) * pl.tile;
  if (product && pl.last == 1) {  // no one-row product: the last tile takes the row
    --pl.tiles;
    pl.last = pl.tile + 1;
  }
  if (pl.tiles < 2) return std::nullopt;
  pl.lanes = std::min(threads, pl.tiles);
  if (mode == graph::pipelining::automatic && (ring_row_bytes * n <= l2 || pl.tiles < 2 * pl.lanes))
    return std::nullopt;
  pl.slots = pl.lanes;
  pl.num_values = p.values.size();
  return pl;
}

NAX_RUNTIME_INLINE void build_pipeline(pipeline& pl, const graph::program& p,
                                       const specialization_recipe& recipe,
                                       std::span<const nax::shape> shapes, std::size_t threads,
                                       std::vector<scratch_request>& scratch,
                                       std::vector<std::size_t>& ring_of) {
  const graph::pipeline_chain& chain = p.pipelines[pl.chain];
  const std::size_t n = pl.extent, most = std::max(pl.tile, pl.last);
  std::vector<nax::shape> tile_shapes(shapes.begin(), shapes.end()), last_shapes;
  std::vector<char> ring(p.values.size(), 0);
  const bool rings = pl.slots * most < n;  // else a ring would be the whole buffer, or more
  for (const specialization_recipe::chain_value& cv : recipe.chain_values[pl.chain]) {
    const graph::value_index v = cv.value;
    const std::size_t row = shapes[v].num_bytes() / n;
    pipeline::tiled_value t{v, row * pl.tile, false};
    if (rings && cv.ring) {
      t.ring = true;
      ring[v] = 1;
      t.stride = row * most;
      ring_of[v] = t.stride * pl.slots;
      pl.ring_bytes += ring_of[v];
      pl.whole_bytes += shapes[v].num_bytes();
    }
    pl.values.push_back(t);
    tile_shapes[v] = detail::with_first_extent(shapes[v], pl.tile);
  }
  if (pl.last != pl.tile) {
    last_shapes = tile_shapes;
    for (const pipeline::tiled_value& t : pl.values)
      last_shapes[t.value] = detail::with_first_extent(shapes[t.value], pl.last);
  }

  // Stage j reads stage i's tile t if it reads a value stage i computes; stage i's ring slots
  // are free again once every stage reading them has finished the tile before.
  std::vector<std::uint32_t> stage_of(p.values.size(), ~std::uint32_t{0});
  const nax::detail::planning_threads_scope planning(std::max<std::size_t>(1, threads / pl.lanes));
  for (std::uint32_t j = 0; j < chain.steps.size(); ++j) {
    const graph::program_step& s = p.steps[chain.steps[j]];
    pipeline::stage st;
    st.step = chain.steps[j];
    const std::size_t before = scratch.size();
    st.kernel = make_step_kernel(p, s, tile_shapes, scratch);
    if (!last_shapes.empty()) st.last_kernel = make_step_kernel(p, s, last_shapes, scratch);
    st.exclusive = scratch.size() != before;
    for (std::size_t r = before; r < scratch.size(); ++r) scratch[r].step = chain.steps.front();
    for (graph::value_index a : s.args) {
      const std::uint32_t i = stage_of[a];
      if (i == ~std::uint32_t{0}) continue;
      if (std::find(st.after.begin(), st.after.end(), i) == st.after.end()) st.after.push_back(i);
      if (ring[a] && std::find(pl.stages[i].reuse.begin(), pl.stages[i].reuse.end(), j) ==
                         pl.stages[i].reuse.end())
        pl.stages[i].reuse.push_back(j);
    }
    stage_of[s.result] = j;
    for (graph::value_index e : s.extra_results) stage_of[e] = j;
    pl.stages.push_back(std::move(st));
  }
}

NAX_RUNTIME_INLINE void run_pipeline(const pipeline& pl, const graph::program& p,
                                     void* const* values, std::byte* arena, nax::trace* tr,
                                     std::uint64_t run_id) {
  const std::size_t stages = pl.stages.size(), tiles = pl.tiles, nv = pl.num_values;
  std::byte* const state = arena + pl.state;
  void** const tables = reinterpret_cast<void**>(state);
  auto* const next = reinterpret_cast<std::uint32_t*>(state + pl.lanes * nv * sizeof(void*));
  auto* const busy = reinterpret_cast<unsigned char*>(next + stages);  // exclusive stages running
  unsigned char* const done = busy + stages;                           // per stage and tile
  std::memset(next, 0, stages * (sizeof(std::uint32_t) + 1 + tiles));

  std::mutex m;
  std::condition_variable cv;
  std::size_t finished = 0, running = 0;
  std::exception_ptr error;
  const std::size_t total = stages * tiles;

  // Whether stage s may start tile t = next[s] (with `m` held).
  auto ready = [&](std::size_t s) {
    const std::size_t t = next[s];
    if (t >= tiles) return false;
    const pipeline::stage& st = pl.stages[s];
    if (busy[s]) return false;
    for (std::uint32_t i : st.after)
      if (!done[i * tiles + t]) return false;
    if (t >= pl.slots)
      for (std::uint32_t r : st.reuse)
        if (!done[r * tiles + t - pl.slots]) return false;
    return true;
  };

  auto lane = [&](std::size_t l) {
    void** const table = tables + l * nv;
    std::memcpy(table, values, nv * sizeof(void*));
    std::unique_lock lock(m);
    for (;;) {
      if (finished == total || error) break;
      std::size_t s = stages;
      for (std::size_t i = stages; i-- > 0;)  // the deepest ready stage first
        if (ready(i)) {
          s = i;
          break;
        }
      if (s == stages) {
        cv.wait(lock);
        continue;
      }
      const std::size_t t = next[s]++;
      const pipeline::stage& st = pl.stages[s];
      busy[s] = st.exclusive;
      ++running;
      lock.unlock();
      try {
        for (const pipeline::tiled_value& v : pl.values)
          table[v.value] =
              static_cast<std::byte*>(values[v.value]) + v.stride * (v.ring ? t % pl.slots : t);
        const kernels::step_kernel& k =
            t + 1 == tiles && st.last_kernel ? *st.last_kernel : *st.kernel;
        if (tr == nullptr) [[likely]] {
          k.run(table, arena);
        } else {
          const double start = tr->now_us();
          k.run(table, arena);
          tr->record(graph::name(p.steps[st.step].kind()), st.step, pl.group, run_id, start,
                     tr->now_us(), static_cast<std::int64_t>(t));
        }
      } catch (...) {
        lock.lock();
        if (!error) error = std::current_exception();
        --running;
        cv.notify_all();
        break;
      }
      lock.lock();
      done[s * tiles + t] = 1;
      busy[s] = 0;
      --running;
      ++finished;
      cv.notify_all();
    }
    // (A lane that finds nothing ready while nothing runs cannot happen: the earliest
    // unfinished tile's earliest unfinished stage is always ready.)
  };
  nax::detail::global_pool().run(static_cast<std::size_t>(nax::num_threads()), pl.lanes, lane);
  if (error) std::rethrow_exception(error);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
