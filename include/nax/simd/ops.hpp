#pragma once
// The elementwise ops of nax, each defined once: one body that runs on scalars and on xsimd
// vectors alike. The typed evaluator, the runtime graph's fused kernels and (later) autodiff all
// use these structs, so an op means the same thing everywhere.
//
// Each op has a `name`, an `apply` that works for T and vec<T>, and traits:
//   floating_only  the op needs floating-point elements (exp, tanh, ...)
//   yields_bool    the op gives a bool (a mask, for vectors): comparisons and logical ops

#include <string_view>

#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::ops {

struct op_traits {
  static constexpr bool floating_only = false;
  static constexpr bool yields_bool = false;
};
struct floating_op : op_traits {
  static constexpr bool floating_only = true;
};
struct bool_op : op_traits {
  static constexpr bool yields_bool = true;
};

// --- arithmetic -----------------------------------------------------------------------------
struct add : op_traits {
  static constexpr std::string_view name = "add";
  template <class X>
  static X apply(const X& a, const X& b) {
    return a + b;
  }
};
struct sub : op_traits {
  static constexpr std::string_view name = "sub";
  template <class X>
  static X apply(const X& a, const X& b) {
    return a - b;
  }
};
struct mul : op_traits {
  static constexpr std::string_view name = "mul";
  template <class X>
  static X apply(const X& a, const X& b) {
    return a * b;
  }
};
struct div : op_traits {
  static constexpr std::string_view name = "div";
  template <class X>
  static X apply(const X& a, const X& b) {
    return a / b;
  }
};
struct neg : op_traits {
  static constexpr std::string_view name = "neg";
  template <class X>
  static X apply(const X& a) {
    return X(0) - a;
  }
};
struct abs : op_traits {
  static constexpr std::string_view name = "abs";
  template <class X>
  static X apply(const X& a) {
    return simd::abs(a);
  }
};
struct min : op_traits {
  static constexpr std::string_view name = "min";
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::min(a, b);
  }
};
struct max : op_traits {
  static constexpr std::string_view name = "max";
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::max(a, b);
  }
};
struct relu : op_traits {
  static constexpr std::string_view name = "relu";
  template <class X>
  static X apply(const X& a) {
    return simd::max(a, X(0));
  }
};

// --- floating point -------------------------------------------------------------------------
struct exp : floating_op {
  static constexpr std::string_view name = "exp";
  template <class X>
  static X apply(const X& a) {
    return simd::exp(a);
  }
};
struct log : floating_op {
  static constexpr std::string_view name = "log";
  template <class X>
  static X apply(const X& a) {
    return simd::log(a);
  }
};
struct sqrt : floating_op {
  static constexpr std::string_view name = "sqrt";
  template <class X>
  static X apply(const X& a) {
    return simd::sqrt(a);
  }
};
// 1/sqrt(x) to full precision (the hardware's rsqrt estimate has only 12 bits).
struct rsqrt : floating_op {
  static constexpr std::string_view name = "rsqrt";
  template <class X>
  static X apply(const X& a) {
    return X(1) / simd::sqrt(a);
  }
};
struct tanh : floating_op {
  static constexpr std::string_view name = "tanh";
  template <class X>
  static X apply(const X& a) {
    return simd::tanh(a);
  }
};
struct sigmoid : floating_op {
  static constexpr std::string_view name = "sigmoid";
  template <class X>
  static X apply(const X& a) {
    return simd::sigmoid(a);
  }
};
struct gelu : floating_op {
  static constexpr std::string_view name = "gelu";
  template <class X>
  static X apply(const X& a) {
    return simd::gelu(a);
  }
};
struct gelu_tanh : floating_op {
  static constexpr std::string_view name = "gelu_tanh";
  template <class X>
  static X apply(const X& a) {
    return simd::gelu_tanh(a);
  }
};
struct silu : floating_op {
  static constexpr std::string_view name = "silu";
  template <class X>
  static X apply(const X& a) {
    return simd::silu(a);
  }
};
// leaky_relu(x, alpha): x where x > 0, alpha * x elsewhere.
struct leaky_relu : floating_op {
  static constexpr std::string_view name = "leaky_relu";
  template <class X>
  static X apply(const X& a, const X& alpha) {
    return simd::select(a > X(0), a, alpha * a);
  }
};
struct pow : floating_op {
  static constexpr std::string_view name = "pow";
  template <class X>
  static X apply(const X& a, const X& b) {
    return simd::pow(a, b);
  }
};

// --- comparisons and logic ------------------------------------------------------------------
struct equal : bool_op {
  static constexpr std::string_view name = "equal";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a == b;
  }
};
struct not_equal : bool_op {
  static constexpr std::string_view name = "not_equal";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a != b;
  }
};
struct less : bool_op {
  static constexpr std::string_view name = "less";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a < b;
  }
};
struct less_equal : bool_op {
  static constexpr std::string_view name = "less_equal";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a <= b;
  }
};
struct greater : bool_op {
  static constexpr std::string_view name = "greater";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a > b;
  }
};
struct greater_equal : bool_op {
  static constexpr std::string_view name = "greater_equal";
  template <class X>
  static auto apply(const X& a, const X& b) {
    return a >= b;
  }
};
struct logical_and : bool_op {
  static constexpr std::string_view name = "logical_and";
  template <class M>
  static M apply(const M& a, const M& b) {
    return simd::logical_and(a, b);
  }
};
struct logical_or : bool_op {
  static constexpr std::string_view name = "logical_or";
  template <class M>
  static M apply(const M& a, const M& b) {
    return simd::logical_or(a, b);
  }
};
struct logical_not : bool_op {
  static constexpr std::string_view name = "logical_not";
  template <class M>
  static M apply(const M& a) {
    return simd::logical_not(a);
  }
};
// where(mask, a, b): a where mask holds, b elsewhere.
struct where : op_traits {
  static constexpr std::string_view name = "where";
  template <class M, class X>
  static X apply(const M& m, const X& a, const X& b) {
    return simd::select(m, a, b);
  }
};

}  // namespace nax::ops
