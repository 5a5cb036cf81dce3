#pragma once
// nax::dim: one dimension of a runtime shape: static, dynamic, or dynamic with an upper bound,
// named or unnamed.

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>

#include <nax/core/axis_name.hpp>
#include <nax/core/extent.hpp>
#include <nax/core/shape_error.hpp>

namespace nax {

/// One dimension of a nax::shape. Converts implicitly from what a shape literal is made of:
///
///     512                     static, unnamed            "512"
///     "batch"                 dynamic, named             "batch"
///     nax::dynamic  (or -1)   dynamic, unnamed           "?"
///     nax::upto(512)          dynamic, unnamed, bounded  "?<=512"
///     dim::bounded("seq", 512)   dynamic, named, bounded "seq<=512"
///     dim::named("hidden", 768)  static, named           "768" (the name is kept for errors
///                                                         and for matching by name)
class dim {
 public:
  /// An unnamed dynamic dimension.
  constexpr dim() noexcept = default;
  /// A static extent; -1 means an unnamed dynamic dimension (as in XLA's shapes).
  template <std::integral Int>
  constexpr dim(Int extent) {  // NOLINT: implicit by design
    if constexpr (std::is_signed_v<Int>) {
      if (extent == -1) return;
      if (extent < 0)
        core_detail::throw_shape_error("dimension extent ", extent,
                                  " is negative (use -1 or nax::dynamic for a dynamic one)");
    }
    extent_ = static_cast<std::size_t>(extent);
  }
  constexpr dim(dynamic_t) noexcept {}              // NOLINT
  dim(bound_t b) : bound_(checked_bound(b.max)) {}  // NOLINT
  dim(axis_name name) noexcept : name_(name) {}     // NOLINT
  dim(std::string_view name) : name_(name) {}       // NOLINT
  dim(const char* name) : name_(name) {}            // NOLINT
  dim(const std::string& name) : name_(name) {}     // NOLINT

  /// A named dynamic dimension whose extent is at most `bound`.
  static dim bounded(axis_name name, std::size_t bound) {
    dim d(name);
    d.bound_ = checked_bound(bound);
    return d;
  }
  /// A named static dimension.
  static dim named(axis_name name, std::size_t extent) {
    dim d(name);
    d.extent_ = extent;
    return d;
  }

  axis_name name() const noexcept { return name_; }
  bool has_name() const noexcept { return !name_.empty(); }
  bool is_static() const noexcept { return extent_ != dynamic_extent; }
  bool is_dynamic() const noexcept { return extent_ == dynamic_extent; }
  bool has_bound() const noexcept { return bound_ != unbounded; }
  /// The static extent, or nax::dynamic_extent.
  std::size_t extent() const noexcept { return extent_; }
  /// The bound of a bounded dynamic dimension, or nax::unbounded.
  std::size_t bound() const noexcept { return bound_; }

  /// This dimension with its extent fixed to `value` (the name stays): nax::shape_error if it
  /// is static with another extent or `value` is above its bound.
  dim resolved(std::size_t value) const {
    if (is_static()) {
      if (value != extent_)
        core_detail::throw_shape_error(describe(), " is static with extent ", extent_, ", got ", value);
      return *this;
    }
    if (value > bound_)
      core_detail::throw_shape_error(describe(), ": extent ", value, " exceeds its bound ", bound_);
    return named(name_, value);
  }

  /// "batch", "seq<=512", "768", "?" or "?<=512".
  std::string to_string() const {
    std::string out;
    if (is_static()) return std::to_string(extent_);
    out = has_name() ? std::string(name_.view()) : std::string("?");
    if (has_bound()) out += "<=" + std::to_string(bound_);
    return out;
  }

  /// "axis 'batch'" or "an unnamed dimension", for messages.
  std::string describe() const {
    return has_name() ? core_detail::message("axis '", name_.view(), "'")
                      : std::string("an unnamed dimension");
  }

  friend bool operator==(const dim& a, const dim& b) noexcept {
    return a.name_ == b.name_ && a.extent_ == b.extent_ && a.bound_ == b.bound_;
  }

 private:
  static std::size_t checked_bound(std::size_t bound) {
    if (bound == 0 || bound == unbounded)
      core_detail::throw_shape_error("a bound must be a positive extent, got ", bound);
    return bound;
  }

  axis_name name_;
  std::size_t extent_ = dynamic_extent;
  std::size_t bound_ = unbounded;
};

}  // namespace nax
