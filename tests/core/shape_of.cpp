#include <nax/core/shape_of.hpp>

#include <nax/core/extract_bindings.hpp>

#include <doctest/doctest.h>

#include <cstdint>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 768>;

TEST_CASE("shape_of gives the runtime pattern of a typed axis list") {
  CHECK(nax::shape_of<float, batch, hidden>().to_string() == "f32[batch, 768]");
  CHECK(nax::shape_of<double, batch, seq, hidden>().to_string() == "f64[batch, seq<=512, 768]");
  CHECK(nax::shape_of<std::int32_t>().to_string() == "i32[]");
  auto s = nax::shape_of<float, batch, hidden>();
  CHECK(s[1] == nax::dim::named("hidden", 768));  // static axes keep their names
  CHECK(s[0] == nax::dim("batch"));
  CHECK(nax::dim_of<seq>() == nax::dim::bounded("seq", 512));
}

TEST_CASE("shape_of extents gives the concrete shape, which extracts back to the bindings") {
  nax::extents<batch, seq, hidden> e(batch(32), seq(128));
  auto concrete = nax::shape_of<float>(e);
  CHECK(concrete.to_string() == "f32[32, 128, 768]");
  CHECK(concrete.is_fully_concrete());
  auto pattern = nax::shape_of<float, batch, seq, hidden>();
  CHECK(nax::extract_bindings(pattern, concrete).to_string() == "{batch: 32, seq: 128}");
  CHECK(pattern.resolve(nax::bindings{{"batch", 32}, {"seq", 128}}) == concrete);
}
