// "seq" bounded by 512 met with a static "seq" of 600.
// expect: axis_static_extent_exceeds_bound
// expect-gcc: name<nax::fixed_string<3>{"seq"}>, 600, 512>
// expect-clang: name<'s', 'e', 'q'>, 600, 512>
#include <nax/core/axis_list.hpp>

using seq = nax::axis<"seq", nax::upto(512)>;
#ifdef NAX_COMPILE_FAIL
using fixed_seq = nax::axis<"seq", 600>;
#else
using fixed_seq = nax::axis<"seq", 500>;
#endif
static_assert(std::is_same_v<nax::unify_axes<seq, fixed_seq>, fixed_seq>);
int main() {}
