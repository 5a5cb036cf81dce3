#include <nax/core/dim.hpp>

#include <doctest/doctest.h>

TEST_CASE("the kinds of dimension") {
  nax::dim s = 512, n = "batch", u = nax::dynamic, minus_one = -1, ub = nax::upto(64);
  nax::dim nb = nax::dim::bounded("seq", 512), ns = nax::dim::named("hidden", 768);
  CHECK((s.is_static() && !s.has_name() && s.extent() == 512 && !s.has_bound()));
  CHECK((n.is_dynamic() && n.name() == "batch" && n.extent() == nax::dynamic_extent));
  CHECK((u.is_dynamic() && !u.has_name() && !u.has_bound()));
  CHECK(minus_one == u);
  CHECK(nax::dim() == u);
  CHECK((ub.is_dynamic() && ub.has_bound() && ub.bound() == 64 && !ub.has_name()));
  CHECK((nb.is_dynamic() && nb.bound() == 512 && nb.name() == "seq"));
  CHECK((ns.is_static() && ns.extent() == 768 && ns.name() == "hidden"));
  CHECK(nax::dim(0).extent() == 0);
  CHECK(nax::dim(std::string("batch")) == n);
  CHECK(nax::dim(nax::axis_name("batch")) == n);
  CHECK(nax::dim("") == u);
}

TEST_CASE("to_string and describe") {
  CHECK(nax::dim(512).to_string() == "512");
  CHECK(nax::dim("batch").to_string() == "batch");
  CHECK(nax::dim(nax::dynamic).to_string() == "?");
  CHECK(nax::dim(nax::upto(8)).to_string() == "?<=8");
  CHECK(nax::dim::bounded("seq", 512).to_string() == "seq<=512");
  CHECK(nax::dim::named("hidden", 768).to_string() == "768");
  CHECK(nax::dim("batch").describe() == "axis 'batch'");
  CHECK(nax::dim(3).describe() == "an unnamed dimension");
}

TEST_CASE("equality looks at name, extent and bound") {
  CHECK(nax::dim(3) == nax::dim(3));
  CHECK_FALSE(nax::dim(3) == nax::dim::named("x", 3));
  CHECK_FALSE(nax::dim("seq") == nax::dim::bounded("seq", 4));
  CHECK_FALSE(nax::dim::bounded("seq", 4) == nax::dim::bounded("seq", 5));
}

TEST_CASE("resolved fixes the extent and keeps the name") {
  CHECK(nax::dim("batch").resolved(32) == nax::dim::named("batch", 32));
  CHECK(nax::dim::bounded("seq", 512).resolved(512) == nax::dim::named("seq", 512));
  CHECK(nax::dim(7).resolved(7) == nax::dim(7));
  CHECK_THROWS_WITH_AS(nax::dim::bounded("seq", 512).resolved(513),
                       "axis 'seq': extent 513 exceeds its bound 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::dim::named("hidden", 768).resolved(5),
                       "axis 'hidden' is static with extent 768, got 5", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::dim(nax::upto(2)).resolved(3),
                       "an unnamed dimension: extent 3 exceeds its bound 2", nax::shape_error);
}

TEST_CASE("bad dimensions throw") {
  CHECK_THROWS_WITH_AS(nax::dim(-2),
                       "dimension extent -2 is negative (use -1 or nax::dynamic for a dynamic one)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::dim::bounded("seq", 0), "a bound must be a positive extent, got 0",
                       nax::shape_error);
  CHECK_THROWS_AS(nax::dim(nax::upto(0)), nax::shape_error);
}
