#pragma once
// One node of the runtime graph: what it computes (its op's attributes), the nodes it reads,
// and its symbolic shape, inferred when it was built.

#include <cstdint>
#include <memory>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/op.hpp>

namespace nax::NAX_ISA::graph {

using node_id = std::uint32_t;

struct decomposition;

struct node {
  attributes op;
  nax::detail::small_vector<node_id, 3> inputs;
  nax::shape shape;
  /// A fused node's: the ops it replaces, as a graph of their own (graph/decomposition.hpp).
  std::shared_ptr<const decomposition> fused;
  /// The builder node this one stands for (a fused node: the one whose value it computes);
  /// passes rewrite and renumber the graph, this stays.
  node_id origin = 0;

  op_kind kind() const noexcept { return kind_of(op); }
  /// The attributes as op struct A (which they must be).
  template <class A>
  const A& as() const {
    return op.template get<A>();
  }
  template <class A>
  bool is() const noexcept {
    return op.template is<A>();
  }
};

}  // namespace nax::graph
