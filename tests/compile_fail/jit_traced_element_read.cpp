// A jitted lambda branching on an element of a traced value, which has none while tracing.
// expect: nax::jit: x(i, ...) reads an element of a traced value; it has none while tracing
// Syntax only: the kernels need not be instantiated (nax/core/linkage.hpp).
#define NAX_SEPARATE_RUNTIME
#include <nax/jit/jit.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
int main() {
#ifdef NAX_COMPILE_FAIL
  auto f = nax::jit([](auto x) { return x(0, 0) > 0 ? nax::exp(x) : nax::exp(-x); },
                    nax::input<float, batch, hidden>("x"));
#else
  auto f = nax::jit([](auto x) { return nax::where(x > 0.0f, nax::exp(x), nax::exp(-x)); },
                    nax::input<float, batch, hidden>("x"));
#endif
  return f.executable().program().steps.size() == 1 ? 0 : 1;
}
