#pragma once
// The elementwise ops the runtime layers name by index: the graph's nodes, the fused kernel's
// instructions. Not redefined here: each index names one of the op structs of nax/simd/ops.hpp,
// so the runtime kernels run the very bodies the typed evaluator runs.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/simd/ops.hpp>

namespace nax::kernels {

/// The elementwise ops, by index (`elementwise_index<ops::tanh>`).
using elementwise_ops =
    boost::mp11::mp_list<ops::add, ops::sub, ops::mul, ops::div, ops::neg, ops::abs, ops::min,
                         ops::max, ops::relu, ops::exp, ops::log, ops::sqrt, ops::rsqrt, ops::tanh,
                         ops::sigmoid, ops::gelu, ops::gelu_tanh, ops::silu, ops::leaky_relu,
                         ops::pow, ops::equal, ops::not_equal, ops::less, ops::less_equal,
                         ops::greater, ops::greater_equal, ops::logical_and, ops::logical_or,
                         ops::logical_not, ops::where>;

/// How many ops elementwise_ops holds.
inline constexpr std::size_t elementwise_op_count = boost::mp11::mp_size<elementwise_ops>::value;

template <class Op>
inline constexpr std::uint8_t elementwise_index =
    static_cast<std::uint8_t>(boost::mp11::mp_find<elementwise_ops, Op>::value);

/// Calls f(Op{}) for the op at `index` of elementwise_ops.
template <class F>
decltype(auto) with_elementwise_op(std::size_t index, F&& f) {
  return boost::mp11::mp_with_index<elementwise_op_count>(
      index, [&](auto i) { return f(boost::mp11::mp_at_c<elementwise_ops, i>{}); });
}

/// The arity of op Op (leaky_relu and pow take their parameter as an operand).
template <class Op>
inline constexpr std::size_t elementwise_arity_of = [] {
  if constexpr (std::is_same_v<Op, ops::where>)
    return std::size_t{3};
  else if constexpr (requires { Op::apply(0.0f); })
    return std::size_t{1};
  else
    return std::size_t{2};
}();

/// The name of elementwise op `index` ("tanh").
inline std::string_view elementwise_name(std::size_t index) {
  return with_elementwise_op(index, [](auto op) { return decltype(op)::name; });
}

/// The arity of elementwise op `index`.
inline std::size_t elementwise_arity(std::size_t index) {
  return with_elementwise_op(index, [](auto op) { return elementwise_arity_of<decltype(op)>; });
}

}  // namespace nax::kernels
