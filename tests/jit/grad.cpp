// nax::graph::grad over graphs nax::jit traced: an expression with a cast is one external node,
// which has no VJP: the error names it.
#include <nax/graph/grad.hpp>
#include <nax/jit/jit.hpp>

#include <string>

#include <doctest/doctest.h>

namespace g = nax::graph;

TEST_CASE("a nax::jit expression with a cast is one external node: an error naming it") {
  using batch = nax::axis<"batch">;
  using h = nax::axis<"h", 3>;
  g::builder* owner = nullptr;
  std::string message;
  auto f = nax::jit(
      [&](auto x) {
        auto y = nax::cast<double>(x) * 2.0;  // float to double: an external node
        auto loss = nax::sum<batch, h>(y);
        owner = &loss.node().owner();
        try {
          (void)g::grad(loss.node(), {x.node()});
        } catch (const nax::shape_error& e) {
          message = e.what();
        }
        return loss;
      },
      nax::input<float, batch, h>("x"));
  (void)f;
  CHECK(owner != nullptr);
  CHECK(message.find("nax::graph::grad: no VJP for external node") != std::string::npos);
}
