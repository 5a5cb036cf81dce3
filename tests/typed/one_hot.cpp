// one_hot along a new named axis (typed/one_hot.hpp), against a plain loop: dynamic and static
// axes, expressions of indices, out-of-range indices (rows of zeros), the extent check.
#include <nax/typed/one_hot.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

#include <nax/typed/elementwise.hpp>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
using vocab = nax::axis<"vocab">;
using classes = nax::axis<"classes", 4>;

}  // namespace

TEST_CASE("one_hot puts a 1 at each index, over the indices' axes then the new one") {
  const auto ids =
      nax::tensor<std::int64_t, batch, seq>::from({0, 2, 5, -1, 1, 6}, batch(2), seq(3));
  const auto h = nax::one_hot<vocab>(ids, 6);
  static_assert(std::is_same_v<decltype(h), const nax::tensor<float, batch, seq, vocab>>);
  CHECK(h.extent<vocab>() == 6);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t v = 0; v < 6; ++v)
        CHECK(h(b, s, v) == (ids(b, s) == static_cast<std::int64_t>(v) ? 1.f : 0.f));
  // -1 and 6 are out of [0, 6): rows of zeros.
  float row = 0;
  for (std::size_t v = 0; v < 6; ++v) row += h(1, 0, v) + h(1, 2, v);
  CHECK(row == 0.f);
}

TEST_CASE("one_hot of a static axis, of an expression, of another element type") {
  const auto ids = nax::tensor<std::int32_t, batch>::from({3, 0, 1}, batch(3));
  const auto h = nax::one_hot<classes, double>(ids + 0);
  static_assert(std::is_same_v<decltype(h), const nax::tensor<double, batch, classes>>);
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t c = 0; c < 4; ++c)
      CHECK(h(b, c) == (ids(b) == static_cast<std::int32_t>(c) ? 1.0 : 0.0));
  const auto m = nax::one_hot<classes, bool>(ids, 4);
  CHECK(m(0, 3));
  CHECK(!m(0, 2));
  CHECK_THROWS_WITH_AS(nax::one_hot<classes>(ids, 5), doctest::Contains("classes"),
                       nax::shape_error);
}
