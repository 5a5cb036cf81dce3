#pragma once
// The options of nax::graph::compile: the cache's size, and the passes level 1 runs.

#include <cstddef>

#include <nax/graph/pass.hpp>

namespace nax::graph {

/// Which fusion passes compile runs (each is one pass of graph/passes/).
struct fusion_options {
  bool elementwise = true;      // groups of elementwise ops -> one elementwise program
  bool dense = true;            // dot_general -> add(bias) -> activation -> one GEMM with epilogue
  bool softmax = true;          // softmax from primitives -> the softmax kernel
  bool layer_norm = true;       // layer_norm from primitives -> the layer_norm kernel
  bool reduce = true;           // elementwise group -> reduction over a run of its axes -> one step
  bool offered_kernels = true;  // a group left as nax::jit traced it -> its compiled loop
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
};

}  // namespace nax::graph
