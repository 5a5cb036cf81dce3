// Constructing a tensor over (batch, seq) from an expression over (batch): seq's extent is unknown.
// expect: destination_axis_missing_from_expression
// expect-gcc: name<nax::fixed_string<3>{"seq"}>
// expect-clang: name<'s', 'e', 'q'>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
int main() {
  nax::tensor<float, batch> x(batch{2});
  x.fill(1);
#ifdef NAX_COMPILE_FAIL
  nax::tensor<float, batch, seq> y = x * 2;
#else
  nax::tensor<float, batch> y = x * 2;
#endif
  return static_cast<int>(y.size()) - 2;
}
