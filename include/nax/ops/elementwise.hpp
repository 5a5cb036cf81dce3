#pragma once
// The bodies of the elementwise ops, each defined once: one `apply` that runs on scalars and on
// xsimd vectors alike. The typed evaluator and the runtime's kernels call these, so an op means
// the same thing everywhere. Each struct takes its name and traits from its line in ops/list.hpp
// (ops::traits<id>); nax::ops::all lists the structs in the list's order.
//
// Next to each body, its derivative: `vjp(d, dy, y, x...)` gives the cotangent of each operand
// from the result's cotangent dy, the result y and the operands x..., written with arithmetic
// on values and the functions of a calculator `d` (d.exp(v), d.where(mask, a, b),
// d.greater(a, b), ...). Reverse-mode autodiff (graph/grad.hpp) calls it with graph values,
// building the backward graph; the tests call it with doubles, against finite differences. Ops
// that give a bool have no derivative (`differentiable` is false); where's mask gets none (its
// entry is dy, unused).

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/core/isa.hpp>
#include <nax/ops/list.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::NAX_ISA::ops {

/// An op's traits from its line in ops/list.hpp, for its body struct to derive from.
template <id Op>
struct traits {
  static constexpr ops::id id = Op;
  static constexpr std::string_view name = info_of(Op).name;
  static constexpr std::size_t arity = info_of(Op).arity;
  static constexpr operand_class operands = info_of(Op).operands;
  /// The op needs floating-point elements (exp, tanh, ...).
  static constexpr bool floating_only = operands == operand_class::floating;
  /// The op gives a bool (a mask, for vectors): comparisons and logical ops.
  static constexpr bool yields_bool = info_of(Op).result == result_rule::boolean;
  /// Its operands are bool (logical ops) / it selects between values by a bool mask (where).
  static constexpr bool logical = operands == operand_class::boolean;
  static constexpr bool selects = operands == operand_class::select;
  /// The op has a vjp (see the file comment): every op but those that give a bool.
  static constexpr bool differentiable = !yields_bool;
};

/// 1 / sqrt(2), 2 / sqrt(pi) and 1 / sqrt(2 pi), for the derivatives of erf and gelu.
inline constexpr double rsqrt2 = 0.70710678118654752440, two_rsqrt_pi = 1.12837916709551257390,
                        rsqrt_2pi = 0.39894228040143267794;

/// The derivative of a piecewise constant op of one operand (sign, floor, ceil, round): 0
/// everywhere, as PyTorch and JAX give it (not undefined at the steps).
struct zero_derivative {
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V&) {
    return {d.zeros_like(dy)};
  }
};

