#pragma once
// reads_deferred<X>: whether expression X reads a value that has none yet. False for nax's own
// tensors, views and scalars; jit's traced values specialize it (jit/traced.hpp), so that an
// overload taking an expression's value now (a slice's start, `at + 1`) leaves traced ones to
// the overloads that build graph nodes.

#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/typed/expression/cast.hpp>
#include <nax/typed/expression/op_node.hpp>

namespace nax::NAX_ISA::detail {

template <class X>
struct reads_deferred : std::false_type {};
template <class Op, class... Args>
struct reads_deferred<op_node<Op, Args...>>
    : std::disjunction<reads_deferred<std::remove_cvref_t<Args>>...> {};
template <class U, class E>
struct reads_deferred<cast_node<U, E>> : reads_deferred<std::remove_cvref_t<E>> {};

}  // namespace nax::NAX_ISA::detail
