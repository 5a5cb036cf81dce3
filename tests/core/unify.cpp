#include <nax/core/unify.hpp>

#include <doctest/doctest.h>

using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("unify_axis_name") {
  CHECK(nax::unify_axis_name("batch", "") == "batch");
  CHECK(nax::unify_axis_name("", "batch") == "batch");
  CHECK(nax::unify_axis_name("batch", "batch") == "batch");
  CHECK(nax::unify_axis_name("", "").empty());
  CHECK_THROWS_WITH_AS(nax::unify_axis_name("batch", "time"),
                       "incompatible axis names: 'batch' vs 'time'", nax::shape_error);
}

TEST_CASE("unify_dims: names, static beats dynamic, the smaller bound wins") {
  CHECK(nax::unify_dims("batch", nax::dynamic) == dim("batch"));
  CHECK(nax::unify_dims(nax::dynamic, "batch") == dim("batch"));
  CHECK(nax::unify_dims("batch", 32) == dim::named("batch", 32));
  CHECK(nax::unify_dims(512, 512) == dim(512));
  CHECK(nax::unify_dims(dim::bounded("seq", 512), dim::bounded("seq", 256)) ==
        dim::bounded("seq", 256));
  CHECK(nax::unify_dims(nax::upto(8), "seq") == dim::bounded("seq", 8));
  CHECK(nax::unify_dims(dim::bounded("seq", 512), 100) == dim::named("seq", 100));
  CHECK(nax::unify_dims(dim::bounded("seq", 512), 512) == dim::named("seq", 512));
}

TEST_CASE("unify_dims errors") {
  CHECK_THROWS_WITH_AS(nax::unify_dims(dim::named("hidden", 768), 512),
                       "axis 'hidden' mismatch: 768 vs 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::unify_dims(3, 4), "dimension mismatch: 3 vs 4", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::unify_dims(dim::bounded("seq", 512), 600),
                       "axis 'seq': static extent 600 exceeds bound 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::unify_dims("batch", "time"),
                       "incompatible axis names: 'batch' vs 'time'", nax::shape_error);
}

TEST_CASE("unify_shapes for binary ops") {
  auto a = shape::make(dtype::f32, {"batch", 512});
  auto b = shape::make(dtype::f32, {nax::dynamic, 512});
  CHECK(nax::unify_shapes(a, b) == a);
  CHECK(nax::unify_shapes(b, a) == a);
  CHECK(nax::unify_shapes(shape::make(dtype::f32, {"batch", nax::upto(8)}),
                          shape::make(dtype::f32, {32, dim::bounded("x", 4)}))
            .to_string() == "f32[32, x<=4]");
  CHECK(nax::unify_shapes(shape(), shape()) == shape());
}

TEST_CASE("unify_shapes errors name both shapes and the dimension") {
  auto a = shape::make(dtype::f32, {"batch", 512});
  CHECK_THROWS_WITH_AS(nax::unify_shapes(a, shape::make(dtype::f32, {"time", 512})),
                       "cannot unify f32[batch, 512] with f32[time, 512]: dimension 0: "
                       "incompatible axis names: 'batch' vs 'time'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::unify_shapes(a, shape::make(dtype::f32, {"batch", 256})),
                       "cannot unify f32[batch, 512] with f32[batch, 256]: dimension 1: "
                       "dimension mismatch: 512 vs 256",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(
      nax::unify_shapes(a, shape::make(dtype::f64, {"batch", 512})),
      "cannot unify f32[batch, 512] with f64[batch, 512]: dtype mismatch: f32 vs f64",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::unify_shapes(a, shape::make(dtype::f32, {"batch"})),
                       "cannot unify f32[batch, 512] with f32[batch]: rank mismatch: 2 vs 1",
                       nax::shape_error);
}
