// dynamic_slice and dynamic_update_slice on tensors, views and expressions against plain loops:
// starts clamped as XLA clamps them (negative, past the end), an integer or a rank-0 tensor as
// the start, an update with its axes in another order, and sizes above the extent named.
#include <nax/typed/dynamic_slice.hpp>
#include <nax/typed/size.hpp>
#include <nax/typed/elementwise.hpp>

#include <cstdint>

#include <doctest/doctest.h>

namespace {

using seq = nax::axis<"seq", nax::upto(16)>;
using model = nax::axis<"model", 3>;
using one = nax::axis<"seq", 1>;

nax::tensor<float, seq, model> cache(std::size_t n) {
  nax::tensor<float, seq, model> t{seq(n)};
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = float(i);
  return t;
}

}  // namespace

TEST_CASE("dynamic_slice: Size rows from a clamped start, as a static axis") {
  const auto c = cache(5);
  for (std::int64_t start : {-3, 0, 1, 3, 4, 99}) {
    auto r = nax::dynamic_slice<seq, 2>(c, start);
    static_assert(std::is_same_v<decltype(r), nax::tensor<float, nax::axis<"seq", 2>, model>>);
    const std::int64_t s = start < 0 ? 0 : start > 3 ? 3 : start;
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK(r(i, j) == c(std::size_t(s) + i, j));
  }
  // A rank-0 tensor as the start; an expression as the operand.
  nax::tensor<std::int32_t> pos;
  pos.data()[0] = 2;
  auto r = nax::dynamic_slice<seq, 1>(c + c, pos);
  CHECK(r(0, 1) == 2 * c(2, 1));
  // Along the other axis, of a view.
  auto col = nax::dynamic_slice<model, 2>(c.view(), 5);
  CHECK(col(4, 0) == c(4, 1));
  CHECK_THROWS_WITH_AS((nax::dynamic_slice<seq, 6>(c, 0)),
                       "nax::dynamic_slice<seq, 6>: size 6 is more than the extent 5 of axis 'seq'",
                       nax::shape_error);
}

TEST_CASE("dynamic_update_slice: x with the update written from a clamped start") {
  const auto c = cache(5);
  nax::tensor<float, one, model> row;
  row.fill(-1);
  for (std::int64_t start : {-1, 0, 2, 4, 7}) {
    auto r = nax::dynamic_update_slice<seq>(c, row, start);
    static_assert(std::is_same_v<decltype(r), nax::tensor<float, seq, model>>);
    const std::size_t s = start < 0 ? 0 : start > 4 ? 4 : std::size_t(start);
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK(r(i, j) == (i == s ? -1.0f : c(i, j)));
  }
  // The update's axes in another order, of extent 2 along seq.
  nax::tensor<float, model, nax::axis<"seq", 2>> two;
  for (std::size_t i = 0; i < two.size(); ++i) two.data()[i] = 100.0f + float(i);
  auto r = nax::dynamic_update_slice<seq>(c, two, 1);
  CHECK(r(1, 0) == 100.0f);
  CHECK(r(2, 0) == 101.0f);
  CHECK(r(1, 2) == 104.0f);
  CHECK(r(3, 0) == c(3, 0));
  nax::tensor<float, nax::axis<"seq", 6>, model> big;
  CHECK_THROWS_WITH_AS(nax::dynamic_update_slice<seq>(c, big, 0),
                       "nax::dynamic_update_slice<seq>: the update's extent 6 along axis 'seq' "
                       "is more than the extent 5",
                       nax::shape_error);
}

TEST_CASE("set_dimension_size: the first n entries, zeros past x's extent, a bounded axis") {
  using n_ax = nax::axis<"n">;
  const auto c = cache(5);  // seq <= 16, extent 5
  for (std::int64_t n : {0, 3, 5, 9, 16}) {
    auto r = nax::set_dimension_size<seq, n_ax>(c, n);
    static_assert(std::is_same_v<decltype(r),
                                 nax::tensor<float, nax::axis<"n", nax::upto(16)>, model>>);
    REQUIRE(r.extents().extent(0) == std::size_t(n));
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK(r(i, j) == (i < 5 ? c(i, j) : 0.0f));
  }
  // The size as a rank-0 integer expression: its value.
  nax::tensor<std::int32_t> two;
  two.data()[0] = 2;
  CHECK(nax::set_dimension_size<seq, n_ax>(c, two + 1).extents().extent(0) == 3);
  CHECK(nax::dynamic_slice<seq, 1>(c, two * 2)(0, 1) == c(4, 1));
  CHECK_THROWS_WITH_AS((nax::set_dimension_size<seq, n_ax>(c, 17)),
                       "nax::set_dimension_size<seq, n>: size 17 is outside [0, 16]",
                       nax::shape_error);
  // A static axis bounds the new one by its extent.
  auto m = nax::set_dimension_size<model, n_ax>(c, 2);
  static_assert(std::is_same_v<decltype(m),
                               nax::tensor<float, seq, nax::axis<"n", nax::upto(3)>>>);
  CHECK(m(4, 1) == c(4, 1));
}
