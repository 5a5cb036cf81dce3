#pragma once
// nax::fixed_string: a string usable as a template argument, so that axis names are types.

#include <cstddef>
#include <string_view>

namespace nax {

/// A string of N characters (plus a terminating NUL) that is a structural type, so it can be a
/// non-type template argument: `nax::axis<"batch">` deduces `fixed_string<5>`.
template <std::size_t N>
struct fixed_string {
  char data[N + 1]{};  // public: structural types need public members

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&text)[N + 1]) noexcept {  // NOLINT: implicit by design
    for (std::size_t i = 0; i <= N; ++i) data[i] = text[i];
  }

  static constexpr std::size_t size() noexcept { return N; }
  static constexpr bool empty() noexcept { return N == 0; }
  constexpr std::string_view view() const noexcept { return {data, N}; }
  constexpr operator std::string_view() const noexcept { return view(); }
  constexpr const char* c_str() const noexcept { return data; }

  template <std::size_t M>
  friend constexpr bool operator==(const fixed_string& a, const fixed_string<M>& b) noexcept {
    return a.view() == b.view();
  }
};

template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N - 1>;

}  // namespace nax
