// Splitting "model" of static extent 64 into heads = 4 × hd = 8.
// expect: axis_extent_is_not_the_product_of_its_parts
// expect-gcc: name<nax::fixed_string<5>{"model"}>, 64, nax::error::name<
// expect-gcc: nax::fixed_string<5>{"heads"}>, 4, nax::error::name<nax::fixed_string<2>{"hd"}>, 8>
// expect-clang: name<'m', 'o', 'd', 'e', 'l'>, 64, nax::error::name<'h', 'e', 'a', 'd', 's'>, 4,
// expect-clang: name<'h', 'd'>, 8>
#include <nax/typed/axis_split.hpp>

using seq = nax::axis<"seq">;
using model = nax::axis<"model", 64>;
using heads = nax::axis<"heads", 4>;
#ifdef NAX_COMPILE_FAIL
using hd = nax::axis<"hd", 8>;
#else
using hd = nax::axis<"hd", 16>;
#endif
int main() {
  nax::tensor<float, seq, model> x(seq{2});
  x.fill(1);
  auto y = nax::split<model, heads, hd>(x);
  return y(0, 0, 0) == 1 ? 0 : 1;
}
