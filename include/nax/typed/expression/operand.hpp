#pragma once
// What an operand becomes inside an expression node: an expression by value, an lvalue tensor as
// a view of it, an rvalue tensor moved into the node, an arithmetic scalar converted to the
// node's element type.

#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/owned_leaf.hpp>
#include <nax/typed/expression/scalar.hpp>

namespace nax::NAX_ISA::detail {

/// What an operand becomes inside a node: expressions by value (views are small), an lvalue
/// tensor as a view of it, an rvalue tensor moved into the node, a scalar converted to T.
template <class T, class X>
auto as_expression(X&& x) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_owning_tensor_v<U>) {
    if constexpr (std::is_lvalue_reference_v<X>)
      return x.view();
    else
      return owned_leaf<U>(std::move(x));
  } else if constexpr (is_expression_v<U>) {
    return U(std::forward<X>(x));
  } else {
    static_assert(std::is_arithmetic_v<U>,
                  "nax: an operand must be a nax tensor, view, expression or an arithmetic scalar");
    return scalar_node<T>(static_cast<T>(x));
  }
}

template <class X>
using expression_of =
    decltype(as_expression<typename std::remove_cvref_t<X>::value_type>(std::declval<X>()));

}  // namespace nax::detail
