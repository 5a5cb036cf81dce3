// nax::trace: one event per step per run, on the thread that ran it, exported as JSON that
// parses; one trace at a time; nothing recorded once stopped.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/trace.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "json_check.hpp"
#include "reference.hpp"

namespace g = nax::graph;
using json_check::count;
using json_check::json_checker;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("a trace has one event per step of every run, and its Chrome JSON parses") {
  g::builder b;
  const dim d = dim::named("d", 48);
  auto x = b.parameter("x", shape::make(dtype::f32, {dim("batch"), d}));
  auto w1 = b.parameter("w1", shape::make(dtype::f32, {d, dim::named("e", 40)}));
  auto w2 = b.parameter("w2", shape::make(dtype::f32, {d, dim::named("e", 40)}));
  const g::value y = g::dot_general(x, w1, {{"d", "d"}}) * g::dot_general(x, w2, {{"d", "d"}});
  auto ex = g::compile(b, {y}, {.parallel_steps = g::step_parallelism::always});
  const std::size_t steps = ex.program().steps.size();
  REQUIRE(steps == 3);
  std::mt19937 rng(1);
  const std::vector<nax::dyn_tensor> in =
      reference::random_inputs(std::vector<g::value>{x, w1, w2}, {{"batch", 20}}, rng);
  (void)ex.run(in);  // specialized before the trace: it records runs, not compilation

  nax::trace t;
  CHECK_THROWS_WITH_AS(nax::trace(), doctest::Contains("another trace is recording"),
                       std::logic_error);
  for (int r = 0; r < 2; ++r) (void)ex.run(in);
  t.stop();
  (void)ex.run(in);  // not recorded

  const std::vector<nax::trace_event> ev = t.events();
  REQUIRE(ev.size() == 2 * steps);
  std::vector<int> seen(2 * steps, 0);
  for (const nax::trace_event& e : ev) {
    REQUIRE(e.run < 2);
    REQUIRE(e.step < steps);
    ++seen[e.run * steps + e.step];
    CHECK(e.start_us <= e.end_us);
    CHECK(e.thread < t.thread_names().size());
    CHECK(e.name.find(std::string(g::name(ex.program().steps[e.step].kind()))) == 0);
  }
  for (int s : seen) CHECK(s == 1);
  // The two products are one group; the product of their results waits for both.
  const auto spec = ex.cached({{"batch", 20}});
  for (const nax::trace_event& e : ev) CHECK(e.group == spec->schedule.group_of[e.step]);

  const std::string json = t.to_chrome_json();
  json_checker check{json};
  CHECK(check.document());
  CHECK(count(json, "\"ph\":\"X\"") == 2 * steps);
  CHECK(count(json, "\"ph\":\"M\"") == t.thread_names().size());

  CHECK_THROWS_WITH_AS(t.write_chrome_json("/nonexistent-dir/trace.json"),
                       doctest::Contains("'/nonexistent-dir/trace.json'"), std::runtime_error);
  nax::trace again;  // the first one stopped: a new one may record
  CHECK(again.events().empty());
}
