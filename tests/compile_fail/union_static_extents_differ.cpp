// Two axes named "hidden" with static extents 768 and 512 met in one union.
// expect: axis_static_extents_differ
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/core/axis_list.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
using other = nax::axis<"hidden", 512>;
#else
using other = nax::axis<"hidden", 768>;
#endif
using u = nax::axes_union<nax::axes<batch, hidden>, nax::axes<other>>;
static_assert(boost::mp11::mp_size<u>::value == 2);
int main() {}
