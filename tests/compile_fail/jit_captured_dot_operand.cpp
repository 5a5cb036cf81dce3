// A jitted lambda contracting with a tensor it captured instead of an input.
// expect: nax::jit: both operands of nax::dot must be computed from the traced inputs
// Syntax only: the kernels need not be instantiated (nax/core/linkage.hpp).
#define NAX_SEPARATE_RUNTIME
#include <nax/jit/jit.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
using out = nax::axis<"out", 3>;
int main() {
  nax::tensor<float, hidden, out> w;
  w.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto f = nax::jit([&w](auto x) { return nax::dot<hidden>(x, w); },
                    nax::input<float, batch, hidden>("x"));
#else
  auto f = nax::jit([](auto x, auto v) { return nax::dot<hidden>(x, v); },
                    nax::input<float, batch, hidden>("x"), nax::input<float, hidden, out>("w"));
#endif
  return f.executable().program().steps.size() == 1 ? 0 : 1;
}
