// The offered-kernels pass: a fused elementwise group that computes an offered value from the
// offer's operands (and parts of the value) runs the offered kernel; a group grown beyond the
// value, one absorbed into a GEMM, one in another axis order, and a list without the pass keep
// their fused form.
#include <nax/graph/external_kernel.hpp>

#include <memory>
#include <stdexcept>

#include "fusion_test.hpp"

using namespace fusion_test;

namespace {

// Never run here: only which step takes it is checked.
struct offered final : g::external_kernel {
  std::string label() const override { return "offered"; }
  std::unique_ptr<nax::kernels::step_kernel> make(std::span<const std::uint32_t>, std::uint32_t,
                                                  std::span<const shape>) const override {
    throw std::logic_error("not run in this test");
  }
};

// Offers a kernel for `root`, made from the builder's nodes `first` .. root over `operands`.
void offer(g::builder& b, g::value root, std::initializer_list<g::value> operands, g::node_id first,
           const shape& result) {
  b.offer_kernel(root, std::make_shared<const offered>(),
                 std::span<const g::value>(operands.begin(), operands.size()), result, first);
}

g::node_id next(const g::builder& b) { return static_cast<g::node_id>(b.size()); }

}  // namespace

TEST_CASE("a group that is exactly the offered value runs the offered kernel") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  const g::node_id first = next(b);
  auto y = g::exp(x * 2.0 + 1.0);
  offer(b, y, {x}, first, y.shape());
  const g::program p = compile_steps(b, {y});
  CHECK(kinds(p) == "external");
  REQUIRE(p.steps[0].args.size() == 1);
  CHECK(p.steps[0].args[0] == 0);  // x, the program's first value
  CHECK(p.steps[0].as<g::external_op>().kernel->label() == "offered");
  CHECK(compile_steps(b, {y}, {.fuse = {.offered_kernels = false}}).steps[0].kind() ==
        g::op_kind::fused_elementwise);
}

TEST_CASE("a part of the value over fewer axes is recomputed by the kernel from the operands") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto s = b.parameter("s", f32({h}));
  const g::node_id first = next(b);
  auto y = x * (s * s) + 1.0;  // s * s: its own step over [h] in the fused form
  offer(b, y, {x, s}, first, y.shape());
  CHECK(kinds(compile_steps(b, {y}, {.fuse = {.offered_kernels = false}})) ==
        "elementwise, fused_elementwise");
  const g::program p = compile_steps(b, {y});
  CHECK(kinds(p) == "external");  // s * s is no longer needed
  CHECK(p.steps[0].args.size() == 2);
}

TEST_CASE("a group grown beyond the value, or absorbed into a GEMM, keeps its fused form") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  auto w = b.parameter("w", f32({h, k}));
  auto bias = b.parameter("bias", f32({k}));
  g::node_id first = next(b);
  auto y = g::exp(x * 2.0);
  offer(b, y, {x}, first, y.shape());
  auto z = g::tanh(y) - x;  // fusion makes one group of y's ops and z's
  CHECK(kinds(compile_steps(b, {z})) == "fused_elementwise");
  // y requested too: y is the group's extra result, and the group is not y's alone.
  CHECK(kinds(compile_steps(b, {z, y})) == "fused_elementwise");

  auto d = g::dot_general(x, w, {{1, 0}});
  first = next(b);
  auto e = g::gelu(d + bias);
  offer(b, e, {d, bias}, first, e.shape());
  CHECK(kinds(compile_steps(b, {e})) == "fused_dense");
}

TEST_CASE("an offer whose result has the axes in another order is not taken") {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", h}));
  const g::node_id first = next(b);
  auto y = g::exp(x * 2.0);
  offer(b, y, {x}, first, f32({h, "batch"}));
  CHECK(kinds(compile_steps(b, {y})) == "fused_elementwise");
  CHECK_THROWS_WITH_AS(b.offer_kernel(x, nullptr, {}, y.shape(), 0),
                       "nax::graph::offer_kernel: no kernel", nax::shape_error);
}
