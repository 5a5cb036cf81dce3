#pragma once
// nax::shape_error: the one exception type for every shape, axis, binding and dtype problem
// found at run time. Messages name the axis and the values involved.

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace nax {

class shape_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

// Builds a message from string-like pieces and integers; used only on error paths.
inline void append_piece(std::string& out, std::string_view s) { out.append(s); }
inline void append_piece(std::string& out, const char* s) { out.append(s); }
inline void append_piece(std::string& out, const std::string& s) { out.append(s); }
inline void append_piece(std::string& out, char c) { out.push_back(c); }
template <class Int>
requires std::is_integral_v<Int>
inline void append_piece(std::string& out, Int v) { out.append(std::to_string(v)); }

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

}  // namespace detail
}  // namespace nax
