#include <nax/core/axis.hpp>

#include <doctest/doctest.h>

#include <cstdint>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 768>;
using explicit_dynamic = nax::axis<"time", nax::dynamic>;

TEST_CASE("an axis type exposes its name, kind, static extent and bound") {
  static_assert(batch::name == "batch" && seq::name == "seq" && hidden::name == "hidden");
  static_assert(batch::is_dynamic && !batch::is_static && !batch::is_bounded);
  static_assert(batch::static_extent == nax::dynamic_extent && batch::bound == nax::unbounded);
  static_assert(seq::is_dynamic && seq::is_bounded && seq::bound == 512);
  static_assert(seq::static_extent == nax::dynamic_extent);
  static_assert(hidden::is_static && !hidden::is_dynamic && !hidden::is_bounded);
  static_assert(hidden::static_extent == 768 && hidden::bound == 768);
  static_assert(std::is_same_v<explicit_dynamic, nax::axis<"time">>);
  static_assert(nax::is_axis_v<batch> && !nax::is_axis_v<int>);
  static_assert(nax::axis_type<const hidden&>);
  static_assert(nax::same_axis_name_v<hidden, nax::axis<"hidden">>);
  static_assert(!nax::same_axis_name_v<hidden, batch>);
  CHECK(hidden::fixed_name.view() == "hidden");
}

TEST_CASE("an axis value carries its extent; a static one stores nothing") {
  static_assert(sizeof(hidden) == 1);
  static_assert(sizeof(batch) == sizeof(std::size_t));
  constexpr batch b(32);
  static_assert(b.extent() == 32);
  static_assert(hidden().extent() == 768);
  static_assert(hidden(768).extent() == 768);
  static_assert(hidden(nax::c<768>).extent() == 768);
  static_assert(seq(nax::c<512>).extent() == 512);
  CHECK(batch(std::int64_t{0}).extent() == 0);
  CHECK(batch(7u) == batch(7));
  CHECK_FALSE(batch(7) == batch(8));
}

TEST_CASE("a static axis given another extent throws naming the axis and both extents") {
  CHECK_THROWS_WITH_AS(hidden(512), "axis 'hidden' is static with extent 768, got 512",
                       nax::shape_error);
}

TEST_CASE("a bounded axis above its bound throws naming the axis, the value and the bound") {
  CHECK(seq(512).extent() == 512);
  CHECK_THROWS_WITH_AS(seq(513), "axis 'seq': extent 513 exceeds its bound 512", nax::shape_error);
}

TEST_CASE("a negative extent throws") {
  CHECK_THROWS_WITH_AS(batch(-1), "axis 'batch': extent -1 is negative", nax::shape_error);
  CHECK_THROWS_WITH_AS(hidden(-768), "axis 'hidden': extent -768 is negative", nax::shape_error);
}
