// The fused reduction kernel against index loops in double: tanh(x * 0.5 + bias) (bias read
// broadcast along the inner axes) or exp(x) * 0.25 (every input dense), reduced over the middle of
// [outer, reduced, inner], for the geometries that take each of its paths; results equal for
// every thread count.
#include <nax/kernels/fused_reduce.hpp>
#include <nax/kernels/reduce.hpp>

#include <doctest/doctest.h>

#include "support/sanitizers.hpp"
#include "support/threads.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>

namespace k = nax::kernels;
using nax::dtype;
using operand = k::elementwise_operand;

namespace {

struct geometry {
  std::size_t outer, reduced, inner;
};

template <class T>
std::vector<T> pattern(std::size_t n, std::size_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(int((i * 7919 + seed * 31 + 13) % 101) - 50) / T(25);
  return x;
}

// with_bias: tanh(x * 0.5 + bias[inner]); else exp(x) * 0.25.
struct problem {
  bool with_bias;
  geometry g;

  template <class T>
  k::fused_reduce_plan plan(nax::ops::reduce_kind kind) const {
    k::elementwise_program p;
    const std::size_t ext[3] = {g.outer, g.reduced, g.inner};
    std::vector<std::ptrdiff_t> strides = {std::ptrdiff_t(g.reduced * g.inner),
                                           std::ptrdiff_t(g.inner), 1};
    p.inputs = {nax::dtype_of<T>, nax::dtype_of<T>};
    if (with_bias) {  // inputs: x, bias, the scalar 0.5
      p.inputs.push_back(nax::dtype_of<T>);
      strides.insert(strides.end(), {0, 0, 1, 0, 0, 0});
      const operand m = p.append(nax::ops::id::mul, {operand::input(0), operand::input(2)});
      const operand a = p.append(nax::ops::id::add, {m, operand::input(1)});
      p.append(nax::ops::id::tanh, {a});
    } else {  // inputs: x, the scalar 0.25
      strides.insert(strides.end(), {0, 0, 0});
      const operand e = p.append(nax::ops::id::exp, {operand::input(0)});
      p.append(nax::ops::id::mul, {e, operand::input(1)});
    }
    p.outputs = {static_cast<std::uint32_t>(p.instructions.size() - 1)};
    return k::plan_fused_reduce(k::plan_elementwise(p, ext, strides), kind, g.outer, g.reduced,
                                g.inner);
  }

  template <class T>
  double value(const std::vector<T>& x, const std::vector<T>& bias, std::size_t i) const {
    if (with_bias) return std::tanh(double(x[i]) * 0.5 + double(bias[i % g.inner]));
    return std::exp(double(x[i])) * 0.25;
  }

  template <class T>
  std::vector<double> reference(const std::vector<T>& x, const std::vector<T>& bias,
                                nax::ops::reduce_kind kind) const {
    std::vector<double> out(g.outer * g.inner);
    for (std::size_t a = 0; a < g.outer; ++a)
      for (std::size_t c = 0; c < g.inner; ++c) {
        double acc = kind == nax::ops::reduce_kind::max   ? -1e300
                     : kind == nax::ops::reduce_kind::min ? 1e300
                                                          : 0;
        for (std::size_t r = 0; r < g.reduced; ++r) {
          const double v = value(x, bias, (a * g.reduced + r) * g.inner + c);
          acc = kind == nax::ops::reduce_kind::max   ? std::max(acc, v)
                : kind == nax::ops::reduce_kind::min ? std::min(acc, v)
                                                     : acc + v;
        }
        out[a * g.inner + c] = kind == nax::ops::reduce_kind::mean ? acc / double(g.reduced) : acc;
      }
    return out;
  }

