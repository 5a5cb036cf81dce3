// nax::size (typed/size.hpp): an expression's extent along an axis as a rank-0 i32 tensor.
#include <nax/typed/elementwise.hpp>
#include <nax/typed/size.hpp>

#include <cstdint>

#include <doctest/doctest.h>

using seq = nax::axis<"seq", nax::upto(64)>;
using hidden = nax::axis<"hidden", 24>;

TEST_CASE("nax::size: the extent of a tensor, a view or an expression, as a rank-0 i32") {
  nax::tensor<float, seq, hidden> x(seq{5});
  x.fill(1);
  const nax::tensor<std::int32_t> n = nax::size<seq>(x);
  CHECK(n.data()[0] == 5);
  CHECK(nax::size<hidden>(x * 2.0f).data()[0] == 24);
  CHECK(nax::size<seq>(nax::tensor<float, seq, hidden>(seq{0})).data()[0] == 0);
}
