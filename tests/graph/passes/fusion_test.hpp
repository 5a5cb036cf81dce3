#pragma once
// What the tests of the fusion passes share: compiling a builder's outputs to a program, the
// steps' kinds as text, and checking every fused step's decomposition against the builder.
#include <nax/graph/compile_program.hpp>
#include <nax/graph/ops.hpp>

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace fusion_test {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

inline const dim h = dim::named("h", 8), k = dim::named("k", 5);

inline shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

inline g::program compile_steps(const g::builder& b, std::initializer_list<g::value> outs,
                                g::compile_options o = {}) {
  return g::compile_program(b, std::span(outs.begin(), outs.size()), o);
}

// The kinds of the steps, in order, as text: "fused_elementwise, reduce".
inline std::string kinds(const g::program& p) {
  std::string r;
  for (const g::program_step& s : p.steps) {
    if (!r.empty()) r += ", ";
    r += s.fused ? g::name(s.fused->kind) : g::name(s.kind());
  }
  return r;
}

// Every fused step's decomposition against the builder: each op is its node, each operand the
// node that node reads (a step argument's value, or an earlier op), results the step's values.
inline void check_decompositions(const g::builder& b, const g::program& p) {
  for (const g::program_step& s : p.steps) {
    if (!s.fused) continue;
    const g::decomposition& d = *s.fused;
    REQUIRE(d.num_args == s.args.size());
    for (std::size_t j = 0; j < d.ops.size(); ++j) {
      const g::node& op = d.ops[j];
      const g::node& n = b.at(op.origin);
      CHECK(op.op == n.op);
      CHECK(op.shape == n.shape);
      REQUIRE(op.inputs.size() == n.inputs.size());
      for (std::size_t a = 0; a < op.inputs.size(); ++a) {
        const std::uint32_t in = op.inputs[a];
        const g::node_id want = n.inputs[a];
        if (d.is_arg(in)) {
          CHECK(p.values[s.args[in]].origin == want);
        } else {
          REQUIRE(in - d.num_args < j);  // an earlier op
          CHECK(d.ops[in - d.num_args].origin == want);
        }
      }
    }
    REQUIRE(d.results.size() == 1 + s.extra_results.size());
    CHECK(d.ops[d.results[0]].origin == p.values[s.result].origin);
    for (std::size_t r = 0; r < s.extra_results.size(); ++r)
      CHECK(d.ops[d.results[1 + r]].origin == p.values[s.extra_results[r]].origin);
  }
}

}  // namespace fusion_test