  template <class T>
  std::vector<T> run(const k::fused_reduce_plan& p, const std::vector<T>& x,
                     const std::vector<T>& bias) const {
    const T scalar = with_bias ? T(0.5) : T(0.25);
    const void* in[3] = {x.data(), with_bias ? static_cast<const void*>(bias.data()) : &scalar,
                         &scalar};
    std::vector<T> out(g.outer * g.inner, T(-7));
    k::run_fused_reduce(p, in, out.data());
    return out;
  }

  // The program's result materialized by the elementwise kernel, then reduced by the plain
  // reduction: what the unfused graph computes.
  template <class T>
  std::vector<T> unfused(const std::vector<T>& x, const std::vector<T>& bias,
                         nax::ops::reduce_kind kind) const {
    const k::fused_reduce_plan p = plan<T>(kind);
    const T scalar = with_bias ? T(0.5) : T(0.25);
    const void* in[3] = {x.data(), with_bias ? static_cast<const void*>(bias.data()) : &scalar,
                         &scalar};
    std::vector<T> full(g.outer * g.reduced * g.inner), out(g.outer * g.inner);
    void* outs[1] = {full.data()};
    k::run_elementwise(p.program, in, outs);
    const std::size_t ext[3] = {g.outer, g.reduced, g.inner}, middle[1] = {1};
    k::run_reduce(k::plan_reduce(nax::dtype_of<T>, kind, ext, middle), full.data(), out.data());
    return out;
  }
};

using keep_num_threads = nax_test::threads_guard;

constexpr nax::ops::reduce_kind all_kinds[] = {
    nax::ops::reduce_kind::sum, nax::ops::reduce_kind::mean, nax::ops::reduce_kind::max,
    nax::ops::reduce_kind::min};

}  // namespace

TEST_CASE_TEMPLATE("fused reduction over [outer, reduced, inner]: every path, every kind", T, float,
                   double) {
  keep_num_threads keep;
  const geometry geometries[] = {
      {5, 37, 1},      // trailing: one chunk
      {3000, 13, 1},   // trailing: several chunks
      {1, 1, 1},       // one element
      {7, 50, 16},     // whole short rows, several per pass
      {40, 3, 33},     // many items
      {1, 20000, 16},  // one item of much work
      {2, 9, 5000},    // rows longer than a buffer: pieces
      {1, 64, 4100},   // few items: narrower pieces
      {3, 1, 70},      // nothing reduced but one row
  };
  for (bool with_bias : {true, false}) {
    for (const geometry& g : geometries) {
      CAPTURE(with_bias);
      CAPTURE(g.outer);
      CAPTURE(g.reduced);
      CAPTURE(g.inner);
      const problem pr{with_bias, g};
      const std::vector<T> x = pattern<T>(g.outer * g.reduced * g.inner, 1);
      const std::vector<T> bias = pattern<T>(g.inner, 2);
      for (nax::ops::reduce_kind kind : all_kinds) {
        CAPTURE(nax::ops::name(kind));
        const k::fused_reduce_plan p = pr.plan<T>(kind);
        nax::set_num_threads(2);
        const std::vector<T> got = pr.run(p, x, bias);
        const std::vector<double> want = pr.reference(x, bias, kind);
        REQUIRE(got.size() == want.size());
        const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
        double worst = 0;
        for (std::size_t i = 0; i < want.size(); ++i)
          worst = std::max(worst, std::abs(double(got[i]) - want[i]) / (1 + std::abs(want[i])));
        CHECK(worst < tol);
        nax::set_num_threads(1);
        const std::vector<T> one = pr.run(p, x, bias);
        CHECK(std::memcmp(one.data(), got.data(), got.size() * sizeof(T)) == 0);
      }
    }
  }
}

