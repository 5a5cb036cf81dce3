#pragma once
// An op's derivative (its `vjp`, ops/elementwise.hpp) evaluated on numbers: scalars of T or
// SIMD vectors of T, as a vertex program's backward runs it in registers (gnn/vertex/ops.hpp).
// The derivatives are written once, against a calculator; this is the calculator on numbers,
// beside the graph's (graph/vjp/common.hpp), so that every backward uses the same formulas.
// A derivative's constants are doubles; each becomes a T before it meets a value, as a graph
// constant takes its operand's element type; and each op's result is rounded before the next op
// reads it, as when the graph's nodes run: the graph's backward has these bits.

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::ops {
namespace detail {

/// A number (V: T or a SIMD vector of T) with the arithmetic a derivative uses: with numbers,
/// and with constants, which become T. Unary minus is the op `neg` (0 - x), as in the graph.
template <class V>
struct number {
  using element = simd::element_t<V>;
  V v;

  number(const V& x) : v(x) {}  // NOLINT(google-explicit-constructor): constants mix in
  template <class C>
  requires std::is_arithmetic_v<C> number(C c)
      : v(static_cast<element>(c)) {}  // NOLINT(google-explicit-constructor)

  // Each op's result rounded apart from the next op's (simd::op_result), as in the graph.
  static number rounded(const V& x) { return {simd::op_result(x)}; }

  friend number operator+(const number& a, const number& b) {
    return rounded(ops::add::apply(a.v, b.v));
  }
  friend number operator-(const number& a, const number& b) {
    return rounded(ops::sub::apply(a.v, b.v));
  }
  friend number operator*(const number& a, const number& b) {
    return rounded(ops::mul::apply(a.v, b.v));
  }
  friend number operator/(const number& a, const number& b) {
    return rounded(ops::div::apply(a.v, b.v));
  }
  friend number operator-(const number& a) { return rounded(ops::neg::apply(a.v)); }
};

/// The calculator of the derivatives (ops/elementwise.hpp's file comment) on numbers: each
/// function is the op's own body.
template <class V>
struct number_calculator {
  using N = number<V>;
  using mask = decltype(std::declval<V>() > std::declval<V>());

  static N exp(const N& x) { return N::rounded(ops::exp::apply(x.v)); }
  static N log(const N& x) { return N::rounded(ops::log::apply(x.v)); }
  static N tanh(const N& x) { return N::rounded(ops::tanh::apply(x.v)); }
  static N sigmoid(const N& x) { return N::rounded(ops::sigmoid::apply(x.v)); }
  static N erf(const N& x) { return N::rounded(ops::erf::apply(x.v)); }
  static N sin(const N& x) { return N::rounded(ops::sin::apply(x.v)); }
  static N cos(const N& x) { return N::rounded(ops::cos::apply(x.v)); }
  static N zeros_like(const N&) { return N(V(typename N::element(0))); }
  static N pow(const N& a, const N& b) { return N::rounded(ops::pow::apply(a.v, b.v)); }
  static mask greater(const N& a, const N& b) { return ops::greater::apply(a.v, b.v); }
  static mask equal(const N& a, const N& b) { return ops::equal::apply(a.v, b.v); }
  static mask less(const N& a, const N& b) { return ops::less::apply(a.v, b.v); }
  static mask less_equal(const N& a, const N& b) { return ops::less_equal::apply(a.v, b.v); }
  static mask greater_equal(const N& a, const N& b) { return ops::greater_equal::apply(a.v, b.v); }
  static N where(const mask& m, const N& a, const N& b) {
    return N::rounded(ops::where::apply(m, a.v, b.v));
  }
};

// An operand as the derivative takes it: a number, or the mask of `where` as it is.
template <class V, class X>
auto as_operand(const X& x) {
  if constexpr (std::is_same_v<X, V>)
    return number<V>(x);
  else
    return x;
}

}  // namespace detail

/// The cotangents of Op's operands x... (numbers of type V, or the mask of `where`) for the
/// cotangent dy of its result: Op's vjp on numbers. `vjp_on_numbers<ops::tanh>(dy, x)[0]`.
template <class Op, class V, class... X>
std::array<V, sizeof...(X)> vjp_on_numbers(const V& dy, const X&... x) {
  static_assert(Op::differentiable, "an error here means: this op has no derivative");
  detail::number_calculator<V> d;
  const V y = simd::op_result(Op::apply(x...));
  const auto parts =
      Op::vjp(d, detail::number<V>(dy), detail::number<V>(y), detail::as_operand<V>(x)...);
  std::array<V, sizeof...(X)> out{};
  for (std::size_t i = 0; i < sizeof...(X); ++i) out[i] = parts[i].v;
  return out;
}

}  // namespace nax::NAX_ISA::ops
