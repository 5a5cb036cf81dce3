// Extents whose "hidden" is 768 given a value of an axis "hidden" declared as 512.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/core/extents.hpp>

using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using given = nax::axis<"hidden", 512>;
#else
using given = nax::axis<"hidden">;
#endif
int main() { return static_cast<int>(nax::extents<hidden>(given(768)).size()) - 768; }
