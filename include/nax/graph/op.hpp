#pragma once
// What a node of the runtime graph computes. Elementwise ops are not redefined here: a node
// names one of the op structs of nax/simd/ops.hpp by its index in `elementwise_ops`, so the
// graph's kernels run the very bodies the typed evaluator runs.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/simd/ops.hpp>

namespace nax::graph {

/// The elementwise ops a graph node can name, by index (`elementwise_index<ops::tanh>`).
using elementwise_ops =
    boost::mp11::mp_list<ops::add, ops::sub, ops::mul, ops::div, ops::neg, ops::abs, ops::min,
                         ops::max, ops::relu, ops::exp, ops::log, ops::sqrt, ops::rsqrt, ops::tanh,
                         ops::sigmoid, ops::gelu, ops::gelu_tanh, ops::silu, ops::leaky_relu,
                         ops::pow, ops::equal, ops::not_equal, ops::less, ops::less_equal,
                         ops::greater, ops::greater_equal, ops::logical_and, ops::logical_or,
                         ops::logical_not, ops::where>;

template <class Op>
inline constexpr std::uint8_t elementwise_index =
    static_cast<std::uint8_t>(boost::mp11::mp_find<elementwise_ops, Op>::value);

/// Calls f(Op{}) for the op at `index` of elementwise_ops.
template <class F>
decltype(auto) with_elementwise_op(std::size_t index, F&& f) {
  return boost::mp11::mp_with_index<boost::mp11::mp_size<elementwise_ops>::value>(
      index, [&](auto i) { return f(boost::mp11::mp_at_c<elementwise_ops, i>{}); });
}

/// The name of elementwise op `index` ("tanh").
inline std::string_view elementwise_name(std::size_t index) {
  return with_elementwise_op(index, [](auto op) { return decltype(op)::name; });
}

/// The arity of elementwise op `index` (leaky_relu and pow take their parameter as an operand).
inline std::size_t elementwise_arity(std::size_t index) {
  return with_elementwise_op(index, [](auto op) -> std::size_t {
    using Op = decltype(op);
    if constexpr (std::is_same_v<Op, ops::where>)
      return 3;
    else if constexpr (requires { Op::apply(0.0f); })
      return 1;
    else
      return 2;
  });
}

/// The kinds of node. Attributes live in node::ints (axis indices) and node::scalar.
enum class op_kind : std::uint8_t {
  parameter,    // an input, by name
  constant,     // a scalar (broadcast wherever it is used)
  elementwise,  // code: index in elementwise_ops
  reduce,       // code: reduce_kind; ints: the reduced axes of the input, ascending
  dot_general,  // ints: count c, then c (lhs, rhs) contracting pairs, then count b, b batch pairs
  transpose,    // ints: the permutation (output axis i is input axis ints[i])
  softmax,      // ints: the axis
  layer_norm,   // ints: the axis; inputs x, gamma, beta; scalar: epsilon
};

enum class reduce_kind : std::uint8_t { sum, mean, max, min };

inline std::string_view name(op_kind k) {
  switch (k) {
    case op_kind::parameter: return "parameter";
    case op_kind::constant: return "constant";
    case op_kind::elementwise: return "elementwise";
    case op_kind::reduce: return "reduce";
    case op_kind::dot_general: return "dot_general";
    case op_kind::transpose: return "transpose";
    case op_kind::softmax: return "softmax";
    case op_kind::layer_norm: return "layer_norm";
  }
  return "?";
}

inline std::string_view name(reduce_kind k) {
  switch (k) {
    case reduce_kind::sum: return "sum";
    case reduce_kind::mean: return "mean";
    case reduce_kind::max: return "max";
    case reduce_kind::min: return "min";
  }
  return "?";
}

}  // namespace nax::graph
