#pragma once
// A pass of level 1: a named function that reads the graph and rewrites it in place, leaving it
// in topological order (graph/ir.hpp). The passes compile runs are a list (graph/pass_list.hpp),
// as in XLA's pass pipelines and TVM's Sequential: later passes (autodiff, scheduling) are more
// entries of it.

#include <string_view>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/graph/ir.hpp>

namespace nax::NAX_ISA::graph {

struct pass {
  std::string_view name;
  void (*run)(ir& g);
};

using pass_list = std::vector<pass>;

}  // namespace nax::graph
