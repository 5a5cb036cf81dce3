// A slice with bounds in the type that holds nothing (a static axis has a positive extent).
// expect: End must be past Begin
#include <nax/typed/layout.hpp>

using batch = nax::axis<"batch">;
int main() {
  nax::tensor<float, batch> x(batch{5});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto s = nax::slice<batch, 3, 3>(x);
#else
  auto s = nax::slice<batch, 3, 4>(x);
#endif
  return s(0) == 1.0f ? 0 : 1;
}
