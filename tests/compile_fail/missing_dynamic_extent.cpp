// Extents of (batch, seq) built with batch only.
// expect: missing_extent_of_dynamic_axis
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/core/extents.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
#ifdef NAX_COMPILE_FAIL
  nax::extents<batch, seq> e(batch(2));
#else
  nax::extents<batch, seq> e(batch(2), seq(3));
#endif
  return static_cast<int>(e.size()) - 6;
}
