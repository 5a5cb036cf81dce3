// A permutation check that meets "hidden" as 768 and as 512.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/core/axis_list.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using other = nax::axis<"hidden", 512>;
#else
using other = hidden;
#endif
static_assert(nax::axes_same_set_v<nax::axes<batch, hidden>, nax::axes<other, batch>>);
int main() {}
