#pragma once
// The bodies of the elementwise ops, each defined once: one `apply` that runs on scalars and on
// xsimd vectors alike. The typed evaluator, the runtime's kernels and (later) autodiff all call
// these, so an op means the same thing everywhere. Each struct takes its name and traits from its
// line in ops/list.hpp (ops::traits<id>); nax::ops::all lists the structs in the list's order.

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/ops/list.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::ops {

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
};

// --- arithmetic -----------------------------------------------------------------------------
struct add : traits<id::add> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a + b;
  }
};
struct sub : traits<id::sub> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a - b;
  }
};
struct mul : traits<id::mul> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a * b;
  }
};
struct div : traits<id::div> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return a / b;
  }
};
struct neg : traits<id::neg> {
  template <class X>
  static X apply(const X& a) {
    return X(0) - a;
  }
};
struct abs : traits<id::abs> {
  template <class X>
  static X apply(const X& a) {
    return simd::abs(a);
  }
};
struct min : traits<id::min> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::min(a, b);
  }
};
struct max : traits<id::max> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::max(a, b);
  }
};
struct relu : traits<id::relu> {
  template <class X>
  static X apply(const X& a) {
    return simd::max(a, X(0));
  }
};

// --- floating point -------------------------------------------------------------------------
struct exp : traits<id::exp> {
  template <class X>
  static X apply(const X& a) {
    return simd::exp(a);
  }
};
struct log : traits<id::log> {
  template <class X>
  static X apply(const X& a) {
    return simd::log(a);
  }
};
struct sqrt : traits<id::sqrt> {
  template <class X>
  static X apply(const X& a) {
    return simd::sqrt(a);
  }
};
// 1/sqrt(x) to full precision (the hardware's rsqrt estimate has only 12 bits).
struct rsqrt : traits<id::rsqrt> {
  template <class X>
  static X apply(const X& a) {
    return X(1) / simd::sqrt(a);
  }
};
struct tanh : traits<id::tanh> {
  template <class X>
  static X apply(const X& a) {
    return simd::tanh(a);
  }
};
struct sigmoid : traits<id::sigmoid> {
  template <class X>
  static X apply(const X& a) {
    return simd::sigmoid(a);
  }
};
struct gelu : traits<id::gelu> {
  template <class X>
  static X apply(const X& a) {
    return simd::gelu(a);
  }
};
struct gelu_tanh : traits<id::gelu_tanh> {
  template <class X>
  static X apply(const X& a) {
    return simd::gelu_tanh(a);
  }
};
struct silu : traits<id::silu> {
  template <class X>
  static X apply(const X& a) {
    return simd::silu(a);
  }
};
// leaky_relu(x, alpha): x where x > 0, alpha * x elsewhere.
struct leaky_relu : traits<id::leaky_relu> {
  template <class X>
  static X apply(const X& a, const X& alpha) {
    return simd::select(a > X(0), a, alpha * a);
  }
};
struct pow : traits<id::pow> {
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::pow(a, b);
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
};

#define NAX_OPS_TYPE_ENTRY(name, arity, operands, result) , ops::name
/// The op body structs, in the list's order (mp_at_c<all, i> is the op of id i).
using all = boost::mp11::mp_rest<boost::mp11::mp_list<void NAX_ELEMENTWISE_OPS(NAX_OPS_TYPE_ENTRY)>>;
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
