#include <nax/core/shape_error.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

TEST_CASE("shape_error is a standard invalid_argument") {
  static_assert(std::is_base_of_v<std::invalid_argument, nax::shape_error>);
  try {
    nax::core_detail::throw_shape_error("axis '", std::string_view("batch"), "' mismatch: ", 32,
                                        " vs ", std::size_t{64});
    FAIL("throw_shape_error returned");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()) == "axis 'batch' mismatch: 32 vs 64");
  }
}

TEST_CASE("message joins strings, characters and integers") {
  CHECK(nax::core_detail::message("a", 'b', std::string("c"), -1, 2u) == "abc-12");
  CHECK(nax::core_detail::message() == "");
  // Floating point in the shortest form that reads back as the same value (not as a char).
  CHECK(nax::core_detail::message("eps ", 1e-5, ", scale ", 0.5f, ", ", 1.0) ==
        "eps 1e-05, scale 0.5, 1");
}
