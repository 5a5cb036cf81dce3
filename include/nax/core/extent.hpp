#pragma once
// The three kinds of axis extent: static (a positive integer), dynamic (`nax::dynamic`) and
// dynamic with an upper bound (`nax::upto(N)`), plus `nax::c<N>`, an extent known at compile
// time when passed as a value.

#include <cstddef>
#include <span>
#include <type_traits>

namespace nax {

/// The value of a dynamic extent where a `std::size_t` is expected (as `std::dynamic_extent`).
inline constexpr std::size_t dynamic_extent = std::dynamic_extent;
/// The bound of an axis that has none.
inline constexpr std::size_t unbounded = std::dynamic_extent;

/// Marks an axis as dynamic: `nax::axis<"batch", nax::dynamic>` (the default).
struct dynamic_t {
  friend constexpr bool operator==(dynamic_t, dynamic_t) noexcept = default;
};
inline constexpr dynamic_t dynamic{};

/// A dynamic extent of at most `max`: `nax::axis<"seq", nax::upto(512)>`.
struct bound_t {
  std::size_t max;
  friend constexpr bool operator==(bound_t, bound_t) noexcept = default;
};
constexpr bound_t upto(std::size_t max) noexcept { return bound_t{max}; }

/// An extent known at compile time, passed as a value: `hidden(nax::c<768>)` is checked by the
/// compiler, where `hidden(768)` is checked when it runs.
template <std::size_t N>
struct constant : std::integral_constant<std::size_t, N> {};
template <std::size_t N>
inline constexpr constant<N> c{};

}  // namespace nax
