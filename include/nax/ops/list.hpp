#pragma once
// The elementwise ops of nax, listed once, each with its traits. Every layer reads this list:
// the typed functions (nax::tanh), the graph's (nax::graph::tanh), the kernels' dispatch, the
// dtype rules and the tests. Each op's body is a struct of the same name in nax::ops
// (ops/elementwise.hpp). Adding an op is its body there and its line here.
//
//   X(name, arity, operands, result)
//
// operands  the element types the op takes (ops/dtype_rules.hpp checks them):
//   numeric   f32, f64, i32 or i64, every operand the same type
//   equality  f32, f64, i32, i64 or bool, every operand the same type
//   floating  f32 or f64, every operand the same type
//   boolean   bool
//   select    a bool mask, then two operands of one type (f32, f64, i32, i64 or bool)
// result    `same`: the type of the (value) operands; `boolean`: bool.
//
// This header needs no SIMD: layers that only name ops (the graph) include it alone.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nax/core/isa.hpp>

// clang-format off
#define NAX_ELEMENTWISE_OPS(X)                   \
  X(add,           2, numeric,  same)            \
  X(sub,           2, numeric,  same)            \
  X(mul,           2, numeric,  same)            \
  X(div,           2, numeric,  same)            \
  X(neg,           1, numeric,  same)            \
  X(abs,           1, numeric,  same)            \
  X(min,           2, numeric,  same)            \
  X(max,           2, numeric,  same)            \
  X(relu,          1, numeric,  same)            \
  X(sign,          1, numeric,  same)            \
  X(exp,           1, floating, same)            \
  X(log,           1, floating, same)            \
  X(sqrt,          1, floating, same)            \
  X(rsqrt,         1, floating, same)            \
  X(tanh,          1, floating, same)            \
  X(sigmoid,       1, floating, same)            \
  X(gelu,          1, floating, same)            \
  X(gelu_tanh,     1, floating, same)            \
  X(silu,          1, floating, same)            \
  X(erf,           1, floating, same)            \
  X(sin,           1, floating, same)            \
  X(cos,           1, floating, same)            \
  X(floor,         1, floating, same)            \
  X(ceil,          1, floating, same)            \
  X(round,         1, floating, same)            \
  X(leaky_relu,    2, floating, same)            \
  X(elu,           2, floating, same)            \
  X(pow,           2, floating, same)            \
  X(equal,         2, equality, boolean)         \
  X(not_equal,     2, equality, boolean)         \
  X(less,          2, numeric,  boolean)         \
  X(less_equal,    2, numeric,  boolean)         \
  X(greater,       2, numeric,  boolean)         \
  X(greater_equal, 2, numeric,  boolean)         \
  X(logical_and,   2, boolean,  boolean)         \
  X(logical_or,    2, boolean,  boolean)         \
  X(logical_not,   1, boolean,  boolean)         \
  X(where,         3, select,   same)
// clang-format on

namespace nax::NAX_ISA::ops {

/// The element types an op takes (see the file comment).
enum class operand_class : std::uint8_t { numeric, floating, boolean, select, equality };
/// The element type an op gives.
enum class result_rule : std::uint8_t { same, boolean };

#define NAX_OPS_ID_ENTRY(name, arity, operands, result) name,
/// Every elementwise op, by the position of its line in NAX_ELEMENTWISE_OPS.
enum class id : std::uint8_t { NAX_ELEMENTWISE_OPS(NAX_OPS_ID_ENTRY) };
#undef NAX_OPS_ID_ENTRY

/// An op's traits, as its line states them.
struct info {
  std::string_view name;
  std::uint8_t arity;
  operand_class operands;
  result_rule result;
};

#define NAX_OPS_INFO_ENTRY(name, arity, operands, result) \
  info{#name, arity, operand_class::operands, result_rule::result},
/// The traits of every op, indexed by id.
inline constexpr info infos[] = {NAX_ELEMENTWISE_OPS(NAX_OPS_INFO_ENTRY)};
#undef NAX_OPS_INFO_ENTRY

/// How many elementwise ops there are.
inline constexpr std::size_t count = sizeof(infos) / sizeof(infos[0]);

constexpr const info& info_of(id op) noexcept { return infos[static_cast<std::size_t>(op)]; }
/// "tanh".
constexpr std::string_view name(id op) noexcept { return info_of(op).name; }
constexpr std::size_t arity(id op) noexcept { return info_of(op).arity; }

/// Whether `index` names an op (a value read from outside, e.g. a serialized graph).
constexpr bool is_valid(std::size_t index) noexcept { return index < count; }

/// The op named `text`, or false.
constexpr bool find(std::string_view text, id& out) noexcept {
  for (std::size_t i = 0; i < count; ++i)
    if (infos[i].name == text) {
      out = static_cast<id>(i);
      return true;
    }
  return false;
}

}  // namespace nax::ops
