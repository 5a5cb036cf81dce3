#pragma once
// Checks of nax::trace's Chrome JSON for the runtime tests: a strict syntax check and a
// substring count.

#include <cctype>
#include <cstddef>
#include <string_view>

namespace json_check {

// A strict JSON syntax check (RFC 8259 values; numbers, strings with escapes, nesting).
struct json_checker {
  std::string_view s;
  std::size_t i = 0;
  void space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    space();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  bool string() {
    if (!eat('"')) return false;
    while (i < s.size() && s[i] != '"') {
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      if (s[i] == '\\') ++i;
      ++i;
    }
    return i++ < s.size();
  }
  bool number() {
    const std::size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                            s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-'))
      ++i;
    return i > start;
  }
  bool value() {
    space();
    if (i >= s.size()) return false;
    if (s[i] == '{') {
      ++i;
      if (eat('}')) return true;
      do {
        space();
        if (!string() || !eat(':') || !value()) return false;
      } while (eat(','));
      return eat('}');
    }
    if (s[i] == '[') {
      ++i;
      if (eat(']')) return true;
      do {
        if (!value()) return false;
      } while (eat(','));
      return eat(']');
    }
    if (s[i] == '"') return string();
    for (std::string_view word : {"true", "false", "null"})
      if (s.substr(i, word.size()) == word) return i += word.size(), true;
    return number();
  }
  bool document() {
    const bool ok = value();
    space();
    return ok && i == s.size();
  }
};

inline std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

}  // namespace json_check
