// A nax::jit argument whose axes are not its input's (by name, in any order): the first error line
// names the argument's position (from 0), the input's axis names, then the argument's, each in
// its own order.
// expect: jit_argument_axes_differ_from_input<1
// expect-gcc: <1, nax::error::axis_names<nax::error::name<nax::fixed_string<6>{"hidden"}>
// expect-gcc: {"hidden"}>, nax::error::name<nax::fixed_string<3>{"out"}> >
// expect-gcc: {"out"}> >, nax::error::axis_names<nax::error::name<nax::fixed_string<5>{"other"}>
// expect-gcc: {"other"}>, nax::error::name<nax::fixed_string<6>{"hidden"}> > >
// expect-clang: <1, nax::error::axis_names<nax::error::name<'h', 'i', 'd', 'd', 'e', 'n'>
// expect-clang: 'n'>, nax::error::name<'o', 'u', 't'>>
// expect-clang: 'u', 't'>>, nax::error::axis_names<nax::error::name<'o', 't', 'h', 'e', 'r'>
// expect-clang: 'r'>, nax::error::name<'h', 'i', 'd', 'd', 'e', 'n'>>>
// Syntax only: the kernels need not be instantiated (nax/core/linkage.hpp).
#define NAX_SEPARATE_RUNTIME
#include <nax/jit/jit.hpp>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;
using out = nax::axis<"out", 3>;
using other = nax::axis<"other", 3>;
int main() {
  auto f = nax::jit([](auto x, auto w) { return nax::dot<hidden>(x, w); },
                    nax::input<float, batch, hidden>("x"), nax::input<float, hidden, out>("w"));
  nax::tensor<float, batch, hidden> x(batch(2));
#ifdef NAX_COMPILE_FAIL
  nax::tensor<float, other, hidden> w;  // no axis `out`
#else
  nax::tensor<float, out, hidden> w;  // `out` and `hidden` in the other order: accepted
#endif
  x.fill(1);
  w.fill(1);
  return f(x, w).size() == 6 ? 0 : 1;
}
