// An axis declared with extent 0.
// expect: axis_extent_must_be_positive_integer_or_dynamic_or_upto
// expect-gcc: name<nax::fixed_string<5>{"empty"}>
// expect-clang: name<'e', 'm', 'p', 't', 'y'>
#include <nax/core/axis.hpp>

#ifdef NAX_COMPILE_FAIL
using empty = nax::axis<"empty", 0>;
#else
using empty = nax::axis<"empty", 1>;
#endif
int main() { return static_cast<int>(empty::static_extent) - 1; }
