// Contracting an axis that one operand (b) does not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<1>{"k"}>
// expect-clang: name<'k'>
#include <nax/typed/dot.hpp>

using i_ax = nax::axis<"i">;
using j_ax = nax::axis<"j">;
using k_ax = nax::axis<"k">;
int main() {
  nax::tensor<float, i_ax, k_ax> a(i_ax{2}, k_ax{3});
#ifdef NAX_COMPILE_FAIL
  nax::tensor<float, j_ax> b(j_ax{3});
#else
  nax::tensor<float, k_ax, j_ax> b(k_ax{3}, j_ax{3});
#endif
  a.fill(1);
  b.fill(1);
  auto c = nax::dot<k_ax>(a, b);
  return c.size() == 6 ? 0 : 1;
}
