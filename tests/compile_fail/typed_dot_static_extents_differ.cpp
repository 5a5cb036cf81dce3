// Contracting "hidden" of static extent 768 in a with 512 in b.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/typed/dot.hpp>

using batch = nax::axis<"batch">;
using out = nax::axis<"out", 4>;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using other = nax::axis<"hidden", 512>;
#else
using other = nax::axis<"hidden", 768>;
#endif
int main() {
  nax::tensor<float, batch, hidden> x(batch{2});
  nax::tensor<float, other, out> w;
  x.fill(1);
  w.fill(1);
  auto y = nax::dot<hidden>(x, w);
  return y(0, 0) == 768 ? 0 : 1;
}
