// Adding tensors whose "hidden" axes have static extents 768 and 512.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using other = nax::axis<"hidden", 512>;
#else
using other = nax::axis<"hidden", 768>;
#endif
int main() {
  nax::tensor<float, batch, hidden> x(batch{2});
  nax::tensor<float, other> b;
  x.fill(1);
  b.fill(2);
  nax::tensor<float, batch, hidden> y = x + b;
  return y(0, 0) == 3 ? 0 : 1;
}
