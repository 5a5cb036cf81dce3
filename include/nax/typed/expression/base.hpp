#pragma once
// What makes a type an expression of the typed layer (typed/expression.hpp states the protocol):
// the base every expression derives from, and the `nax::expression` concept.

#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA {

template <class T, axis_type... Axes>
class tensor_view;

/// Base of every expression type (tensors, views, scalars, nodes). It lives in namespace nax
/// so that argument-dependent lookup finds nax's operators for every node.
struct expression_base {};

namespace detail {

/// dst = e with one fused loop (evaluate.hpp).
template <class T, class... D, class E>
void assign(const tensor_view<T, D...>& dst, const E& e);

/// Base of the leaves that are tensors (nax::tensor, nax::tensor_view, traced values).
template <class Derived>
struct leaf_expression : expression_base {};

template <class E>
inline constexpr bool is_expression_v = std::is_base_of_v<expression_base, std::remove_cvref_t<E>>;

/// Specialized true for nax::tensor (an owning tensor: an rvalue one is moved into the node).
template <class T>
inline constexpr bool is_owning_tensor_v = false;

}  // namespace detail

/// A nax tensor, view or expression node.
template <class E>
concept expression = detail::is_expression_v<E>;

}  // namespace nax
