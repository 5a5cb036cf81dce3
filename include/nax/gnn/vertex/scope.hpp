#pragma once
// The scopes of a vertex program's values (seed "Variable and Operation Type Scoping"). A program
// is written for one destination vertex v; each value it computes lives in one scope:
//
//   node    v's own value: one per destination (v.dst(h), an aggregation, and what is made of them)
//   source  the source's value, one per in-edge u -> v (v.src(h))
//   edge    a value per in-edge (v.edge(w), and anything mixing source with node values)
//   param   the same for every vertex (v.param(a), scalars)
//
// An op's result is in its operands' scope when they share one (param fits any), and in the
// edge scope when they differ. An aggregation takes an edge or source value to a node value.
// The scopes are types, so their rules are compile-time checks: the errors below.

#include <string_view>
#include <type_traits>

#include <nax/core/diagnostics.hpp>
#include <nax/core/fixed_string.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::gnn {

struct node_scope {
  static constexpr fixed_string name = "node";
};
struct source_scope {
  static constexpr fixed_string name = "source";
};
struct edge_scope {
  static constexpr fixed_string name = "edge";
};
struct param_scope {
  static constexpr fixed_string name = "param";
};

/// The scope of an op over operands in scopes A and B.
template <class A, class B>
using join_scope = std::conditional_t<
    std::is_same_v<A, param_scope>, B,
    std::conditional_t<std::is_same_v<B, param_scope> || std::is_same_v<A, B>, A, edge_scope>>;

/// Whether a value of scope S is one value per destination (so a program may return it).
template <class S>
inline constexpr bool is_per_node_scope_v =
    std::is_same_v<S, node_scope> || std::is_same_v<S, param_scope>;

}  // namespace nax::gnn

namespace nax::error {

/// A vertex program returned a value of scope Scope (edge or source: one per in-edge) where
/// one value per node is needed: aggregate it over v's in-edges first (nax::gnn::sum, mean,
/// max, softmax_sum).
template <class Scope>
struct gnn_per_edge_value_used_as_node_value_aggregate_it_first;
/// An aggregation over v's in-edges met a value of scope Scope (node: one per destination, the
/// same on every in-edge). Aggregate edge or source values. (Summed over v's in-edges, a node
/// value x is indeg(v) x: write x * nax::gnn::sum(v.param(1.0f)) if that is what is meant.)
template <class Scope>
struct gnn_aggregation_of_a_per_node_value;
/// A vertex program's operands have different element types.
template <class... ElementTypes>
struct gnn_operands_have_different_element_types;

}  // namespace nax::error
