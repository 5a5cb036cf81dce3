// nax::size along an axis the tensor does not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/typed/size.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
  nax::tensor<float, batch> x(batch{2});
#ifdef NAX_COMPILE_FAIL
  auto n = nax::size<seq>(x);
#else
  auto n = nax::size<batch>(x);
#endif
  return n.data()[0] == 2 ? 0 : 1;
}
