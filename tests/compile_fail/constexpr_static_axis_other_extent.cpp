// A static axis of 768 given 512 in a constant expression: the run-time check (which would
// throw nax::shape_error) cannot be evaluated, so it is a compile error. The compilers word this
// their own way; the note lines that follow show the axis and both extents.
// expect-gcc: throw_shape_error
// expect-clang: must be initialized by a constant expression
#include <nax/core/axis.hpp>

using hidden = nax::axis<"hidden", 768>;
#ifdef NAX_COMPILE_FAIL
constexpr hidden h(512);
#else
constexpr hidden h(768);
#endif
int main() { return static_cast<int>(h.extent()) - 768; }
