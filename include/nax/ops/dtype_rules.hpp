#pragma once
// The element-type rule of the elementwise ops, written once: which dtypes an op takes and which
// it gives, from its operand class and result rule (ops/list.hpp). The graph builder and the
// runtime kernels call it on dtypes at run time; the typed layer calls the same constexpr
// function on its element types at compile time.

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::ops {

/// What is wrong with an op's operand dtypes, if anything.
enum class dtype_error : std::uint8_t {
  none,
  arity,           // the wrong number of operands
  mixed,           // value operands of different types
  not_numeric,     // a type that is not f32, f64, i32 or i64 (bool, u8)
  not_floating,    // an integer or bool type where f32 or f64 is needed
  not_boolean,     // a non-bool type where bool is needed
  mask_not_bool,   // select: the mask (operand 0) is not bool
  not_selectable,  // select: the values are u8
  not_equatable    // equality: the operands are u8
};

/// The dtype an op gives over operands of `types`, or why it does not take them (`operand`: the
/// operand the error is about).
struct dtype_check {
  dtype result = dtype::f32;
  dtype_error error = dtype_error::none;
  std::size_t operand = 0;
  constexpr bool ok() const noexcept { return error == dtype_error::none; }
};

constexpr bool is_floating(dtype t) noexcept { return t == dtype::f32 || t == dtype::f64; }
constexpr bool is_numeric(dtype t) noexcept {
  return is_floating(t) || t == dtype::i32 || t == dtype::i64;
}

/// The rule itself: op `op` over operands of `types`.
constexpr dtype_check check_dtypes(id op, std::span<const dtype> types) noexcept {
  const info& in = info_of(op);
  if (types.size() != in.arity) return {dtype::f32, dtype_error::arity, types.size()};
  std::size_t first = 0;
  if (in.operands == operand_class::select) {
    if (types[0] != dtype::boolean) return {dtype::f32, dtype_error::mask_not_bool, 0};
    first = 1;
  }
  const dtype t = types[first];
  for (std::size_t i = first + 1; i < types.size(); ++i)
    if (types[i] != t) return {t, dtype_error::mixed, i};
  switch (in.operands) {
    case operand_class::numeric:
      if (!is_numeric(t)) return {t, dtype_error::not_numeric, first};
      break;
    case operand_class::floating:
      if (!is_floating(t)) return {t, dtype_error::not_floating, first};
      break;
    case operand_class::boolean:
      if (t != dtype::boolean) return {t, dtype_error::not_boolean, first};
      break;
    case operand_class::select:
      if (!is_numeric(t) && t != dtype::boolean) return {t, dtype_error::not_selectable, first};
      break;
    case operand_class::equality:
      if (!is_numeric(t) && t != dtype::boolean) return {t, dtype_error::not_equatable, first};
      break;
  }
  return {in.result == result_rule::boolean ? dtype::boolean : t, dtype_error::none, 0};
}

constexpr dtype_check check_dtypes(id op, std::initializer_list<dtype> types) noexcept {
  return check_dtypes(op, std::span<const dtype>(types.begin(), types.size()));
}

/// Why `op` refused `types` (check_dtypes' answer `c`), in words: "needs f32 or f64, got i32".
inline std::string describe(id op, const dtype_check& c, std::span<const dtype> types) {
  auto at = [&](std::size_t i) { return nax::name(types[i]); };
  switch (c.error) {
    case dtype_error::none: return "";
    case dtype_error::arity: {
      const std::size_t n = arity(op);
      return nax::detail::message("takes ", n, n == 1 ? " operand" : " operands", ", given ",
                                  types.size());
    }
    case dtype_error::mixed:
      return nax::detail::message(
          "element types differ: operand ", info_of(op).operands == operand_class::select ? 1 : 0,
          " is ", nax::name(c.result), ", operand ", c.operand, " is ", at(c.operand));
    case dtype_error::not_numeric:
      return nax::detail::message("needs f32, f64, i32 or i64 operands, not ", at(c.operand));
    case dtype_error::not_floating:
      return nax::detail::message("needs floating-point operands (f32 or f64), not ",
                                  at(c.operand));
    case dtype_error::not_boolean:
      return nax::detail::message("needs bool operands, not ", at(c.operand));
    case dtype_error::mask_not_bool:
      return nax::detail::message("the mask (operand 0) is ", at(0), ", not bool");
    case dtype_error::not_selectable:
      return nax::detail::message("needs f32, f64, i32, i64 or bool values, not ", at(c.operand));
    case dtype_error::not_equatable:
      return nax::detail::message("needs f32, f64, i32, i64 or bool operands, not ", at(c.operand));
  }
  return "";
}

/// The dtype op `op` gives over operands of `types`; nax::shape_error "<prefix><name>: <why>"
/// if it does not take them.
inline dtype result_dtype(id op, std::span<const dtype> types, std::string_view prefix = "") {
  const dtype_check c = check_dtypes(op, types);
  if (!c.ok()) nax::detail::throw_shape_error(prefix, name(op), ": ", describe(op, c, types));
  return c.result;
}

}  // namespace nax::ops
