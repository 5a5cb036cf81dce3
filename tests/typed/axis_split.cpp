// split and merge: one axis as two and back, as views where the layout allows, checked against
// index arithmetic; their extent errors.
#include <nax/typed/axis_split.hpp>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/layout.hpp>

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

using seq = nax::axis<"seq">;
using model = nax::axis<"model", 12>;
using heads = nax::axis<"heads", 3>;
using hd = nax::axis<"hd", 4>;
using dyn_heads = nax::axis<"heads">;
using dyn_model = nax::axis<"model">;

namespace {
template <class T>
void iota(T& t) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<typename T::value_type>(i);
}
}  // namespace

TEST_CASE("split: a view of a tensor, element (h, d) is element h * extent(hd) + d") {
  nax::tensor<float, seq, model> x(seq{5});
  iota(x);
  auto s = nax::split<model, heads, hd>(x);
  static_assert(std::is_same_v<decltype(s), nax::tensor_view<float, seq, heads, hd>>);
  CHECK(s.data() == x.data());
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t h = 0; h < 3; ++h)
      for (std::size_t d = 0; d < 4; ++d) CHECK(s(i, h, d) == x(i, h * 4 + d));
  s(4, 2, 3) = -1;  // writes through
  CHECK(x(4, 11) == -1);
  // A split of a strided view is a view too.
  auto p = nax::permute<model, seq>(x);
  auto sp = nax::split<model, heads, hd>(p);
  static_assert(std::is_same_v<decltype(sp), nax::tensor_view<float, heads, hd, seq>>);
  CHECK(sp(1, 2, 3) == x(3, 6));
}

TEST_CASE("split of an expression is a new tensor; one part may be dynamic") {
  nax::tensor<float, seq, model> x(seq{2});
  iota(x);
  auto e = nax::split<model, heads, hd>(x * 2.0f);
  static_assert(std::is_same_v<decltype(e), nax::tensor<float, seq, heads, hd>>);
  CHECK(e(1, 2, 1) == 2 * x(1, 9));
  // heads dynamic: its extent follows from model / hd.
  auto d = nax::split<model, dyn_heads, hd>(x);
  static_assert(std::is_same_v<decltype(d), nax::tensor_view<float, seq, dyn_heads, hd>>);
  CHECK(d.extent<dyn_heads>() == 3);
  CHECK(d(1, 2, 0) == x(1, 8));
}

TEST_CASE("split of a dynamic axis is checked when its extent is known") {
  nax::tensor<float, dyn_model> x(dyn_model{10});
  CHECK_THROWS_WITH_AS((nax::split<dyn_model, heads, hd>(x)),
                       "nax::split: axis 'model' has extent 10, not heads × hd = 3 × 4",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::split<dyn_model, dyn_heads, hd>(x)),
                       "nax::split: axis 'model' has extent 10, not a multiple of hd = 4",
                       nax::shape_error);
  nax::tensor<float, dyn_model> y(dyn_model{8});
  iota(y);
  auto s = nax::split<dyn_model, dyn_heads, hd>(y);
  CHECK(s.extent<dyn_heads>() == 2);
  CHECK(s(1, 3) == 7);
}

TEST_CASE("merge: a view of a tensor whose axes are adjacent, else a new tensor") {
  nax::tensor<float, seq, heads, hd> x(seq{2});
  iota(x);
  auto m = nax::merge<heads, hd, model>(x);
  static_assert(std::is_same_v<decltype(m), nax::tensor_view<float, seq, model>>);
  CHECK(m.data() == x.data());
  CHECK(m(1, 7) == x(1, 1, 3));
  // hd before heads in memory: a new tensor, merged where heads was.
  nax::tensor<float, hd, seq, heads> y(seq{2});
  iota(y);
  auto my = nax::merge<heads, hd, model>(y);
  static_assert(std::is_same_v<decltype(my), nax::tensor<float, seq, model>>);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t h = 0; h < 3; ++h)
      for (std::size_t d = 0; d < 4; ++d) CHECK(my(i, h * 4 + d) == y(d, i, h));
  // An expression, and the round trip through split.
  auto e = nax::merge<heads, hd, model>(nax::split<model, heads, hd>(m) + 1.0f);
  static_assert(std::is_same_v<decltype(e), nax::tensor<float, seq, model>>);
  CHECK(e(1, 11) == m(1, 11) + 1);
  // Into a dynamic axis: its extent is the product.
  auto dm = nax::merge<heads, hd, dyn_model>(x);
  CHECK(dm.extent<dyn_model>() == 12);
}

TEST_CASE("merge into a static axis checks the product of dynamic parts") {
  nax::tensor<float, dyn_heads, hd> x(dyn_heads{2});
  CHECK_THROWS_WITH_AS((nax::merge<dyn_heads, hd, model>(nax::eval(x * 1.0f))),
                       "nax::merge: axis 'model' is static with extent 12, not heads × hd = 2 × 4",
                       nax::shape_error);
}
