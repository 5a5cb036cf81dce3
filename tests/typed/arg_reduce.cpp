// argmax and argmin along a named axis (typed/arg_reduce.hpp), against plain loops: every axis
// position, expressions, ties (the first), NaN (the first NaN), integers, the empty axis.
#include <nax/typed/arg_reduce.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/random.hpp>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
using hidden = nax::axis<"hidden", 7>;

}  // namespace

TEST_CASE("argmax and argmin along each axis match a scalar loop") {
  const auto x = nax::normal<float, batch, seq, hidden>(3, 0.0, 1.0, batch(3), seq(5));
  const auto am = nax::argmax<seq>(x);
  static_assert(std::is_same_v<decltype(am), const nax::tensor<std::int64_t, batch, hidden>>);
  const auto an = nax::argmin<hidden>(x);
  static_assert(std::is_same_v<decltype(an), const nax::tensor<std::int64_t, batch, seq>>);
  const auto ab = nax::argmax<batch>(x);
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t h = 0; h < 7; ++h) {
      std::size_t best = 0;
      for (std::size_t s = 1; s < 5; ++s)
        if (x(b, s, h) > x(b, best, h)) best = s;
      CHECK(am(b, h) == static_cast<std::int64_t>(best));
    }
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t s = 0; s < 5; ++s) {
      std::size_t best = 0;
      for (std::size_t h = 1; h < 7; ++h)
        if (x(b, s, h) < x(b, s, best)) best = h;
      CHECK(an(b, s) == static_cast<std::int64_t>(best));
    }
  for (std::size_t s = 0; s < 5; ++s)
    for (std::size_t h = 0; h < 7; ++h) {
      std::size_t best = 0;
      for (std::size_t b = 1; b < 3; ++b)
        if (x(b, s, h) > x(best, s, h)) best = b;
      CHECK(ab(s, h) == static_cast<std::int64_t>(best));
    }
  // An expression: argmax of -x is argmin of x.
  const auto neg = nax::argmax<hidden>(-x);
  for (std::size_t i = 0; i < neg.size(); ++i) CHECK(neg.data()[i] == an.data()[i]);
}

TEST_CASE("ties give the first position; a NaN wins; integers") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = nax::tensor<float, batch, seq>::from({1.f, 3.f, 3.f, 0.f,  //
                                                       2.f, nan, 5.f, nan,  //
                                                       -1.f, -1.f, -1.f, -1.f},
                                                      batch(3), seq(4));
  const auto am = nax::argmax<seq>(x);
  const auto an = nax::argmin<seq>(x);
  CHECK(am(0) == 1);
  CHECK(an(0) == 3);
  CHECK(am(1) == 1);  // the first NaN
  CHECK(an(1) == 1);
  CHECK(am(2) == 0);
  CHECK(an(2) == 0);
  const auto i = nax::tensor<std::int32_t, seq>::from({4, 9, -2, 9}, seq(4));
  CHECK(nax::argmax<seq>(i)() == 1);
  CHECK(nax::argmin<seq>(i)() == 2);
}

TEST_CASE("an empty axis throws, naming it") {
  const nax::tensor<float, batch, seq> x(batch(2), seq(0));
  CHECK_THROWS_WITH_AS(nax::argmax<seq>(x), "nax::argmax: axis 'seq' is empty", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::argmin<seq>(x), "nax::argmin: axis 'seq' is empty", nax::shape_error);
  CHECK(nax::argmax<seq>(nax::tensor<float, batch, seq>(batch(0), seq(3))).size() == 0);
}
