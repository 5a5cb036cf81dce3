#include <nax/core/extent.hpp>

#include <doctest/doctest.h>

#include <span>

TEST_CASE("extent markers") {
  static_assert(nax::dynamic_extent == std::dynamic_extent);
  static_assert(nax::unbounded == std::dynamic_extent);
  static_assert(nax::upto(512).max == 512);
  static_assert(nax::upto(512) == nax::bound_t{512});
  static_assert(!(nax::upto(512) == nax::upto(511)));
  static_assert(nax::dynamic == nax::dynamic_t{});
  static_assert(decltype(nax::c<768>)::value == 768);
  CHECK(nax::c<3>() == 3);
}
