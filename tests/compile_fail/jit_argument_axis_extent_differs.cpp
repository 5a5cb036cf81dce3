// A nax::jit argument with an axis of its input's name but another static extent: the first error
// line names the argument's position and the axis.
// expect: jit_argument_axis_extent_differs_from_input<0
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>
// Syntax only: the kernels need not be instantiated (nax/core/linkage.hpp).
#define NAX_SEPARATE_RUNTIME
#include <nax/jit/jit.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
int main() {
  auto f = nax::jit([](auto x) { return nax::exp(x); }, nax::input<float, batch, hidden>("x"));
#ifdef NAX_COMPILE_FAIL
  nax::tensor<float, nax::axis<"hidden", 5>, batch> x(batch(2));
#else
  nax::tensor<float, hidden, batch> x(batch(2));
#endif
  x.fill(1);
  return f(x).size() == 8 ? 0 : 1;
}
