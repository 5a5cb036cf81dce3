#include <nax/core/fixed_string.hpp>

#include <doctest/doctest.h>

#include <string_view>

namespace {
template <nax::fixed_string S>
constexpr std::string_view view_of() {
  return S.view();
}
}  // namespace

TEST_CASE("fixed_string deduces its length from a literal and is a template argument") {
  constexpr nax::fixed_string s = "batch";
  static_assert(std::is_same_v<decltype(s), const nax::fixed_string<5>>);
  static_assert(s.size() == 5 && !s.empty());
  static_assert(view_of<"hidden">() == "hidden");
  CHECK(s.view() == "batch");
  CHECK(std::string_view(s.c_str()) == "batch");
  CHECK(s.c_str()[5] == '\0');
}

TEST_CASE("fixed_string compares by content across lengths") {
  constexpr nax::fixed_string a = "seq", b = "seq";
  constexpr nax::fixed_string c = "sequence";
  static_assert(a == b);
  static_assert(!(a == c));
  constexpr nax::fixed_string empty = "";
  static_assert(empty.empty() && empty.view().empty());
  CHECK(std::string_view(a) == "seq");
}
