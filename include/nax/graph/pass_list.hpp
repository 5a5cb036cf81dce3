#pragma once
// The passes level 1 runs, in order, as compile_options choose them:
//
//   dead_code -> cse -> fuse_layer_norm -> fuse_softmax -> fuse_dense -> fuse_elementwise
//       -> fuse_reduce
//
// Dead nodes dropped first, then common subexpressions, so that the patterns see one node where a
// model spelled one value twice; the patterns (kernels that exist) before the generic elementwise
// groups, which would otherwise swallow their elementwise parts; last, the reductions over
// finished groups.

#include <nax/core/isa.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/pass.hpp>
#include <nax/graph/passes/cse.hpp>
#include <nax/graph/passes/dead_code.hpp>
#include <nax/graph/passes/fuse_dense.hpp>
#include <nax/graph/passes/fuse_elementwise.hpp>
#include <nax/graph/passes/fuse_layer_norm.hpp>
#include <nax/graph/passes/fuse_reduce.hpp>
#include <nax/graph/passes/fuse_softmax.hpp>

namespace nax::NAX_ISA::graph {

/// The passes compile runs with `options`, in order.
inline pass_list make_pass_list(const compile_options& options = {}) {
  pass_list list{{"dead_code", &passes::dead_code}, {"cse", &passes::cse}};
  if (!options.fusion) return list;
  const fusion_options& f = options.fuse;
  if (f.layer_norm) list.push_back({"fuse_layer_norm", &passes::fuse_layer_norm});
  if (f.softmax) list.push_back({"fuse_softmax", &passes::fuse_softmax});
  if (f.dense) list.push_back({"fuse_dense", &passes::fuse_dense});
  if (f.elementwise) list.push_back({"fuse_elementwise", &passes::fuse_elementwise});
  if (f.reduce) list.push_back({"fuse_reduce", &passes::fuse_reduce});
  return list;
}

}  // namespace nax::graph
