// Extents of (batch) given a value of an axis they do not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/core/extents.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
#ifdef NAX_COMPILE_FAIL
  nax::extents<batch> e(batch(2), seq(3));
#else
  nax::extents<batch> e(batch(2));
#endif
  return static_cast<int>(e.size()) - 2;
}
