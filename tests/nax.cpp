// The umbrella header compiles on its own and brings in the whole public surface.
#include <nax/nax.hpp>

#include <doctest/doctest.h>

TEST_CASE("nax.hpp gives the foundation's surface") {
  using batch = nax::axis<"batch">;
  using hidden = nax::axis<"hidden", 768>;
  auto pattern = nax::shape_of<float, batch, hidden>();
  auto concrete = nax::shape::make(nax::dtype::f32, {32, 768});
  nax::bindings b = nax::extract_bindings(pattern, concrete);
  CHECK(b.to_string() == "{batch: 32}");
  CHECK(nax::unify_axis_name("batch", "") == "batch");
  CHECK(nax::unify_shapes(pattern, nax::shape::make(nax::dtype::f32, {nax::dynamic, 768})) ==
        pattern);
  CHECK(nax::extents<batch, hidden>(batch(2)).size() == 1536);
}
