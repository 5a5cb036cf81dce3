// A sum over an axis the expression does not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>
#include <nax/typed/reduce.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
int main() {
  nax::tensor<float, batch> x(batch{2});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto s = nax::sum<hidden>(x);
#else
  auto s = nax::sum<batch>(x);
#endif
  return s() == 2 ? 0 : 1;
}
