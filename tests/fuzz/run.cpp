// Fuzz target: compiling and running small random graphs (nax/graph, nax/runtime). The bytes
// give a graph over a few small axes (graph_bytes.hpp, runnable), its outputs, the options of a
// fused compile (fusion kinds, steps side by side, pipelines and their tile), a thread count for
// each executable, a binding and the inputs' values, and perhaps a wrong input (another dtype,
// rank, static extent, an extent past its bound, two values for one axis, one input short).
// It is compiled twice, fused and unfused (`.fusion = false`, one step at a time, no pipelines),
// and both run on the same inputs:
//  - both throw nax::shape_error, or neither does (a wrong input must be refused by both, and the
//    reference's binding check agrees that it is wrong);
//  - their results have the same shapes and the same bits (docs/runtime.md and docs/fusion.md:
//    fusion, thread counts, steps side by side and pipelines change no result), NaNs aside,
//    whose payloads are not specified;
//  - both match the plain reference of tests/runtime/reference.hpp (scalar loops in double,
//    only the nodes the outputs need) within a tolerance relative to the largest value those
//    nodes take, where the reference's values stay finite and moderate (below 10^4);
//  - running again (a cache hit) and into given outputs (run(inputs, outputs)) gives the same
//    bits.
// The native tier is off (NAX_NATIVE=off): it would start a compiler for each new program.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/executable.hpp>

#include "../runtime/reference.hpp"
#include "bytes.hpp"
#include "graph_bytes.hpp"

namespace {

using fuzz::fail;
namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

// A value for element i of a tensor of type t: small numbers on a coarse grid (sums and
// differences are exact), rarely a zero, an infinity or a NaN.
double element(fuzz::bytes& in, dtype t) {
  const std::uint8_t c = in.byte();
  if (t == dtype::boolean || t == dtype::u8) return c & 1;
  if (t == dtype::i32 || t == dtype::i64) return static_cast<double>(c % 7) - 3;
  if (c == 255) return in.real();
  return (static_cast<double>(c) - 127) / 32;
}

dyn_tensor make_input(fuzz::bytes& in, const shape& s) {
  dyn_tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double v = element(in, s.dtype());
    switch (s.dtype()) {
      case dtype::f32: static_cast<float*>(t.data())[i] = static_cast<float>(v); break;
      case dtype::f64: static_cast<double*>(t.data())[i] = v; break;
      case dtype::i32:
        static_cast<std::int32_t*>(t.data())[i] = static_cast<std::int32_t>(v);
        break;
      case dtype::i64:
        static_cast<std::int64_t*>(t.data())[i] = static_cast<std::int64_t>(v);
        break;
      case dtype::u8:
      case dtype::boolean: static_cast<std::uint8_t*>(t.data())[i] = static_cast<std::uint8_t>(v);
    }
  }
  return t;
}

// Every named dynamic axis of the parameters bound (batch 0..5, seq 0..8, others 0..4), then
// perhaps one input made wrong. Returns the inputs.
std::vector<dyn_tensor> make_inputs(fuzz::bytes& in, std::span<const g::value> params) {
  nax::bindings b;
  b.set("batch", in.range(0, 5));
  b.set("seq", in.range(0, 8));
  std::vector<shape> shapes;
  for (const g::value& p : params) {
    for (const dim& d : p.shape().dims())
      if (d.is_dynamic() && d.has_name() && !b.find(d.name()))
        b.set(d.name(), std::min<std::size_t>(in.range(0, 4), d.bound()));
    shapes.push_back(p.shape().resolve(b));
  }
  const std::uint8_t wrong = in.byte();
  const std::size_t which = in.below(shapes.size());
  if (wrong >= 200 && !shapes.empty()) {
    shape& s = shapes[which];
    std::vector<dim> d(s.dims().begin(), s.dims().end());
    switch (wrong % 6) {
      case 0: s = shape(static_cast<dtype>((static_cast<int>(s.dtype()) + 1) % 6), s.dims()); break;
      case 1:
        if (!d.empty()) d.pop_back();
        s = shape(s.dtype(), std::span<const dim>(d));
        break;
      case 2:
        d.push_back(dim(2));
        s = shape(s.dtype(), std::span<const dim>(d));
        break;
      default:
        if (!d.empty()) {  // another extent for one axis (past a bound, or another static one)
          const std::size_t i = in.below(d.size());
          d[i] = dim::named(d[i].name(), d[i].extent() + in.range(1, 9));
          s = shape(s.dtype(), std::span<const dim>(d));
        }
    }
  }
  // Every dim made concrete (an unresolved one: its name, some extent).
  std::vector<dyn_tensor> inputs;
  for (shape& s : shapes) {
    std::vector<dim> d;
    for (const dim& x : s.dims()) d.push_back(x.is_static() ? x : dim::named(x.name(), 1));
    inputs.push_back(make_input(in, shape(s.dtype(), std::span<const dim>(d))));
  }
  if (wrong == 199 && !inputs.empty()) inputs.pop_back();
  return inputs;
}

