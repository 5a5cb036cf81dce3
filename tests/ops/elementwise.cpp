// Each op's one body gives the same result on a scalar and in every lane of a vector.
#include <nax/ops/elementwise.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

namespace {

template <class T, class Op, class... Args>
void same_on_scalar_and_vector(Args... args) {
  using V = nax::simd::vec<T>;
  const auto s = Op::apply(args...);
  const auto v = Op::apply(V(args)...);
  for (std::size_t lane = 0; lane < V::size; ++lane) {
    INFO(Op::name);
    if constexpr (std::is_same_v<decltype(s), const bool>) {
      CHECK(v.get(lane) == s);
    } else if (std::isnan(double(s))) {
      CHECK(std::isnan(double(v.get(lane))));
    } else {
      CHECK(v.get(lane) == s);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("ops are one definition for scalars and vectors", T, float, double) {
  for (T x : {T(-3.5), T(-0.25), T(0), T(0.75), T(2), T(9)}) {
    const T y = T(1.5);
    same_on_scalar_and_vector<T, nax::ops::add>(x, y);
    same_on_scalar_and_vector<T, nax::ops::sub>(x, y);
    same_on_scalar_and_vector<T, nax::ops::mul>(x, y);
    same_on_scalar_and_vector<T, nax::ops::div>(x, y);
    same_on_scalar_and_vector<T, nax::ops::neg>(x);
    same_on_scalar_and_vector<T, nax::ops::abs>(x);
    same_on_scalar_and_vector<T, nax::ops::min>(x, y);
    same_on_scalar_and_vector<T, nax::ops::max>(x, y);
    same_on_scalar_and_vector<T, nax::ops::relu>(x);
    same_on_scalar_and_vector<T, nax::ops::exp>(x);
    same_on_scalar_and_vector<T, nax::ops::tanh>(x);
    same_on_scalar_and_vector<T, nax::ops::sigmoid>(x);
    same_on_scalar_and_vector<T, nax::ops::gelu>(x);
    same_on_scalar_and_vector<T, nax::ops::gelu_tanh>(x);
    same_on_scalar_and_vector<T, nax::ops::silu>(x);
    same_on_scalar_and_vector<T, nax::ops::sin>(x);
    same_on_scalar_and_vector<T, nax::ops::cos>(x);
    same_on_scalar_and_vector<T, nax::ops::floor>(x);
    same_on_scalar_and_vector<T, nax::ops::ceil>(x);
    same_on_scalar_and_vector<T, nax::ops::round>(x);
    same_on_scalar_and_vector<T, nax::ops::sign>(x);
    same_on_scalar_and_vector<T, nax::ops::leaky_relu>(x, T(0.1));
    same_on_scalar_and_vector<T, nax::ops::elu>(x, T(0.7));
    same_on_scalar_and_vector<T, nax::ops::less>(x, y);
    same_on_scalar_and_vector<T, nax::ops::greater_equal>(x, y);
    same_on_scalar_and_vector<T, nax::ops::equal>(x, x);
    same_on_scalar_and_vector<T, nax::ops::not_equal>(x, y);
    same_on_scalar_and_vector<T, nax::ops::less_equal>(x, y);
    same_on_scalar_and_vector<T, nax::ops::greater>(x, y);
    if (x > 0) {
      same_on_scalar_and_vector<T, nax::ops::log>(x);
      same_on_scalar_and_vector<T, nax::ops::sqrt>(x);
      same_on_scalar_and_vector<T, nax::ops::rsqrt>(x);
    }
  }
}

TEST_CASE_TEMPLATE("NaN and infinities: a NaN operand gives NaN, the same on scalars and lanes", T,
                   float, double) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (T x : {nan, inf, -inf, T(-2), T(0)})
    for (T y : {nan, T(1.5), -inf}) {
      CAPTURE(x);
      CAPTURE(y);
      same_on_scalar_and_vector<T, nax::ops::min>(x, y);
      same_on_scalar_and_vector<T, nax::ops::max>(x, y);
      same_on_scalar_and_vector<T, nax::ops::add>(x, y);
      same_on_scalar_and_vector<T, nax::ops::mul>(x, y);
      same_on_scalar_and_vector<T, nax::ops::relu>(x);
      same_on_scalar_and_vector<T, nax::ops::abs>(x);
      same_on_scalar_and_vector<T, nax::ops::floor>(x);
      same_on_scalar_and_vector<T, nax::ops::ceil>(x);
      same_on_scalar_and_vector<T, nax::ops::round>(x);
      same_on_scalar_and_vector<T, nax::ops::sign>(x);
      same_on_scalar_and_vector<T, nax::ops::leaky_relu>(x, T(0.1));
      same_on_scalar_and_vector<T, nax::ops::elu>(x, T(0.1));
      same_on_scalar_and_vector<T, nax::ops::equal>(x, y);
      same_on_scalar_and_vector<T, nax::ops::not_equal>(x, y);
      same_on_scalar_and_vector<T, nax::ops::not_equal>(x, x);  // true for NaN alone
      same_on_scalar_and_vector<T, nax::ops::less>(x, y);
      same_on_scalar_and_vector<T, nax::ops::greater_equal>(x, y);
      if (std::isnan(x) || std::isnan(y)) {
        CHECK(std::isnan(nax::ops::max::apply(x, y)));
        CHECK(std::isnan(nax::ops::min::apply(x, y)));
      }
    }
  CHECK(std::isnan(nax::ops::relu::apply(nan)));
  CHECK(nax::ops::not_equal::apply(nan, nan));
}

TEST_CASE_TEMPLATE("rounding and sign: ONNX's and NumPy's results, halves to even", T, float,
                   double) {
  using nax::ops::ceil, nax::ops::floor, nax::ops::round, nax::ops::sign;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T in[] = {T(-2.5), T(-1.5), T(-0.5), T(0.5), T(1.5), T(2.5), T(2.7), T(-2.7), T(8388609.5)};
  const T rounded[] = {T(-2), T(-2), T(-0.0), T(0), T(2), T(2), T(3), T(-3), T(8388610)};
  for (std::size_t i = 0; i < std::size(in); ++i) {
    CAPTURE(in[i]);
    CHECK(round::apply(in[i]) == rounded[i]);
    CHECK(std::signbit(round::apply(in[i])) == std::signbit(rounded[i]));
    CHECK(floor::apply(in[i]) == std::floor(in[i]));
    CHECK(ceil::apply(in[i]) == std::ceil(in[i]));
  }
  CHECK(std::signbit(ceil::apply(T(-0.5))));  // -0, as std::ceil
  for (T special : {nan, inf, -inf, T(-0.0)}) {
    CAPTURE(special);
    for (T r : {floor::apply(special), ceil::apply(special), round::apply(special)}) {
      CHECK(std::isnan(r) == std::isnan(special));
      if (!std::isnan(special)) CHECK(r == special);
      CHECK(std::signbit(r) == std::signbit(special));
    }
  }
  CHECK(sign::apply(T(-3)) == T(-1));
  CHECK(sign::apply(T(0.25)) == T(1));
  CHECK(sign::apply(inf) == T(1));
  CHECK(sign::apply(-inf) == T(-1));
  CHECK(std::isnan(sign::apply(nan)));
  CHECK(sign::apply(T(-0.0)) == T(0));
  CHECK(!std::signbit(sign::apply(T(-0.0))));  // +0 for either zero, as numpy.sign
  CHECK(sign::apply(-7) == -1);
  CHECK(sign::apply(std::int64_t{0}) == 0);
  CHECK(sign::apply(std::int64_t{1} << 40) == 1);
}

TEST_CASE("op traits") {
  static_assert(nax::ops::exp::floating_only && !nax::ops::add::floating_only);
  static_assert(nax::ops::less::yields_bool && !nax::ops::where::yields_bool);
  CHECK(nax::ops::where::apply(true, 1.0f, 2.0f) == 1.0f);
  CHECK(nax::ops::logical_and::apply(true, false) == false);
  CHECK(nax::ops::logical_or::apply(true, false) == true);
  CHECK(nax::ops::logical_not::apply(true) == false);
  CHECK(nax::ops::leaky_relu::apply(-2.0f, 0.5f) == -1.0f);
  // elu (ONNX Elu): alpha (e^x - 1) at and below 0, x above; -alpha at -inf, NaN stays NaN.
  CHECK(nax::ops::elu::apply(2.0, 0.5) == 2.0);
  CHECK(nax::ops::elu::apply(0.0, 0.5) == 0.0);
  CHECK(nax::ops::elu::apply(-1.0, 0.5) == doctest::Approx(0.5 * (std::exp(-1.0) - 1)));
  CHECK(nax::ops::elu::apply(-std::numeric_limits<double>::infinity(), 0.5) == -0.5);
  CHECK(std::isnan(nax::ops::elu::apply(std::numeric_limits<double>::quiet_NaN(), 0.5)));
  CHECK(nax::ops::pow::apply(2.0, 10.0) == 1024.0);
  CHECK(nax::ops::rsqrt::apply(4.0) == 0.5);
}
