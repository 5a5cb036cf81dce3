#pragma once
// TEMPORARY shim during the layering refactor (issue 14): the old by-index names over ops/.
// To be removed once kernels/ and graph/ use nax::ops::id directly.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <nax/ops/elementwise.hpp>

namespace nax::kernels {

using elementwise_ops = ops::all;
inline constexpr std::size_t elementwise_op_count = ops::count;

template <class Op>
inline constexpr std::uint8_t elementwise_index = static_cast<std::uint8_t>(Op::id);

template <class F>
decltype(auto) with_elementwise_op(std::size_t index, F&& f) {
  return ops::with_op(static_cast<ops::id>(index), static_cast<F&&>(f));
}

template <class Op>
inline constexpr std::size_t elementwise_arity_of = Op::arity;

inline std::string_view elementwise_name(std::size_t index) {
  return ops::name(static_cast<ops::id>(index));
}
inline std::size_t elementwise_arity(std::size_t index) {
  return ops::arity(static_cast<ops::id>(index));
}

}  // namespace nax::kernels
