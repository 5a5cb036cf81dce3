#pragma once
// What the builder tests ask of a value's node: its shape as text, its kind, and whether two
// values are one node once common subexpressions are merged.

#include <nax/graph/builder.hpp>
#include <nax/graph/passes/cse.hpp>

#include <string>

namespace node_checks {

namespace g = nax::graph;

inline std::string str(const g::value& v) { return v.shape().to_string(); }

inline g::op_kind kind(const g::value& v) { return v.owner().at(v.id()).kind(); }

// Whether a and b are one node once the CSE pass has run.
inline bool same(const g::value& a, const g::value& b) {
  g::ir ir = a.owner().graph();
  ir.set_outputs({a.id(), b.id()});
  g::passes::cse(ir);
  return ir.outputs()[0] == ir.outputs()[1];
}

}  // namespace node_checks
