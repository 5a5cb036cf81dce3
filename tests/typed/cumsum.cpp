// nax::cumsum along a named axis (typed/cumsum.hpp), against numpy.cumsum's values and a plain
// running sum: every axis position, ONNX CumSum's exclusive and reverse forms, expressions,
// integers and dynamic extents.
#include <nax/typed/cumsum.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/random.hpp>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
using hidden = nax::axis<"hidden", 3>;

}  // namespace

TEST_CASE("numpy.cumsum's values along a named axis, and ONNX CumSum's forms") {
  nax::tensor<std::int32_t, seq, hidden> x(seq(4));
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<std::int32_t>(i);
  // x = [[0 1 2] [3 4 5] [6 7 8] [9 10 11]]
  const auto down = nax::cumsum<seq>(x);
  static_assert(std::is_same_v<decltype(down), const nax::tensor<std::int32_t, seq, hidden>>);
  const std::int32_t want_down[] = {0, 1, 2, 3, 5, 7, 9, 12, 15, 18, 22, 26};
  for (std::size_t i = 0; i < 12; ++i) CHECK(down.data()[i] == want_down[i]);
  const auto across = nax::cumsum<hidden>(x, {.exclusive = true});
  const std::int32_t want_across[] = {0, 0, 1, 0, 3, 7, 0, 6, 13, 0, 9, 19};
  for (std::size_t i = 0; i < 12; ++i) CHECK(across.data()[i] == want_across[i]);
  const auto back = nax::cumsum<seq>(x, {.reverse = true});
  const std::int32_t want_back[] = {18, 22, 26, 18, 21, 24, 15, 17, 19, 9, 10, 11};
  for (std::size_t i = 0; i < 12; ++i) CHECK(back.data()[i] == want_back[i]);
  const auto both = nax::cumsum<hidden>(x, {.exclusive = true, .reverse = true});
  const std::int32_t want_both[] = {3, 2, 0, 9, 5, 0, 15, 8, 0, 21, 11, 0};
  for (std::size_t i = 0; i < 12; ++i) CHECK(both.data()[i] == want_both[i]);
}

TEST_CASE("an expression, summed along each axis, is a running sum of its values") {
  const auto x = nax::normal<float, batch, seq, hidden>(5, 0.0, 1.0, batch(2), seq(6));
  const auto e = nax::eval(x * 2.0f + 1.0f);
  const auto y = nax::cumsum<seq>(x * 2.0f + 1.0f);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 3; ++h) {
      float sum = 0;
      for (std::size_t s = 0; s < 6; ++s) {
        sum = s == 0 ? e(b, s, h) : sum + e(b, s, h);
        CHECK(y(b, s, h) == sum);  // the same adds in the same order: the same bits
      }
    }
  const auto z = nax::cumsum<batch>(x, {.reverse = true});
  for (std::size_t s = 0; s < 6; ++s)
    for (std::size_t h = 0; h < 3; ++h) {
      CHECK(z(1, s, h) == x(1, s, h));
      CHECK(z(0, s, h) == x(1, s, h) + x(0, s, h));
    }
}
