// float + double without a cast.
// expect: operands_have_different_element_types_use_nax_cast<
// expect: ops::add, float, double>
// (the type is nax::isa_<instruction set>::...: docs/architecture.md, "Namespaces")
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

using batch = nax::axis<"batch">;
int main() {
  nax::tensor<float, batch> x(batch{2});
#ifdef NAX_COMPILE_FAIL
  nax::tensor<double, batch> y(batch{2});
  nax::tensor<float, batch> z = x + y;
#else
  nax::tensor<double, batch> y(batch{2});
  nax::tensor<float, batch> z = x + nax::cast<float>(y);
#endif
  return static_cast<int>(z.size()) - 2;
}
