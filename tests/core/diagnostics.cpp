// The failing side of these checks is in tests/compile_fail/; here, the passing side.
#include <nax/core/diagnostics.hpp>

#include <doctest/doctest.h>

#include <type_traits>

namespace {
struct never_defined;
}

TEST_CASE("require raises nothing when the condition holds") {
  static_assert(nax::core_detail::require<true, never_defined>);
#if defined(__clang__)
  static_assert(
      std::is_same_v<nax::core_detail::diagnostic_name<"ab">, nax::error::name<'a', 'b'>>);
#else
  static_assert(std::is_same_v<nax::core_detail::diagnostic_name<"ab">, nax::error::name<"ab">>);
#endif
  CHECK(true);
}
