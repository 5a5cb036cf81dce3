// Assigning an expression over (batch, seq) to a tensor over (batch) only.
// expect: expression_axis_missing_from_destination
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
  nax::tensor<float, batch, seq> x(batch{2}, seq{3});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  nax::tensor<float, batch> y(batch{2});
#else
  nax::tensor<float, seq, batch> y(batch{2}, seq{3});
#endif
  y = x * 2;
  return 0;
}
