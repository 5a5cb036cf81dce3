// Fuzz target: the graph builder and level 1 (nax/graph). The bytes are decoded into parameters
// and a sequence of builder ops with any axes, extents (up to 2^64 - 1), names and attributes
// (graph_bytes.hpp): shape inference must build each node or throw nax::shape_error (random's
// parameters: std::invalid_argument). Then, on what was built:
//  - every node's shape has unique axis names (docs/graph.md), and every node reads earlier ones;
//  - the gradient of a loss made from a value (graph::grad) builds or throws nax::shape_error,
//    and leaves the builder as it was when it throws;
//  - level 1 (compile_program: the passes, lowering, pipeline chains), with fusion and without,
//    and its Graphviz text, succeed or throw nax::shape_error, and give programs whose steps
//    read values computed before them.
// Level 2 (specializing, running) is the run target's: here extents may be too large to run.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/graph/compile_program.hpp>
#include <nax/graph/grad.hpp>
#include <nax/graph/program.hpp>
#include <nax/graph/to_dot.hpp>

#include "bytes.hpp"
#include "graph_bytes.hpp"

namespace {

using fuzz::fail;
namespace g = nax::graph;

void check_nodes(const g::builder& b) {
  for (std::size_t id = 0; id < b.size(); ++id) {
    const g::node& n = b.at(static_cast<g::node_id>(id));
    for (g::node_id in : n.inputs)
      if (in >= id) fail("node ", id, " reads node ", in, ", not made before it");
    const nax::shape& s = n.shape;
    for (std::size_t i = 0; i < s.rank(); ++i)
      if (s[i].has_name() && s.index_of(s[i].name().view()) != i)
        fail("node ", id, " (", g::name(n.kind()), ") has axis '", s[i].name().view(),
             "' twice: ", s.to_string());
  }
}

void check_program(const g::program& p) {
  std::vector<bool> known(p.values.size(), false);
  for (std::size_t v = 0; v < p.values.size(); ++v)
    known[v] =
        p.values[v].role == g::value_role::input || p.values[v].role == g::value_role::constant;
  for (const g::program_step& s : p.steps) {
    for (std::size_t a : s.args)
      if (a >= known.size() || !known[a]) fail("a step reads value ", a, " before it is made");
    if (s.result >= known.size()) fail("a step writes value ", s.result, " that is not one");
    known[s.result] = true;
    for (std::size_t r : s.extra_results) {
      if (r >= known.size()) fail("an extra result is not a value");
      known[r] = true;
    }
  }
  for (std::size_t o : p.outputs)
    if (o >= known.size() || !known[o]) fail("output value ", o, " is never made");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::bytes in(data, size);
  fuzz::decoded_graph dg;
  fuzz::graph_decoder(in, dg, {.runnable = false, .max_ops = 24}).decode();
  check_nodes(dg.b);

  // A loss of a value and its gradient by some values.
  const g::value y = dg.pool[in.below(dg.pool.size())];
  std::vector<g::value> wrt;
  for (std::size_t i = in.range(1, 3); i > 0; --i) wrt.push_back(dg.pool[in.below(dg.pool.size())]);
  std::vector<g::value> outputs{dg.pool.back()};
  const std::size_t before = dg.b.size();
  try {
    std::vector<g::axis_ref> all;
    for (std::size_t i = 0; i < y.shape().rank(); ++i) all.push_back(i);
    const g::value loss = dg.b.reduce(nax::ops::reduce_kind::sum, y, all);
    const std::size_t with_loss = dg.b.size();
    try {
      const std::vector<g::value> grads = g::grad(loss, wrt);
      if (grads.size() != wrt.size()) fail("grad gave ", grads.size(), " gradients");
      for (std::size_t i = 0; i < wrt.size(); ++i)
        if (!(grads[i].shape() == wrt[i].shape()))
          fail("a gradient of ", wrt[i].shape().to_string(), " is ", grads[i].shape().to_string());
      outputs.push_back(loss);
      outputs.insert(outputs.end(), grads.begin(), grads.end());
    } catch (const nax::shape_error& e) {
      if (dg.b.size() != with_loss)
        fail("a grad that threw added nodes: ", e.what(), fuzz::describe(dg.b, wrt));
    }
  } catch (const nax::shape_error&) {
    if (dg.b.size() != before) fail("a reduce that threw added a node");
  }
  check_nodes(dg.b);

  // Level 1, fused and not.
  if (in.flag()) outputs.push_back(dg.pool[in.below(dg.pool.size())]);
  for (const bool fusion : {true, false}) {
    g::compile_options options;
    options.fusion = fusion;
    options.pipeline = in.flag() ? g::pipelining::always : g::pipelining::automatic;
    try {
      const g::program p = g::compile_program(dg.b, outputs, options);
      check_program(p);
      (void)g::to_dot(p);
    } catch (const nax::shape_error&) {
    }
  }
  return 0;
}
