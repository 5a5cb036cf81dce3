#pragma once
// nax::shape_error: the one exception type for every shape, axis, binding and dtype problem
// found at run time. Messages name the axis and the values involved.

#include <charconv>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace nax {

class shape_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace core_detail {

// Builds a message from string-like pieces and integers; used only on error paths.
inline void append_piece(std::string& out, std::string_view s) { out.append(s); }
inline void append_piece(std::string& out, const char* s) { out.append(s); }
inline void append_piece(std::string& out, const std::string& s) { out.append(s); }
inline void append_piece(std::string& out, char c) { out.push_back(c); }
template <class Int>
requires std::is_integral_v<Int>
inline void append_piece(std::string& out, Int v) { out.append(std::to_string(v)); }
// Shortest round-trip form (1, 0.5, 1e-05); without this overload a double would convert to char.
template <class Float>
requires std::is_floating_point_v<Float>
inline void append_piece(std::string& out, Float v) {
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, r.ptr);
}

template <class... Pieces>
std::string message(const Pieces&... pieces) {
  std::string out;
  (append_piece(out, pieces), ...);
  return out;
}

template <class... Pieces>
[[noreturn]] void throw_shape_error(const Pieces&... pieces) {
  throw shape_error(message(pieces...));
}

/// The one message of an axis whose extents disagree, after `prefix` (the op, or ""):
/// "axis 'k' mismatch: 3 vs 4", or with the two sides named, "axis 'k' mismatch: a has 3, b has 4".
[[noreturn]] inline void throw_axis_mismatch(std::string_view prefix, std::string_view axis,
                                             std::size_t a, std::size_t b) {
  throw_shape_error(prefix, "axis '", axis, "' mismatch: ", a, " vs ", b);
}
[[noreturn]] inline void throw_axis_mismatch(std::string_view prefix, std::string_view axis,
                                             std::string_view side_a, std::size_t a,
                                             std::string_view side_b, std::size_t b) {
  throw_shape_error(prefix, "axis '", axis, "' mismatch: ", side_a, " has ", a, ", ", side_b,
                    " has ", b);
}

}  // namespace core_detail
}  // namespace nax
