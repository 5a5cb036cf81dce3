#pragma once
// Lanes: the element type whose SIMD width an expression is evaluated at. A bool leaf has no
// width of its own (void): it is read as a mask at its context's width.

#include <type_traits>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::detail {

/// A leaf's lane: its element type, or void ("the context's") for bool.
template <class T>
using lane_of_value = std::conditional_t<std::is_same_v<T, bool>, void, T>;

/// Lane `Own` where it has one, else the context's `L`.
template <class L, class Own>
using resolve_lane = std::conditional_t<std::is_void_v<Own>, L, Own>;

/// The first non-void lane of several operands (void if none has one).
template <class... Lanes>
struct first_lane {
  using type = void;
};
template <class First, class... Rest>
struct first_lane<First, Rest...> {
  using type = std::conditional_t<std::is_void_v<First>, typename first_lane<Rest...>::type, First>;
};

/// The lane a child cursor C is read at inside a context read at lane L.
template <class L, class C>
using lane_for = resolve_lane<L, typename std::remove_cvref_t<C>::lane_type>;

}  // namespace nax::detail
