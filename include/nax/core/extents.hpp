#pragma once
// nax::extents: the extents of an axis list. Only dynamic extents are stored, so the extents of
// an all-static list are an empty object (sizeof 1, as with std::extents).

#include <array>
#include <cstddef>
#include <span>
#include <string>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>

namespace nax {
namespace core_detail {

template <std::size_t Dynamic>
struct dynamic_extents_storage {
  std::array<std::size_t, Dynamic> values{};
};
template <>
struct dynamic_extents_storage<0> {};

}  // namespace core_detail

/// Extents of `Axes...` in that order. Construct from axis values by name, in any order:
///
///     nax::extents<batch, seq, hidden> e(seq(128), batch(32));   // hidden is static: 768
///     e.extent<batch>() == 32;  e.extent(2) == 768;  e.size() == 32 * 128 * 768;
///
/// Every dynamic axis must be given (else a compile error naming it); static axes may be given
/// and are checked. Names must be unique in the list (else a compile error naming the axis).
template <class... Axes>
class extents {
  static_assert((is_axis_v<Axes> && ...), "nax::extents takes nax::axis types");
  static_assert(check_unique_axes<axes<Axes...>>);

  static constexpr std::size_t rank_ = sizeof...(Axes);
  static constexpr std::array<bool, rank_> is_dynamic_{Axes::is_dynamic...};
  static constexpr std::size_t rank_dynamic_ = (std::size_t{0} + ... + Axes::is_dynamic);

  // Position of axis i among the dynamic ones (meaningful for dynamic axes only).
  static constexpr std::array<std::size_t, rank_> dynamic_slot_ = [] {
    std::array<std::size_t, rank_> slot{};
    std::size_t next = 0;
    for (std::size_t i = 0; i < rank_; ++i) slot[i] = is_dynamic_[i] ? next++ : dynamic_extent;
    return slot;
  }();

 public:
  using axes_type = axes<Axes...>;

  static constexpr std::size_t rank() noexcept { return rank_; }
  static constexpr std::size_t rank_dynamic() noexcept { return rank_dynamic_; }
  /// The static extent of axis i, or nax::dynamic_extent.
  static constexpr std::size_t static_extent(std::size_t i) noexcept {
    constexpr std::array<std::size_t, rank_> e{Axes::static_extent...};
    return e[i];
  }
  static constexpr std::array<std::string_view, rank_> names() noexcept { return {Axes::name...}; }

  /// All-static extents need no values.
  constexpr extents() noexcept requires(rank_dynamic_ == 0) = default;

  /// From axis values, by name, in any order.
  template <axis_type... Given>
  requires(sizeof...(Given) > 0) constexpr explicit extents(Given... given) {
    // An error here means an axis value was given that this list does not have.
    static_assert((core_detail::require<axes_contains_v<axes_type, Given>,
                                   error::axis_not_in_list<core_detail::axis_diagnostic_name<Given>>> &&
                   ...));
    // An error here means the same axis was given twice.
    static_assert(check_unique_axes<axes<Given...>>);
    // An error here means a dynamic axis of the list was not given its extent.
    static_assert(
        (core_detail::require < !Axes::is_dynamic || axes_contains_v<axes<Given...>, Axes>,
         error::missing_extent_of_dynamic_axis < core_detail::axis_diagnostic_name < Axes >>> &&...));
    (set(given), ...);
  }

  /// From positional extents, each checked against its axis (nax::shape_error on a mismatch).
  constexpr explicit extents(std::span<const std::size_t, rank_> values) {
    std::size_t i = 0;
    ((core_detail::check_axis_extent(Axes::name, Axes::static_extent, Axes::bound, values[i]),
      store(i, values[i]), ++i),
     ...);
  }

  /// Extent of the axis at position i.
  constexpr std::size_t extent(std::size_t i) const noexcept {
    if (!is_dynamic_[i]) return static_extent(i);
    if constexpr (rank_dynamic_ > 0)
      return dynamic_.values[dynamic_slot_[i]];
    else
      return 0;  // unreachable: an all-static list has no dynamic axis
  }

  /// Extent of the axis named like A (a compile error naming A if the list has no such axis).
  template <class A>
  constexpr std::size_t extent() const noexcept {
    return extent(axes_index_of_v<axes_type, A>);
  }

  /// The number of elements: the product of all extents.
  constexpr std::size_t size() const noexcept {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) n *= extent(i);
    return n;
  }

  /// `[batch=32, seq=128, hidden=768]`.
  std::string to_string() const {
    std::string out = "[";
    for (std::size_t i = 0; i < rank_; ++i) {
      if (i) out += ", ";
      out += names()[i];
      out += '=';
      out += std::to_string(extent(i));
    }
    return out += ']';
  }

  friend constexpr bool operator==(const extents& a, const extents& b) noexcept {
    for (std::size_t i = 0; i < rank_; ++i)
      if (a.extent(i) != b.extent(i)) return false;
    return true;
  }

 private:
  template <class Given>
  constexpr void set(const Given& given) {
    constexpr std::size_t i = axes_index_of_v<axes_type, Given>;
    using own = axes_get<axes_type, Given>;
    // Checks at compile time that Given and the list's axis agree (static extents, bounds).
    using agreed [[maybe_unused]] = unify_axes<own, Given>;
    // Given's own type already checked its value; the list's axis may be stricter.
    core_detail::check_axis_extent(own::name, own::static_extent, own::bound, given.extent());
    store(i, given.extent());
  }

  constexpr void store(std::size_t i, std::size_t value) noexcept {
    if constexpr (rank_dynamic_ > 0)
      if (is_dynamic_[i]) dynamic_.values[dynamic_slot_[i]] = value;
  }

  [[no_unique_address]] core_detail::dynamic_extents_storage<rank_dynamic_> dynamic_{};
};

}  // namespace nax
