#pragma once
// nax::axis: a named axis as a type, with a static, dynamic or bounded extent. A value of an axis
// type carries its extent at run time: `batch(32)`.

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <nax/core/diagnostics.hpp>
#include <nax/core/extent.hpp>
#include <nax/core/fixed_string.hpp>
#include <nax/core/shape_error.hpp>

namespace nax {
namespace core_detail {

template <auto Extent>
struct extent_kind {
  static constexpr bool valid = false;
};
template <std::integral auto Extent>
struct extent_kind<Extent> {
  static constexpr bool valid = Extent > 0;
  static constexpr bool is_static = true, is_bounded = false;
  static constexpr std::size_t static_extent = static_cast<std::size_t>(Extent);
  static constexpr std::size_t bound = static_extent;
};
template <>
struct extent_kind<dynamic> {
  static constexpr bool valid = true;
  static constexpr bool is_static = false, is_bounded = false;
  static constexpr std::size_t static_extent = dynamic_extent, bound = unbounded;
};
template <bound_t Bound>
struct extent_kind<Bound> {
  static constexpr bool valid = Bound.max > 0 && Bound.max != unbounded;
  static constexpr bool is_static = false, is_bounded = true;
  static constexpr std::size_t static_extent = dynamic_extent, bound = Bound.max;
};

struct no_extent {};

/// Checks a run-time extent against an axis's static extent or bound (the one place that does).
constexpr void check_axis_extent(std::string_view name, std::size_t static_extent,
                                 std::size_t bound, std::size_t n) {
  if (static_extent != dynamic_extent && n != static_extent)
    throw_shape_error("axis '", name, "' is static with extent ", static_extent, ", got ", n);
  if (n > bound) throw_shape_error("axis '", name, "': extent ", n, " exceeds its bound ", bound);
}

}  // namespace core_detail

/// A named axis. `Extent` is a positive integer (static), `nax::dynamic` (the default) or
/// `nax::upto(N)` (dynamic, at most N). The type carries the facts; a value carries the extent:
///
///     using batch  = nax::axis<"batch">;                 // batch(32): extent 32
///     using seq    = nax::axis<"seq", nax::upto(512)>;   // seq(600) throws nax::shape_error
///     using hidden = nax::axis<"hidden", 768>;           // hidden() or hidden(nax::c<768>)
///
/// A value of a static axis stores nothing (sizeof 1); of a dynamic axis, one std::size_t.
template <fixed_string Name, auto Extent = dynamic>
class axis {
  using kind = core_detail::extent_kind<Extent>;
  // An error here means the axis was declared with an extent that is not a positive integer,
  // nax::dynamic or nax::upto(N) with N > 0.
  static_assert(
      core_detail::require<kind::valid, error::axis_extent_must_be_positive_integer_or_dynamic_or_upto<
                                       core_detail::diagnostic_name<Name>>>);

 public:
  static constexpr fixed_string<Name.size()> fixed_name = Name;
  /// The Extent argument as given (an integer, nax::dynamic or nax::upto(N)).
  static constexpr auto extent_spec = Extent;
  static constexpr std::string_view name = fixed_name.view();
  static constexpr bool is_static = kind::is_static;
  static constexpr bool is_dynamic = !kind::is_static;
  static constexpr bool is_bounded = kind::is_bounded;
  /// The extent of a static axis; nax::dynamic_extent otherwise.
  static constexpr std::size_t static_extent = kind::static_extent;
  /// The largest extent the axis may take: the bound of `upto(N)`, the extent of a static axis,
  /// nax::unbounded for a plain dynamic axis.
  static constexpr std::size_t bound = kind::bound;

  /// A static axis needs no value.
  constexpr axis() noexcept requires is_static = default;

  /// The extent at run time. For a static axis it must equal the static extent and for a
  /// bounded one it must not exceed the bound; otherwise nax::shape_error (a compile error when
  /// evaluated as a constant expression).
  template <std::integral Int>
  constexpr explicit axis(Int extent) : value_(checked(extent)) {}

  /// An extent known at compile time, checked at compile time.
  template <std::size_t N>
  constexpr explicit axis(constant<N>) noexcept : value_(checked_constant<N>()) {}

  constexpr std::size_t extent() const noexcept {
    if constexpr (is_static)
      return static_extent;
    else
      return value_;
  }

  friend constexpr bool operator==(const axis& a, const axis& b) noexcept {
    return a.extent() == b.extent();
  }

 private:
  using storage = std::conditional_t<is_static, core_detail::no_extent, std::size_t>;

  template <class Int>
  static constexpr storage checked(Int extent) {
    if constexpr (std::is_signed_v<Int>) {
      if (extent < 0)
        core_detail::throw_shape_error("axis '", name, "': extent ", extent, " is negative");
    }
    const auto n = static_cast<std::size_t>(extent);
    core_detail::check_axis_extent(name, static_extent, bound, n);
    if constexpr (is_static)
      return {};
    else
      return n;
  }

  template <std::size_t N>
  static constexpr storage checked_constant() noexcept {
    // An error here means a static axis was given a compile-time extent other than its own.
    static_assert(core_detail::require < !is_static || N == static_extent,
                  error::static_axis_given_other_extent < core_detail::diagnostic_name<Name>,
                  static_extent, N >>);
    // An error here means a bounded axis was given a compile-time extent above its bound.
    static_assert(core_detail::require<N <= bound, error::axis_static_extent_exceeds_bound<
                                                  core_detail::diagnostic_name<Name>, N, bound>>);
    if constexpr (is_static)
      return {};
    else
      return N;
  }

  [[no_unique_address]] storage value_{};
};

/// True for the types made by nax::axis.
template <class T>
inline constexpr bool is_axis_v = false;
template <fixed_string Name, auto Extent>
inline constexpr bool is_axis_v<axis<Name, Extent>> = true;

template <class T>
concept axis_type = is_axis_v<std::remove_cvref_t<T>>;

/// Two axis types share a name.
template <class A, class B>
inline constexpr bool same_axis_name_v = A::name == B::name;

}  // namespace nax
