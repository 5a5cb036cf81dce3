// A cumulative sum of bools: they have no sum (cast to an integer type first).
// expect: nax::cumsum of bools
#include <nax/typed/cumsum.hpp>

using seq = nax::axis<"seq", 4>;
int main() {
#ifdef NAX_COMPILE_FAIL
  nax::tensor<bool, seq> x;
#else
  nax::tensor<int, seq> x;
#endif
  x.fill(1);
  auto s = nax::cumsum<seq>(x);
  return s(3) == 4 ? 0 : 1;
}