TEST_CASE("fused reduction: the plan's cuts for each path") {
  const problem wide{true, {1, 64, 4100}}, tall{true, {1, 20000, 16}}, rows{true, {3000, 13, 1}},
      long_rows{true, {2, 9, 5000}};
  // Few items: narrower pieces (8 per outer row), never parts of the reduced rows.
  const k::fused_reduce_plan pw = wide.plan<float>(nax::ops::reduce_kind::sum);
  CHECK(pw.chunk == 528);  // 4100 / 8, in whole cache lines
  CHECK(pw.pieces == 8);
  CHECK(pw.items == 8);
  const k::fused_reduce_plan pl = long_rows.plan<float>(nax::ops::reduce_kind::sum);
  CHECK(pl.pieces == 4);  // 2 x 4 = 8 items of 1264 columns, not 2 x 3 of 2048
  CHECK(pl.items == 8);
  // Narrow rows stay whole (several per pass), even as one item.
  const k::fused_reduce_plan pt = tall.plan<float>(nax::ops::reduce_kind::sum);
  CHECK(pt.pieces == 1);
  CHECK(pt.items == 1);
  CHECK(pt.pass == k::fused_reduce_buffer_elements / 16);
  const k::fused_reduce_plan pr = rows.plan<float>(nax::ops::reduce_kind::max);
  CHECK(pr.items > 2);
}

TEST_CASE_TEMPLATE("fused reduction: the bits of the unfused graph, and of each outer row alone", T,
                   float, double) {
  // Fused or not, an output folds its reduced rows in the same order; and how many outer rows
  // there are changes no output (a pipelined tile of rows gives the bits of the whole).
  keep_num_threads keep;
  nax::set_num_threads(2);
  const geometry geometries[] = {
      {1, 20000, 16}, {20, 3000, 1}, {9, 50, 300}, {6, 64, 4100}, {3, 70000, 1}};
  // Under a sanitizer the first three (each path once; the last two add size, 2.8 of 3.5 M
  // elements); the plain builds all five.
  const std::size_t count = nax_test::sweep(5, 3);
  for (bool with_bias : {true, false}) {
    for (const geometry& g : std::span(geometries, count)) {
      CAPTURE(with_bias);
      CAPTURE(g.outer);
      CAPTURE(g.reduced);
      CAPTURE(g.inner);
      const problem pr{with_bias, g};
      const std::vector<T> x = pattern<T>(g.outer * g.reduced * g.inner, 1);
      const std::vector<T> bias = pattern<T>(g.inner, 2);
      for (nax::ops::reduce_kind kind : all_kinds) {
        CAPTURE(nax::ops::name(kind));
        const std::vector<T> got = pr.run(pr.plan<T>(kind), x, bias);
        CHECK(got == pr.unfused(x, bias, kind));
        const problem one{with_bias, {1, g.reduced, g.inner}};
        const std::vector<T> x_row(x.end() - std::ptrdiff_t(g.reduced * g.inner), x.end());
        const std::vector<T> last = one.run(one.plan<T>(kind), x_row, bias);
        CHECK(std::equal(last.begin(), last.end(), got.end() - std::ptrdiff_t(g.inner)));
      }
    }
  }
}

TEST_CASE("fused reduction over no elements: the sum is 0, max, min and mean are errors") {
  const problem empty{false, {4, 0, 3}};
  const std::vector<float> none;
  const std::vector<float> got =
      empty.run(empty.plan<float>(nax::ops::reduce_kind::sum), none, none);
  CHECK(got == std::vector<float>(12, 0.0f));
  for (nax::ops::reduce_kind kind :
       {nax::ops::reduce_kind::max, nax::ops::reduce_kind::min, nax::ops::reduce_kind::mean}) {
    CAPTURE(nax::ops::name(kind));
    try {
      (void)empty.plan<float>(kind);
      FAIL("no error");
    } catch (const nax::shape_error& e) {
      const std::string what = e.what();
      CHECK(what.find(std::string(nax::ops::name(kind)) + " over an empty axis") !=
            std::string::npos);
    }
  }
  const problem no_output{false, {0, 5, 3}};
  CHECK(no_output.run(no_output.plan<float>(nax::ops::reduce_kind::max), none, none).empty());
}
