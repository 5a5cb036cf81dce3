// The ops' derivatives on numbers (ops/vjp_on_numbers.hpp): a scalar call gives each lane of a
// vector call, bit for bit, for every differentiable op of the list; a derivative's constants
// are rounded to the element type before they meet a value. (Their values against finite
// differences: tests/ops/derivatives.cpp.)
#include <nax/ops/elementwise.hpp>
#include <nax/ops/vjp_on_numbers.hpp>
#include <nax/simd/arch.hpp>

#include "support/bits.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include <boost/mp11/algorithm.hpp>

namespace {

using nax_test::same_bits;

// Op's cotangents at x (lane i of a vector: x shifted by i / 8), by scalars and by vectors.
template <class T, class Op>
void scalar_gives_each_lane(T a, T b, T c, T dy) {
  using V = nax::simd::vec<T>;
  constexpr std::size_t lanes = V::size;
  alignas(64) std::array<T, lanes> xa{}, xb{}, xc{};
  for (std::size_t i = 0; i < lanes; ++i) {
    xa[i] = a + T(i) / T(8);
    xb[i] = b - T(i) / T(16);
    xc[i] = c;
  }
  const V va = V::load_aligned(xa.data()), vb = V::load_aligned(xb.data()),
          vc = V::load_aligned(xc.data()), vdy(dy);
  auto vector = [&] {
    if constexpr (Op::selects)
      return nax::ops::vjp_on_numbers<Op>(vdy, va > V(T(0)), vb, vc);
    else if constexpr (Op::arity == 1)
      return nax::ops::vjp_on_numbers<Op>(vdy, va);
    else
      return nax::ops::vjp_on_numbers<Op>(vdy, va, vb);
  }();
  for (std::size_t i = 0; i < lanes; ++i) {
    auto scalar = [&] {
      if constexpr (Op::selects)
        return nax::ops::vjp_on_numbers<Op>(dy, xa[i] > T(0), xb[i], xc[i]);
      else if constexpr (Op::arity == 1)
        return nax::ops::vjp_on_numbers<Op>(dy, xa[i]);
      else
        return nax::ops::vjp_on_numbers<Op>(dy, xa[i], xb[i]);
    }();
    for (std::size_t k = Op::selects ? 1 : 0; k < scalar.size(); ++k) {
      INFO(std::string(Op::name), " operand ", k, " lane ", i, " at ", xa[i], ", ", xb[i]);
      CHECK(same_bits(scalar[k], vector[k].get(i)));
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("every op's vjp gives on scalars each lane's bits of a vector call", T, float,
                   double) {
  std::size_t ops = 0;
  boost::mp11::mp_for_each<nax::ops::all>([&](auto op) {
    using Op = decltype(op);
    if constexpr (Op::differentiable) {
      ++ops;
      const bool positive = Op::id == nax::ops::id::pow || Op::id == nax::ops::id::log ||
                            Op::id == nax::ops::id::sqrt || Op::id == nax::ops::id::rsqrt;
      for (T a : {T(-2.3), T(-0.5), T(0), T(0.4), T(3.1)}) {
        const T first = positive ? std::abs(a) + T(0.1) : a;
        scalar_gives_each_lane<T, Op>(first, T(1.7), T(-0.6), T(1.25));
        scalar_gives_each_lane<T, Op>(first, T(-0.3), T(2.5), T(-0.75));
      }
    }
  });
  CHECK(ops == 29);  // the list's ops but the nine that give a bool
}

TEST_CASE("a derivative's constants are rounded to the element type first") {
  // sigmoid's vjp is dy y (1.0 - y): in float, 1.0 becomes 1.0f, and each step rounds to float.
  const float x = 0.3f, dy = 0.7f;
  const float y = nax::ops::sigmoid::apply(x);
  const float dy_y = dy * y, one_minus_y = 1.0f - y;
  const float want = dy_y * one_minus_y;
  CHECK(same_bits(nax::ops::vjp_on_numbers<nax::ops::sigmoid>(dy, x)[0], want));
  // sqrt's is dy 0.5 / y; gelu's uses 1 / sqrt(2) (rounded to float before the product).
  const float s = nax::ops::sqrt::apply(2.0f), half_dy = dy * 0.5f;
  CHECK(same_bits(nax::ops::vjp_on_numbers<nax::ops::sqrt>(dy, 2.0f)[0], half_dy / s));
  // unary minus is neg (0 - v): cos's derivative at 0 is -(dy sin 0) = +0, not -0.
  CHECK(!std::signbit(nax::ops::vjp_on_numbers<nax::ops::cos>(1.0f, 0.0f)[0]));
}

TEST_CASE("edge cases: NaN propagates; elu's and leaky_relu's kinks take the negative side") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(nax::ops::vjp_on_numbers<nax::ops::tanh>(1.0f, nan)[0]));
  CHECK(std::isnan(nax::ops::vjp_on_numbers<nax::ops::exp>(nan, 1.0f)[0]));
  // At 0, not above it: the derivative of the negative side (ONNX's and PyTorch's choice).
  CHECK(nax::ops::vjp_on_numbers<nax::ops::elu>(2.0f, 0.0f, 0.5f)[0] == 1.0f);  // 2 alpha e^0
  CHECK(nax::ops::vjp_on_numbers<nax::ops::leaky_relu>(2.0f, 0.0f, 0.25f)[0] == 0.5f);
  CHECK(nax::ops::vjp_on_numbers<nax::ops::elu>(2.0f, 1.0f, 0.5f)[0] == 2.0f);
}
