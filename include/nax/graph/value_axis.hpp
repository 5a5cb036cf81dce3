#pragma once
// A dynamic axis that no input has, whose extent the run computes from its scalars and extents:
// the axis a set_dimension_size gives its operand (StableHLO's runtime size), the joined axis of
// a concat along dynamic axes (the sum of their extents), and the axis of a pad by run-time
// amounts. Its size is a small postfix program
// over parameters (rank-0 integers), constants and axis extents, evaluated when a run reads its
// binding (runtime/value_axes.hpp), so that the specialization knows every extent before any
// step runs.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::graph {

/// One term of a size program: push a value, combine the two values on top, or check the one on
/// top (nonnegative: a part of the size that must not be negative, such as a pad's amount).
struct size_term {
  enum class kind : std::uint8_t {
    constant,
    parameter,
    extent,
    add,
    sub,
    mul,
    min,
    max,
    nonnegative
  };
  kind k = kind::constant;
  std::int64_t value = 0;       // constant: the value
  std::uint32_t parameter = 0;  // parameter: its position (a rank-0 i32 or i64 input)
  axis_name axis;               // extent: the axis (an input's, or an earlier value axis)
  friend bool operator==(const size_term&, const size_term&) = default;
};

struct value_axis {
  axis_name name;
  std::size_t bound = 0;        // the size must be in [0, bound]
  std::vector<size_term> size;  // postfix
  std::string op;               // what made it, for messages: "set_dimension_size", "concat", "pad"
  friend bool operator==(const value_axis&, const value_axis&) = default;
};

}  // namespace nax::graph
