#pragma once
// The options of nax::graph::compile: the cache's size, the passes level 1 runs, what level 2
// may run side by side and what it may run tile by tile, how many specializations bounded
// axes get (docs/bounded.md), and how many arenas each specialization keeps between runs.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/pass.hpp>

namespace nax::NAX_ISA::graph {

/// Which fusion passes compile runs (each is one pass of graph/passes/).
struct fusion_options {
  bool elementwise = true;  // groups of elementwise ops -> one elementwise program
  bool dense = true;        // dot_general -> add(bias) -> activation -> one GEMM with epilogue
  bool softmax = true;      // softmax from primitives -> the softmax kernel
  bool layer_norm = true;   // layer_norm from primitives -> the layer_norm kernel
  bool reduce = true;       // elementwise group -> reduction over a run of its axes -> one step
};

/// Whether level 2 runs independent steps side by side (runtime/step_schedule.hpp).
enum class step_parallelism {
  off,        // one step at a time, in program order
  automatic,  // where the scheduler's cost model finds it faster
  always,     // every group of ready independent steps, up to the thread count (for tests, and
              // for graphs whose steps the model misjudges)
};

/// Whether level 2 runs chains of steps tile by tile (runtime/pipeline.hpp).
enum class pipelining {
  off,        // every step over whole values
  automatic,  // chains whose intermediates do not fit in the caches, tiled to fit them
  always,     // every chain of two tiles or more (for tests)
};

/// How level 2 specializes for the extents of a bounded axis (`seq<=512`).
enum class size_policy {
  exact,    // one specialization per extent
  buckets,  // one per bucket: an extent is served by the smallest bucket at or above it
  bound,    // one at the bound serves every extent
};

/// A size policy and, for `buckets`, the buckets: ascending positive extents, empty for the
/// powers of two up to the bound (and the bound). Under buckets and bound a specialization holds
/// one memory plan and its arenas, sized for the bucket; the steps of each extent it serves are
/// planned for that extent's real shapes, made on its first run and kept in the specialization,
/// so that no result ever reads a padded position.
struct bounded_sizes {
  size_policy policy = size_policy::exact;
  std::vector<std::size_t> buckets = {};
};

/// Whether level 2 runs fused elementwise groups as native code: each group's program written as
/// C++, compiled by the system's compiler into a shared object and swapped in for the
/// interpreter, with the same bits (runtime/native/, docs/native.md).
enum class native_policy {
  automatic,   // NAX_NATIVE's value (off, background or eager) if it is set, else background
  off,         // the interpreter only
  background,  // the interpreter until a group's step has run `after_runs` times and spent
               // `after_seconds` in the interpreter; then compiled (or loaded from the disk
               // cache) on a background thread, and native from the first run after it is
               // ready. Never blocks a run.
  eager,       // compiled or loaded when a specialization is made, which waits for it
};

struct native_options {
  native_policy policy = native_policy::automatic;
  /// Under background: the runs of a group's step before it is compiled (0: at once, whatever
  /// after_seconds says)...
  std::size_t after_runs = 16;
  /// ... and the wall time those runs must have spent in the interpreter, in seconds (0: the
  /// runs alone decide). Negative: NAX_NATIVE_AFTER_MS if it is set, else 3 s (docs/native.md:
  /// a program that runs for a few seconds never starts the compiler).
  double after_seconds = -1;
};

struct compile_options {
  /// Specializations kept per executable; the least recently used is dropped beyond this.
  std::size_t max_specializations = 64;
  /// The fusion passes: `false` turns them all off, `fuse` each.
  bool fusion = true;
  fusion_options fuse = {};
  /// The passes level 1 runs, in order; empty: the list `fusion` and `fuse` choose
  /// (graph/pass_list.hpp's make_pass_list).
  pass_list passes = {};
  /// Which independent steps level 2 runs side by side.
  step_parallelism parallel_steps = step_parallelism::automatic;
  /// Which chains of steps level 2 runs tile by tile (level 1 finds them only if not `off`).
  pipelining pipeline = pipelining::automatic;
  /// Positions of the tile axis per tile; 0: chosen per binding from the cache sizes.
  std::size_t pipeline_tile = 0;
  /// The size policy of every bounded dynamic axis of the inputs...
  bounded_sizes bounded = {};
  /// ... but these axes, by name (any dynamic axis; `buckets` with a given list also serves an
  /// axis without a bound, extents above the last bucket exactly).
  std::vector<std::pair<std::string, bounded_sizes>> bounded_axes = {};
  /// Under buckets and bound: extents whose steps a specialization keeps (the least recently
  /// used is dropped beyond this).
  std::size_t max_extents_per_specialization = 64;
  /// Whether fused elementwise groups run as native code, and when they are compiled.
  native_options native = {};
  /// The most arenas (memory for a run's intermediates) each specialization keeps alive between
  /// runs, those kept in threads' run slots included; 0: max(4, 2 x the hardware threads)
  /// (runtime::default_max_kept_arenas, runtime/arena_pool.hpp). More concurrent runs than this
  /// still each get an arena, but one returned while more are alive is freed, not kept: warm runs
  /// of up to this many threads allocate nothing, and more threads hold no more than this many.
  std::size_t max_kept_arenas = 0;
};

}  // namespace nax::graph
