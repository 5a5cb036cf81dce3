// exp of an integer tensor.
// expect: op_needs_floating_point_elements<
// expect: ops::exp, int>
// (the type is nax::isa_<instruction set>::...: docs/architecture.md, "Namespaces")
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

#include <cstdint>

using batch = nax::axis<"batch">;
int main() {
  nax::tensor<std::int32_t, batch> x(batch{2});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto e = nax::exp(x);
#else
  auto e = nax::exp(nax::cast<float>(x));
#endif
  return static_cast<int>(e.extent<batch>()) - 2;
}
