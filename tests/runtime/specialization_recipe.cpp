// What level 2 works out once per program (runtime/specialization_recipe.hpp): values of one
// symbolic shape, steps that are the same function of their operands under every binding (whose
// kernels later steps copy, each with its own operands and scratch), and each value's first and
// last step, which the memory plan of an in-order schedule reads.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/specialization_recipe.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "reference.hpp"

namespace {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

// Three residual blocks of the same shapes, the second with another activation, over x[batch, h].
g::value blocks(g::builder& b) {
  const dim hd = dim::named("h", 8), kd = dim::named("k", 8);
  g::value h = b.parameter("x", shape::make(dtype::f32, {"batch", hd}));
  for (int i = 0; i < 3; ++i) {
    std::string w = "w", c = "c";
    w += std::to_string(i);
    c += std::to_string(i);
    const g::value u =
        g::dot_general(h, b.parameter(w, shape::make(dtype::f32, {hd, kd})), {{"h", "h"}}) +
        b.parameter(c, shape::make(dtype::f32, {kd}));
    h = g::softmax(g::rename(i == 1 ? g::tanh(u) : g::gelu(u), "k", "h") + h, "h");
  }
  return h;
}

std::size_t count_kind(const g::program& p, g::op_kind k) {
  return static_cast<std::size_t>(std::count_if(
      p.steps.begin(), p.steps.end(), [k](const g::program_step& s) { return s.kind() == k; }));
}

}  // namespace

TEST_CASE("steps of one op over one symbolic shape name the first of them; others stand alone") {
  g::builder b;
  const g::value out = blocks(b);
  auto ex = g::compile(b, {out}, {.fusion = false});
  const g::program& p = ex.program();
  const nax::runtime::specialization_recipe r = nax::runtime::make_specialization_recipe(p);
  REQUIRE(r.kernel_like.size() == p.steps.size());
  REQUIRE(r.shape_like.size() == p.values.size());

  for (std::size_t v = 0; v < p.values.size(); ++v) {
    CAPTURE(v);
    REQUIRE(r.shape_like[v] <= v);
    CHECK(p.values[r.shape_like[v]].shape == p.values[v].shape);
    for (std::size_t u = 0; u < r.shape_like[v]; ++u)
      CHECK(!(p.values[u].shape == p.values[v].shape));
  }
  std::size_t copied = 0;
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    CAPTURE(k);
    const std::uint32_t like = r.kernel_like[k];
    REQUIRE(like <= k);
    if (like == k) continue;
    ++copied;
    const g::program_step &s = p.steps[k], &l = p.steps[like];
    CHECK(nax::runtime::kernel_is_copied(s.kind()));
    CHECK(s.op == l.op);
    CHECK(p.values[s.result].shape == p.values[l.result].shape);
    REQUIRE(s.args.size() == l.args.size());
    for (std::size_t i = 0; i < s.args.size(); ++i)
      CHECK(p.values[s.args[i]].shape == p.values[l.args[i]].shape);
  }
  // Every dot_general, add and softmax but the first of each; the gelu of the third block (the
  // tanh of the second has no earlier twin, and the second gelu's twin is the first).
  const std::size_t dots = count_kind(p, g::op_kind::dot_general),
                    softmaxes = count_kind(p, g::op_kind::softmax);
  REQUIRE(dots == 3);
  REQUIRE(softmaxes == 3);
  std::size_t tanh_copies = 0, gelu_copies = 0;
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    if (p.steps[k].kind() != g::op_kind::elementwise || r.kernel_like[k] == k) continue;
    const nax::ops::id op = p.steps[k].as<g::elementwise_op>().op;
    tanh_copies += op == nax::ops::id::tanh;
    gelu_copies += op == nax::ops::id::gelu;
  }
  CHECK(tanh_copies == 0);
  CHECK(gelu_copies == 1);
  CHECK(copied >= 2 * (dots - 1) + 1);
}

TEST_CASE("each value's first and last step are those of the steps that read or write it") {
  g::builder b;
  const g::value out = blocks(b);
  auto ex = g::compile(b, {out}, {.fusion = false});
  const g::program& p = ex.program();
  const nax::runtime::specialization_recipe r = nax::runtime::make_specialization_recipe(p);
  for (std::size_t v = 0; v < p.values.size(); ++v) {
    CAPTURE(v);
    std::vector<std::uint32_t> touching;
    for (std::uint32_t k = 0; k < p.steps.size(); ++k) {
      const g::program_step& s = p.steps[k];
      bool touches = s.result == v;
      for (g::value_index a : s.args) touches = touches || a == v;
      for (g::value_index e : s.extra_results) touches = touches || e == v;
      if (touches) touching.push_back(k);
    }
    if (touching.empty()) {
      CHECK(r.first_touch[v] == nax::runtime::specialization_recipe::untouched);
      continue;
    }
    CHECK(r.first_touch[v] == touching.front());
    CHECK(r.last_touch[v] == touching.back());
  }
}