bool same_bits(const dyn_tensor& a, const dyn_tensor& b) {
  if (!(a.shape() == b.shape())) return false;
  if (a.bytes() == 0) return true;
  if (std::memcmp(a.data(), b.data(), a.bytes()) == 0) return true;
  // NaNs' payloads and signs are not specified: any NaN equals any NaN.
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = reference::read_any(a, i), y = reference::read_any(b, i);
    const bool both_nan = std::isnan(x) && std::isnan(y);
    if (!both_nan && std::memcmp(static_cast<const char*>(a.data()) + i * nax::size_of(a.dtype()),
                                 static_cast<const char*>(b.data()) + i * nax::size_of(b.dtype()),
                                 nax::size_of(a.dtype())) != 0)
      return false;
  }
  return true;
}

struct outcome {
  bool refused = false;
  std::string why;
  std::vector<dyn_tensor> results;
};

outcome run(nax::executable& ex, std::span<const dyn_tensor> inputs, int threads) {
  nax::set_num_threads(threads);
  outcome o;
  try {
    o.results = ex.run(inputs);
  } catch (const nax::shape_error& e) {
    o.refused = true;
    o.why = e.what();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool native_off = [] { return setenv("NAX_NATIVE", "off", 1) == 0; }();
  (void)native_off;
  fuzz::bytes in(data, size);
  fuzz::decoded_graph dg;
  fuzz::graph_decoder(in, dg, {.runnable = true, .max_ops = 14}).decode();
  // The outputs: the last value made, and perhaps one or two others.
  std::vector<g::value> outs{dg.pool.back()};
  for (std::size_t i = in.range(0, 2); i > 0; --i)
    outs.push_back(dg.pool[in.below(dg.pool.size())]);

  g::compile_options fused_options;
  const std::uint8_t kinds = in.byte();
  fused_options.fuse.elementwise = !(kinds & 1);
  fused_options.fuse.dense = !(kinds & 2);
  fused_options.fuse.softmax = !(kinds & 4);
  fused_options.fuse.layer_norm = !(kinds & 8);
  fused_options.fuse.reduce = !(kinds & 16);
  fused_options.parallel_steps = static_cast<g::step_parallelism>(in.range(0, 2));
  fused_options.pipeline = static_cast<g::pipelining>(in.range(0, 2));
  fused_options.pipeline_tile = in.range(0, 3);
  fused_options.max_specializations = in.range(1, 3);
  fused_options.native.policy = g::native_policy::off;
  g::compile_options plain_options;
  plain_options.fusion = false;
  plain_options.parallel_steps = g::step_parallelism::off;
  plain_options.pipeline = g::pipelining::off;
  plain_options.native.policy = g::native_policy::off;
  const int fused_threads = static_cast<int>(in.range(1, 2)), plain_threads = 3 - fused_threads;

  std::optional<nax::executable> fused, plain;
  bool fused_refused = false, plain_refused = false;
  try {
    fused.emplace(g::compile(dg.b, outs, fused_options));
  } catch (const nax::shape_error&) {
    fused_refused = true;
  }
  try {
    plain.emplace(g::compile(dg.b, outs, plain_options));
  } catch (const nax::shape_error&) {
    plain_refused = true;
  }
  if (fused_refused != plain_refused)
    fail("compile: fused ", fused_refused ? "refused" : "took", " the graph, unfused did not",
         fuzz::describe(dg.b, outs));
  if (fused_refused) return 0;

  for (int round = 0; round < 2 && !in.empty(); ++round) {
    const std::vector<dyn_tensor> inputs = make_inputs(in, dg.params);
    const outcome a = run(*fused, inputs, fused_threads);
    const outcome b = run(*plain, inputs, plain_threads);
    if (a.refused != b.refused)
      fail("run: fused ", a.refused ? "refused" : "took", " the inputs, unfused ",
           b.refused ? "refused" : "took", " them: ", a.why, b.why, fuzz::describe(dg.b, outs));
    // Inputs the binding check refuses are refused by the runs.
    bool inputs_fit = inputs.size() == dg.params.size();
    if (inputs_fit) {
      std::vector<nax::binding_source> sources;
      for (std::size_t k = 0; k < inputs.size(); ++k)
        sources.push_back({"", dg.params[k].shape(), inputs[k].shape()});
      try {
        (void)nax::extract_bindings(std::span<const nax::binding_source>(sources));
      } catch (const nax::shape_error&) {
        inputs_fit = false;
      }
    }
    if (!inputs_fit && !a.refused)
      fail("run took inputs that do not fit", fuzz::describe(dg.b, outs));
    if (a.refused) continue;
    if (a.results.size() != outs.size() || b.results.size() != outs.size())
      fail("run gave ", a.results.size(), " results for ", outs.size());
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (!same_bits(a.results[i], b.results[i]))
        fail("output ", i, " (", a.results[i].to_string(), "): fused and unfused differ",
             fuzz::describe(dg.b, outs), "\n  fused: ", fused->to_dot());
    // Again (a hit), and into given outputs.
    const outcome again = run(*fused, inputs, fused_threads);
    if (again.refused) fail("a second run refused what the first took: ", again.why);
    std::vector<dyn_tensor> given;
    for (const dyn_tensor& r : a.results) given.push_back(dyn_tensor(r.shape()));
    fused->run(inputs, given);
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (!same_bits(again.results[i], a.results[i]) || !same_bits(given[i], a.results[i]))
        fail("output ", i, ": a second run differs", fuzz::describe(dg.b, outs));
    // The reference, where it stays finite and moderate.
    std::vector<reference::dense> want;
    try {
      want = reference::evaluate(dg.b, inputs, outs);
    } catch (const nax::shape_error& e) {
      fail("the runs took inputs the reference refuses: ", e.what(), fuzz::describe(dg.b, outs));
    }
    // (The error a float computation may make grows with the magnitudes it goes through: the
    // tolerance is relative to the largest value of any node the outputs need.)
    bool moderate = true;
    double largest = 0;
    for (const reference::dense& d : want)
      for (double v : d.v) {
        moderate = moderate && std::isfinite(v) && std::abs(v) < 1e4;
        largest = std::max(largest, std::abs(v));
      }
    if (!moderate) continue;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const reference::dense& w = want[outs[i].id()];
      if (!(a.results[i].shape() == w.shape))
        fail("output ", i, " is ", a.results[i].to_string(), ", the reference's ",
             w.shape.to_string(), fuzz::describe(dg.b, outs));
      const dtype t = a.results[i].dtype();
      const double tolerance = (t == dtype::f32   ? 2e-5
                                : t == dtype::f64 ? 1e-11
                                                  : 0) *
                               (1 + largest);
      const double e = reference::max_error(a.results[i], w);
      if (e > tolerance)
        fail("output ", i, " (", a.results[i].to_string(), ") is ", e, " away from the reference",
             fuzz::describe(dg.b, outs));
    }
  }
  return 0;
}
