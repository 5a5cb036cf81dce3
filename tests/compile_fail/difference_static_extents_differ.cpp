// Removing "hidden" (512) from a list whose "hidden" is 768.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/core/axis_list.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using other = nax::axis<"hidden", 512>;
#else
using other = nax::axis<"hidden">;
#endif
static_assert(std::is_same_v<nax::axes_difference<nax::axes<batch, hidden>, nax::axes<other>>,
                             nax::axes<batch>>);
int main() {}
