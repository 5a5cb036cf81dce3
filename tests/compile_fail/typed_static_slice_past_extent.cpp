// A slice with bounds in the type past a static axis's extent.
// expect: End is past the axis's extent or bound
#include <nax/typed/layout.hpp>

using batch = nax::axis<"batch">;
using width = nax::axis<"width", 8>;
int main() {
  nax::tensor<float, batch, width> x(batch{2});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto s = nax::slice<width, 4, 12>(x);
#else
  auto s = nax::slice<width, 4, 8>(x);
#endif
  return s(1, 3) == 1.0f ? 0 : 1;
}