// --- arithmetic -----------------------------------------------------------------------------
struct add : traits<id::add> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a + b;
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D&, const V& dy, const V&, const V&, const V&) {
    return {dy, dy};
  }
};
struct sub : traits<id::sub> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a - b;
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D&, const V& dy, const V&, const V&, const V&) {
    return {dy, -dy};
  }
};
struct mul : traits<id::mul> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a * b;
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D&, const V& dy, const V&, const V& a, const V& b) {
    return {dy * b, dy * a};
  }
};
struct div : traits<id::div> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a / b;
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D&, const V& dy, const V& y, const V&, const V& b) {
    return {dy / b, -(dy * y) / b};  // d(a/b)/db = -a/b^2 = -y/b
  }
};
struct neg : traits<id::neg> {
  template <class X>
  static X apply(const X& a) {
    return X(0) - a;
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V&, const V&) {
    return {-dy};
  }
};
struct abs : traits<id::abs> {
  template <class X>
  static X apply(const X& a) {
    return simd::abs(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {  // 0 at 0
    return {d.where(d.greater(a, 0.0), dy, d.where(d.less(a, 0.0), -dy, 0.0))};
  }
};
struct min : traits<id::min> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::min(a, b);
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D& d, const V& dy, const V&, const V& a, const V& b) {
    const auto first = d.less_equal(a, b);  // a tie goes to a, as the body picks it
    return {d.where(first, dy, 0.0), d.where(first, 0.0, dy)};
  }
};
struct max : traits<id::max> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::max(a, b);
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D& d, const V& dy, const V&, const V& a, const V& b) {
    const auto first = d.greater_equal(a, b);  // a tie goes to a
    return {d.where(first, dy, 0.0), d.where(first, 0.0, dy)};
  }
};
struct relu : traits<id::relu> {
  template <class X>
  static X apply(const X& a) {
    return simd::max(a, X(0));
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {  // 0 at 0
    return {d.where(d.greater(a, 0.0), dy, 0.0)};
  }
};

// sign(x): -1, 0 or 1 (NumPy's and ONNX's: +0 for either zero, NaN for NaN).
struct sign : traits<id::sign>, zero_derivative {
  template <class X>
  static X apply(const X& a) {
    const X s = simd::select(a > X(0), X(1), simd::select(a < X(0), X(-1), X(0)));
    if constexpr (std::is_floating_point_v<simd::element_t<X>>)
      return simd::select(simd::is_nan(a), a, s);
    else
      return s;
  }
};

// --- floating point -------------------------------------------------------------------------
struct exp : traits<id::exp> {
  template <class X>
  static X apply(const X& a) {
    return simd::exp(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V& y, const V&) {
    return {dy * y};
  }
};
struct log : traits<id::log> {
  template <class X>
  static X apply(const X& a) {
    return simd::log(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V&, const V& a) {
    return {dy / a};
  }
};
struct sqrt : traits<id::sqrt> {
  template <class X>
  static X apply(const X& a) {
    return simd::sqrt(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V& y, const V&) {
    return {dy * 0.5 / y};
  }
};
// 1/sqrt(x) to full precision (the hardware's rsqrt estimate has only 12 bits).
struct rsqrt : traits<id::rsqrt> {
  template <class X>
  static X apply(const X& a) {
    return X(1) / simd::sqrt(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V& y, const V& a) {
    return {dy * -0.5 * y / a};  // d(a^-1/2)/da = -a^-3/2 / 2 = -y / (2a)
  }
};
struct tanh : traits<id::tanh> {
  template <class X>
  static X apply(const X& a) {
    return simd::tanh(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V& y, const V&) {
    return {dy * (1.0 - y * y)};
  }
};
struct sigmoid : traits<id::sigmoid> {
  template <class X>
  static X apply(const X& a) {
    return simd::sigmoid(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D&, const V& dy, const V& y, const V&) {
    return {dy * y * (1.0 - y)};
  }
};
struct gelu : traits<id::gelu> {
  template <class X>
  static X apply(const X& a) {
    return simd::gelu(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {
    // gelu(a) = a Phi(a): Phi(a) + a phi(a), Phi(a) = (1 + erf(a / sqrt 2)) / 2
    return {dy * (0.5 + 0.5 * d.erf(a * rsqrt2) + a * d.exp(a * a * -0.5) * rsqrt_2pi)};
  }
};
struct gelu_tanh : traits<id::gelu_tanh> {
  template <class X>
  static X apply(const X& a) {
    return simd::gelu_tanh(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {
    // a (1 + t) / 2 with t = tanh(c (a + k a^3)): (1 + t) / 2 + a (1 - t^2) c (1 + 3k a^2) / 2
    constexpr double c = 0.79788456080286535588, k = 0.044715;
    const V t = d.tanh((a + a * a * a * k) * c);
    return {dy * (0.5 + 0.5 * t + a * (1.0 - t * t) * (0.5 * c) * (1.0 + a * a * (3 * k)))};
  }
};
struct silu : traits<id::silu> {
  template <class X>
  static X apply(const X& a) {
    return simd::silu(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V& y, const V& a) {
    const V s = d.sigmoid(a);  // a s(a): s + a s (1 - s) = s + y (1 - s)
    return {dy * (s + y * (1.0 - s))};
  }
};
struct erf : traits<id::erf> {
  template <class X>
  static X apply(const X& a) {
    return simd::erf(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {
    return {dy * two_rsqrt_pi * d.exp(-(a * a))};
  }
};
struct sin : traits<id::sin> {
  template <class X>
  static X apply(const X& a) {
    return simd::sin(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {
    return {dy * d.cos(a)};
  }
};
struct cos : traits<id::cos> {
  template <class X>
  static X apply(const X& a) {
    return simd::cos(a);
  }
  template <class D, class V>
  static std::array<V, 1> vjp(D& d, const V& dy, const V&, const V& a) {
    return {-(dy * d.sin(a))};
  }
};
// floor, ceil and round (to the nearest integer, halves to even: ONNX Round, numpy.round):
// NaN, infinities and signed zeros kept; round uses the default rounding mode (a program that
// changes it with fesetround changes round's scalar tail).
struct floor : traits<id::floor>, zero_derivative {
  template <class X>
  static X apply(const X& a) {
    return simd::floor(a);
  }
};
struct ceil : traits<id::ceil>, zero_derivative {
  template <class X>
  static X apply(const X& a) {
    return simd::ceil(a);
  }
};
struct round : traits<id::round>, zero_derivative {
  template <class X>
  static X apply(const X& a) {
    return simd::nearbyint(a);
  }
};
// leaky_relu(x, alpha): x where x > 0, alpha * x elsewhere.
struct leaky_relu : traits<id::leaky_relu> {
  template <class X>
  static X apply(const X& a, const X& alpha) {
    return simd::select(a > X(0), a, alpha * a);
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D& d, const V& dy, const V&, const V& a, const V& alpha) {
    const auto positive = d.greater(a, 0.0);
    return {d.where(positive, dy, dy * alpha), d.where(positive, 0.0, dy * a)};
  }
};
// elu(x, alpha): x where x > 0, alpha (e^x - 1) elsewhere (ONNX Elu; NaN stays NaN).
struct elu : traits<id::elu> {
  template <class X>
  static X apply(const X& a, const X& alpha) {
    return simd::select(a > X(0), a, alpha * (simd::exp(a) - X(1)));
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D& d, const V& dy, const V&, const V& a, const V& alpha) {
    const auto positive = d.greater(a, 0.0);
    const V e = d.exp(a);
    return {d.where(positive, dy, dy * alpha * e), d.where(positive, 0.0, dy * (e - 1.0))};
  }
};
struct pow : traits<id::pow> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::pow(a, b);
  }
  template <class D, class V>
  static std::array<V, 2> vjp(D& d, const V& dy, const V& y, const V& a, const V& b) {
    // d/db a^b = a^b log a; at a = 0 and b >= 0 it is 0 (0^b is constant in b there), not
    // 0 * -inf = NaN: PyTorch's choice, so a trainable exponent survives inputs with zeros.
    const V log_term = dy * y * d.log(a);
    return {dy * b * d.pow(a, b - 1.0),
            d.where(d.equal(a, 0.0), d.where(d.less(b, 0.0), log_term, 0.0), log_term)};
  }
};

// --- comparisons and logic ------------------------------------------------------------------
struct equal : traits<id::equal> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a == b;
  }
};
struct not_equal : traits<id::not_equal> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    if constexpr (simd::is_vec_v<X>)
      return ~(a == b);  // (xsimd's != is ordered on x86: NaN != NaN would be false)
    else
      return a != b;
  }
};
struct less : traits<id::less> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a < b;
  }
};
struct less_equal : traits<id::less_equal> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a <= b;
  }
};
struct greater : traits<id::greater> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a > b;
  }
};
struct greater_equal : traits<id::greater_equal> {
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a >= b;
  }
};
struct logical_and : traits<id::logical_and> {
  template <class M>
  static M apply(const M& a, const M& b) {
    return simd::logical_and(a, b);
  }
};
struct logical_or : traits<id::logical_or> {
  template <class M>
  static M apply(const M& a, const M& b) {
    return simd::logical_or(a, b);
  }
};
struct logical_not : traits<id::logical_not> {
  template <class M>
  static M apply(const M& a) {
    return simd::logical_not(a);
  }
};
// where(mask, a, b): a where mask holds, b elsewhere.
struct where : traits<id::where> {
  template <class M, class X>
  static X apply(const M& m, const X& a, const X& b) {
    return simd::select(m, a, b);
  }
  template <class D, class M, class V>
  static std::array<V, 3> vjp(D& d, const V& dy, const V&, const M& m, const V&, const V&) {
    return {dy, d.where(m, dy, 0.0), d.where(m, 0.0, dy)};  // (the mask's entry is unused)
  }
};

#define NAX_OPS_TYPE_ENTRY(name, arity, operands, result) , ops::name
/// The op body structs, in the list's order (mp_at_c<all, i> is the op of id i).
using all =
    boost::mp11::mp_rest<boost::mp11::mp_list<void NAX_ELEMENTWISE_OPS(NAX_OPS_TYPE_ENTRY)>>;
#undef NAX_OPS_TYPE_ENTRY
static_assert(boost::mp11::mp_size<all>::value == count);

/// Calls f(Op{}) with Op the body struct of op `op` (a switch over every op: use it where the op
/// is chosen once, at plan time, not per element).
template <class F>
decltype(auto) with_op(id op, F&& f) {
  return boost::mp11::mp_with_index<count>(static_cast<std::size_t>(op), [&](auto i) {
    return f(boost::mp11::mp_at_c<all, decltype(i)::value>{});
  });
}

}  // namespace nax::ops
