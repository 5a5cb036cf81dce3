// softmax along an axis the tensor does not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/typed/softmax.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
  nax::tensor<float, batch> x(batch{2});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  auto p = nax::softmax<seq>(x);
#else
  auto p = nax::softmax<batch>(x);
#endif
  return p(0) == 0.5f ? 0 : 1;
}
