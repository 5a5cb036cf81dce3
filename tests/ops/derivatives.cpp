// Each op's derivative (vjp, next to its body in ops/elementwise.hpp, evaluated by
// ops/vjp_on_numbers.hpp) against central finite differences of its body, in double, at points away
// from its kinks; the ops come from the list, so a new op is checked here with no new test code.
#include <nax/ops/elementwise.hpp>
#include <nax/ops/vjp_on_numbers.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>

#include <boost/mp11/algorithm.hpp>

namespace {

// Op's body at x (the mask of where: x[0] > 0).
template <class Op>
double body(const std::array<double, 3>& x) {
  if constexpr (Op::selects) {
    return Op::apply(x[0] > 0, x[1], x[2]);
  } else if constexpr (Op::arity == 1) {
    return Op::apply(x[0]);
  } else {
    return Op::apply(x[0], x[1]);
  }
}

// Op's vjp at x on doubles (ops/vjp_on_numbers.hpp's calculator).
template <class Op>
std::array<double, 3> derivative(const std::array<double, 3>& x, double dy) {
  std::array<double, 3> out{};
  if constexpr (Op::selects) {
    const auto p = nax::ops::vjp_on_numbers<Op>(dy, x[0] > 0, x[1], x[2]);
    for (std::size_t i = 1; i < 3; ++i) out[i] = p[i];
  } else if constexpr (Op::arity == 1) {
    out[0] = nax::ops::vjp_on_numbers<Op>(dy, x[0])[0];
  } else {
    const auto p = nax::ops::vjp_on_numbers<Op>(dy, x[0], x[1]);
    out[0] = p[0];
    out[1] = p[1];
  }
  return out;
}

}  // namespace

TEST_CASE("every differentiable op's vjp is its body's derivative (central differences)") {
  std::size_t checked = 0;
  boost::mp11::mp_for_each<nax::ops::all>([&](auto op) {
    using Op = decltype(op);
    if constexpr (Op::differentiable) {
      for (double a : {-2.3, -0.7, 0.4, 1.3, 3.1}) {
        // pow and log need a positive first operand; min and max a second apart from it.
        const bool positive = Op::id == nax::ops::id::pow || Op::id == nax::ops::id::log ||
                              Op::id == nax::ops::id::sqrt || Op::id == nax::ops::id::rsqrt;
        std::array<double, 3> x = {positive ? std::abs(a) + 0.1 : a, 1.7, -0.6};
        if constexpr (Op::selects) x = {a, 0.9 * a + 0.2, 1.1};
        const double dy = 1.25;
        const std::array<double, 3> got = derivative<Op>(x, dy);
        const std::size_t first = Op::selects ? 1 : 0;
        for (std::size_t i = first; i < Op::arity; ++i) {
          const double h = 1e-5 * std::max(1.0, std::abs(x[i]));
          std::array<double, 3> up = x, down = x;
          up[i] += h;
          down[i] -= h;
          const double want = dy * (body<Op>(up) - body<Op>(down)) / (2 * h);
          INFO(std::string(Op::name), " operand ", i, " at ", x[0], ", ", x[1]);
          CHECK(std::abs(got[i] - want) <= 1e-7 * std::max(1.0, std::abs(want)));
          ++checked;
        }
      }
    }
  });
  CHECK(checked >= 100);
}

TEST_CASE("pow's derivative in its exponent is 0 at a base of 0 (PyTorch's choice), not NaN") {
  using nax::ops::pow;
  CHECK(nax::ops::vjp_on_numbers<pow>(1.0, 0.0, 2.5)[1] == 0.0);
  CHECK(nax::ops::vjp_on_numbers<pow>(1.0, 0.0, 0.0)[1] == 0.0);  // 0^0 = 1, still constant in b
  CHECK(nax::ops::vjp_on_numbers<pow>(1.0, 2.0, 3.0)[1] ==
        doctest::Approx(8.0 * std::log(2.0)));  // 2^3 log 2
}

TEST_CASE("ops that give a bool have no derivative; where's mask gets none") {
  static_assert(!nax::ops::less::differentiable && !nax::ops::logical_not::differentiable);
  static_assert(nax::ops::where::differentiable && nax::ops::add::differentiable);
  const auto p = nax::ops::vjp_on_numbers<nax::ops::where>(2.0, true, 5.0, 7.0);
  CHECK(p[1] == 2.0);
  CHECK(p[2] == 0.0);
}
