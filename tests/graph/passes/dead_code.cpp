// The dead-code pass: nodes no output needs never reach a group or a step.
#include "fusion_test.hpp"

using namespace fusion_test;

TEST_CASE("external steps are left alone and compile keeps dead nodes out of groups") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto dead = g::exp(x) * 3.0;
  (void)dead;
  auto y = g::tanh(x) + 1.0;
  const g::program p = compile_steps(b, {y});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].fused->ops.size() == 2);
}
