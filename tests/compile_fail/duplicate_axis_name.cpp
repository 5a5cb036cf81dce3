// An extents list that names "batch" twice.
// expect: axis_named_twice_in_one_list
// expect-gcc: name<nax::fixed_string<5>{"batch"}>
// expect-clang: name<'b', 'a', 't', 'c', 'h'>
#include <nax/core/extents.hpp>

using batch = nax::axis<"batch">;
#ifdef NAX_COMPILE_FAIL
using second = nax::axis<"batch", 4>;
#else
using second = nax::axis<"other", 4>;
#endif
int main() { return static_cast<int>(nax::extents<batch, second>(batch(1)).size()) - 4; }