TEST_CASE("buffers that live at the same time never share memory, in order or side by side") {
  g::builder b;
  const g::value out = blocks(b);
  for (const g::step_parallelism parallel :
       {g::step_parallelism::off, g::step_parallelism::always}) {
    CAPTURE(static_cast<int>(parallel));
    auto ex = g::compile(b, {out}, {.fusion = false, .parallel_steps = parallel});
    const g::program& p = ex.program();
    const nax::runtime::specialization_recipe r = nax::runtime::make_specialization_recipe(p);
    const auto s = nax::runtime::specialize(
        p, nax::bindings{{"batch", 5}}, {.threads = 2, .parallel_steps = parallel, .recipe = &r});
    // Each intermediate's groups, from the steps that touch it (independent of the planner).
    const std::vector<std::uint32_t>& group_of = s->schedule.group_of;
    struct life {
      std::size_t first = ~std::size_t{0}, last = 0;
    };
    // A rename of an intermediate is its operand's buffer (owner), which lives for both.
    std::vector<std::size_t> owner(p.values.size());
    for (std::size_t v = 0; v < owner.size(); ++v) owner[v] = v;
    for (const g::program_step& st : p.steps)
      if (st.kind() == g::op_kind::reshape && s->roles[st.args[0]] == g::value_role::intermediate &&
          s->roles[st.result] == g::value_role::intermediate)
        owner[st.result] = owner[st.args[0]];
    std::vector<life> lives(p.values.size());
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
      auto touch = [&](g::value_index v) {
        life& l = lives[owner[v]];
        l.first = std::min<std::size_t>(l.first, group_of[k]);
        l.last = std::max<std::size_t>(l.last, group_of[k]);
      };
      touch(p.steps[k].result);
      for (g::value_index a : p.steps[k].args) touch(a);
    }
    std::size_t checked = 0, renames = 0;
    for (std::size_t v = 0; v < p.values.size(); ++v) {
      if (owner[v] != v) {
        CHECK(s->offsets[v] == s->offsets[owner[v]]);
        ++renames;
        continue;
      }
      for (std::size_t u = 0; u < v; ++u) {
        if (owner[u] != u || s->roles[v] != g::value_role::intermediate ||
            s->roles[u] != g::value_role::intermediate)
          continue;
        if (lives[u].last < lives[v].first || lives[v].last < lives[u].first) continue;
        CAPTURE(u);
        CAPTURE(v);
        const std::size_t ue = s->offsets[u] + s->shapes[u].num_bytes(),
                          ve = s->offsets[v] + s->shapes[v].num_bytes();
        CHECK((ue <= s->offsets[v] || ve <= s->offsets[u]));
        ++checked;
      }
    }
    CHECK(renames == 3);
    CHECK(checked > 10);
  }
}

TEST_CASE("copied products each get their own scratch and compute the reference") {
  // x_i[p, batch, q] contracted over batch with w_i[batch, k]: x's free axes p and q are not
  // adjacent, so each product first copies x into scratch. The second and third products copy
  // the first one's kernel, and need their own scratch.
  g::builder b;
  const dim pd = dim::named("p", 3), qd = dim::named("q", 5), kd = dim::named("k", 4);
  std::vector<g::value> params, outs;
  for (int i = 0; i < 3; ++i) {
    std::string x = "x", w = "w";
    x += std::to_string(i);
    w += std::to_string(i);
    params.push_back(b.parameter(x, shape::make(dtype::f32, {pd, "batch", qd})));
    params.push_back(b.parameter(w, shape::make(dtype::f32, {"batch", kd})));
    outs.push_back(g::dot_general(params[params.size() - 2], params.back(), {{"batch", "batch"}}));
  }
  auto ex = g::compile(b, outs, {.fusion = false});
  const g::program& p = ex.program();
  const nax::runtime::specialization_recipe r = nax::runtime::make_specialization_recipe(p);
  std::size_t copies = 0;
  for (std::size_t k = 0; k < p.steps.size(); ++k) copies += r.kernel_like[k] != k;
  REQUIRE(copies == 2);

  std::mt19937 rng(11);
  for (std::size_t batch : {1u, 6u, 33u}) {
    CAPTURE(batch);
    const auto s = nax::runtime::specialize(p, nax::bindings{{"batch", batch}}, {.recipe = &r});
    std::size_t intermediates = 0;
    for (g::value_role role : s->roles) intermediates += role == g::value_role::intermediate;
    // Three scratch copies of x, but where batch is 1 (p and q then flatten to one stride).
    CHECK(s->requests.size() == intermediates + (batch > 1 ? 3 : 0));
    std::vector<dyn_tensor> in;
    for (int i = 0; i < 3; ++i) {
      in.push_back(reference::random_tensor(
          shape::make(dtype::f32, {pd, dim::named("batch", batch), qd}), rng));
      in.push_back(
          reference::random_tensor(shape::make(dtype::f32, {dim::named("batch", batch), kd}), rng));
    }
    const std::vector<dyn_tensor> got = ex.run(in);
    const std::vector<reference::dense> want = reference::evaluate(b, in);
    REQUIRE(got.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(reference::max_error(got[i], want[outs[i].id()]) < 1e-5);
    }
  }
}
