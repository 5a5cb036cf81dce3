// A static axis of 768 given the compile-time extent 512.
// expect: static_axis_given_other_extent
// expect-gcc: name<nax::fixed_string<6>{"hidden"}>, 768, 512>
// expect-clang: name<'h', 'i', 'd', 'd', 'e', 'n'>, 768, 512>
#include <nax/core/axis.hpp>

using hidden = nax::axis<"hidden", 768>;
int main() {
#ifdef NAX_COMPILE_FAIL
  hidden h(nax::c<512>);
#else
  hidden h(nax::c<768>);
#endif
  return static_cast<int>(h.extent()) - 768;
}
