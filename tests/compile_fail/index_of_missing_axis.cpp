// Asking a list for the position of an axis it does not have.
// expect: axis_not_in_list
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>
#include <nax/core/axis_list.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using list = nax::axes<batch>;
#else
using list = nax::axes<batch, hidden>;
#endif
static_assert(nax::axes_index_of_v<list, hidden> == 1);
int main() {}
