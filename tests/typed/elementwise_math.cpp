// The floating-point functions of elementwise.hpp against a long double reference, over odd
// sizes. (Arithmetic, comparisons, where and cast are in elementwise.cpp.)
#include <nax/typed/elementwise.hpp>

#include <nax/typed/tensor.hpp>

#include "support/pow_cases.hpp"
#include "values.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

using test_values::matrix;
using test_values::spread;
using test_values::tolerance;

namespace {

bool close(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= rel * std::max(1.0, std::abs(want));
}

const std::array<std::array<std::size_t, 2>, 5> sizes{
    {{1, 1}, {1, 7}, {3, 33}, {5, 1027}, {1, 1000003}}};

// Checks f(x) elementwise against ref for each size.
template <class T, class F, class Ref>
void check_unary(F f, Ref ref, double lo, double hi, double rel) {
  for (const auto& size : sizes) {
    const std::size_t r = size[0], c = size[1];
    auto x = matrix<T>(r, c, lo, hi, 7);
    nax::tensor<T, row, col> y = f(x);
    std::size_t wrong = 0, first = 0;
    // Every element of the small sizes; a sample of the large one (its reference is costly).
    const std::size_t stride = x.size() > 10000 ? 13 : 1;
    for (std::size_t i = 0; i < x.size(); i += stride)
      if (!close(y.data()[i], ref(static_cast<long double>(x.data()[i])), rel) && wrong++ == 0)
        first = i;
    INFO("size " << r << "x" << c << ", first mismatch at x = " << x.data()[first] << ": got "
                 << y.data()[first] << ", want " << ref(static_cast<long double>(x.data()[first])));
    CHECK(wrong == 0);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("unary ops match the scalar reference", T, float, double) {
  const double tol = tolerance<T>() * 4;
  check_unary<T>([](const auto& x) { return -x; }, [](long double v) { return double(-v); }, -5, 5,
                 0);
  check_unary<T>([](const auto& x) { return nax::abs(x); },
                 [](long double v) { return double(std::fabs(v)); }, -5, 5, 0);
  check_unary<T>([](const auto& x) { return nax::relu(x); },
                 [](long double v) { return double(v > 0 ? v : 0); }, -5, 5, 0);
  check_unary<T>([](const auto& x) { return nax::exp(x); },
                 [](long double v) { return double(std::exp(v)); }, -20, 20, tol);
  check_unary<T>([](const auto& x) { return nax::log(x); },
                 [](long double v) { return double(std::log(v)); }, 1e-3, 1e3, tol);
  check_unary<T>([](const auto& x) { return nax::sqrt(x); },
                 [](long double v) { return double(std::sqrt(v)); }, 0, 100, tol);
  check_unary<T>([](const auto& x) { return nax::rsqrt(x); },
                 [](long double v) { return double(1 / std::sqrt(v)); }, 1e-2, 100, tol);
  check_unary<T>([](const auto& x) { return nax::tanh(x); },
                 [](long double v) { return double(std::tanh(v)); }, -10, 10, tol);
  check_unary<T>([](const auto& x) { return nax::sigmoid(x); },
                 [](long double v) { return double(1 / (1 + std::exp(-v))); }, -20, 20, tol);
  check_unary<T>([](const auto& x) { return nax::silu(x); },
                 [](long double v) { return double(v / (1 + std::exp(-v))); }, -20, 20, tol);
  check_unary<T>([](const auto& x) { return nax::sin(x); },
                 [](long double v) { return double(std::sin(v)); }, -1e4, 1e4, tol);
  check_unary<T>([](const auto& x) { return nax::cos(x); },
                 [](long double v) { return double(std::cos(v)); }, -1e4, 1e4, tol);
  check_unary<T>(
      [](const auto& x) { return nax::gelu(x); },
      [](long double v) { return double(0.5L * v * (1 + std::erf(v / std::sqrt(2.0L)))); }, -8, 8,
      tol);
  check_unary<T>(
      [](const auto& x) { return nax::gelu_tanh(x); },
      [](long double v) {
        return double(0.5L * v *
                      (1 + std::tanh(0.7978845608028654L * (v + 0.044715L * v * v * v))));
      },
      -8, 8, tol);
  check_unary<T>([](const auto& x) { return nax::leaky_relu(x, 0.1); },
                 [](long double v) { return double(v > 0 ? v : T(0.1) * T(v)); }, -5, 5, tol);
  check_unary<T>([](const auto& x) { return nax::floor(x); },
                 [](long double v) { return double(std::floor(v)); }, -100, 100, 0);
  check_unary<T>([](const auto& x) { return nax::ceil(x); },
                 [](long double v) { return double(std::ceil(v)); }, -100, 100, 0);
  check_unary<T>([](const auto& x) { return nax::round(x * T(2)); },
                 [](long double v) { return double(std::nearbyint(T(v) * T(2))); }, -100, 100, 0);
  check_unary<T>([](const auto& x) { return nax::sign(x); },
                 [](long double v) { return v > 0   ? 1.0
                                            : v < 0 ? -1.0
                                                    : 0.0; }, -3, 3, 0);
  check_unary<T>([](const auto& x) { return nax::elu(x, 0.5); },
                 [](long double v) { return double(v > 0 ? v : 0.5L * (std::exp(v) - 1)); }, -8, 5,
                 tol);
  check_unary<T>([](const auto& x) { return nax::pow(x, T(1.5)); },
                 [](long double v) { return double(std::pow(v, 1.5L)); }, 0.1, 10, tol * 4);
}

// pow's special cases (C Annex F, std::pow's), evaluated eagerly: two tensors, a tensor and a
// scalar exponent, a scalar base and a tensor, and pow within a longer expression.
TEST_CASE_TEMPLATE("pow: std::pow's special cases (C Annex F), eager", T, float, double) {
  using n_ax = nax::axis<"n">;
  auto tensor_of = [](const std::vector<T>& v) {
    nax::tensor<T, n_ax> t(n_ax{v.size()});
    std::copy(v.begin(), v.end(), t.data());
    return t;
  };
  auto values_of = [](const nax::tensor<T, n_ax>& t) {
    return std::vector<T>(t.data(), t.data() + t.size());
  };
  SUBCASE("tensor ^ tensor") {
    pow_cases::check_clauses<T>([&](const std::vector<T>& x, const std::vector<T>& y) {
      nax::tensor<T, n_ax> z = nax::pow(tensor_of(x), tensor_of(y));
      return values_of(z);
    });
  }
  SUBCASE("tensor ^ scalar, scalar ^ tensor") {
    pow_cases::check_clauses<T>([&](const std::vector<T>& x, const std::vector<T>& y) {
      std::vector<T> out(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {  // (element i of each result)
        nax::tensor<T, n_ax> a = nax::pow(tensor_of(x), y[i]);
        nax::tensor<T, n_ax> b = nax::pow(x[i], tensor_of(y));
        // The same bits, or NaN both: which operand's NaN a product of two passes on (its sign
        // and payload) is the compiler's choice, and clang -O3 folds a scalar side differently.
        CHECK((pow_cases::same_bits(a.data()[i], b.data()[i]) ||
               (std::isnan(a.data()[i]) && std::isnan(b.data()[i]))));
        out[i] = a.data()[i];
      }
      return out;
    });
  }
  SUBCASE("within an expression") {  // (* 1 keeps every value's bits, -0 and inf)
    pow_cases::check_clauses<T>([&](const std::vector<T>& x, const std::vector<T>& y) {
      nax::tensor<T, n_ax> z = nax::pow(tensor_of(x) * T(1), tensor_of(y)) * T(1);
      return values_of(z);
    });
  }
}

// Elsewhere within the tolerance above of std::pow in long double, over both operands, negative
// bases with integer exponents included; the vector bodies and the tails alike.
TEST_CASE_TEMPLATE("pow: random operands match the scalar reference", T, float, double) {
  const double rel = tolerance<T>() * 16;
  for (const auto& size : sizes) {
    const std::size_t r = size[0], c = size[1];
    auto x = matrix<T>(r, c, -8, 8, 11);
    auto y = matrix<T>(r, c, -8, 8, 12);
    for (std::size_t i = 0; i < y.size(); i += 2) y.data()[i] = std::round(y.data()[i]);
    nax::tensor<T, row, col> z = nax::pow(x, y);
    std::size_t wrong = 0;
    const std::size_t stride = x.size() > 10000 ? 13 : 1;
    for (std::size_t i = 0; i < x.size(); i += stride) {
      const T a = x.data()[i], b = y.data()[i];
      const double want = double(
          static_cast<T>(std::pow(static_cast<long double>(a), static_cast<long double>(b))));
      if (!close(z.data()[i], want, rel) && wrong++ < 3)
        FAIL_CHECK("pow(", a, ", ", b, ") = ", z.data()[i], ", want ", want);
    }
    CHECK(wrong == 0);
  }
}
