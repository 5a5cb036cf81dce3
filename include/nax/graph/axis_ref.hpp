#pragma once
// How the graph's ops are told which axes to work on: by position or by name.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::graph {

/// An axis of an operand, by position or by name.
struct axis_ref {
  static constexpr std::size_t by_name = static_cast<std::size_t>(-1);
  std::size_t index = by_name;
  std::string_view name;
  axis_ref(std::size_t i) : index(i) {}  // NOLINT: implicit by design
  axis_ref(int i) : index(static_cast<std::size_t>(i)) {}
  axis_ref(std::string_view n) : name(n) {}  // NOLINT
  axis_ref(const char* n) : name(n) {}       // NOLINT
};

/// A pair of axes, one of each operand of dot_general: `{1, 0}` or `{"hidden", "hidden"}`.
struct axis_pair {
  axis_ref lhs, rhs;
};

/// slice's `stop` for "to the end of the axis".
inline constexpr std::int64_t slice_end = std::numeric_limits<std::int64_t>::max();

}  // namespace nax::graph
