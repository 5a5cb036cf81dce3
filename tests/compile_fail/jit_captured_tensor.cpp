// A jitted lambda reading a tensor it captured (the graph would read it after the lambda is gone).
// expect: nax::jit: an expression reads a captured tensor; pass it as an input instead
// Syntax only: the kernels need not be instantiated (nax/core/linkage.hpp).
#define NAX_SEPARATE_RUNTIME
#include <nax/jit/jit.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
int main() {
  nax::tensor<float, hidden> bias;
  bias.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto f = nax::jit([bias](auto x) { return nax::exp(x + bias); },
                    nax::input<float, batch, hidden>("x"));
#else
  auto f = nax::jit([](auto x, auto b) { return nax::exp(x + b); },
                    nax::input<float, batch, hidden>("x"), nax::input<float, hidden>("b"));
#endif
  return f.executable().program().steps.size() == 1 ? 0 : 1;
}
