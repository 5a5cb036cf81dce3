#include <nax/runtime/dyn_tensor.hpp>

#include <nax/core/axis.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(4)>;
using hidden = nax::axis<"hidden", 3>;
using other = nax::axis<"other", 3>;
using nax::dim;
using nax::dtype;

// f32[batch=2, hidden=3]
nax::shape batch_hidden(dtype t = dtype::f32) {
  return nax::shape::make(t, {dim::named("batch", 2), dim::named("hidden", 3)});
}

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

}  // namespace

TEST_CASE("a dyn_tensor allocates a zeroed, 64-byte aligned buffer for a concrete shape") {
  nax::dyn_tensor x(nax::shape::make(dtype::f32, {dim::named("batch", 2), 3}));
  CHECK(x.dtype() == dtype::f32);
  CHECK(x.rank() == 2);
  CHECK(x.size() == 6);
  CHECK(x.bytes() == 24);
  CHECK_FALSE(x.empty());
  CHECK(x.owns_data());
  CHECK(x.extent(0) == 2);
  CHECK(x.extent(1) == 3);
  CHECK(x.extent("batch") == 2);
  CHECK(x.shape()[0].name() == "batch");  // names are kept
  CHECK_FALSE(x.shape()[1].has_name());
  CHECK(x.to_string() == "f32[batch=2, 3]");
  REQUIRE(x.data() != nullptr);
  CHECK(aligned64(x.data()));
  const float* p = x.data<float>();
  CHECK(std::all_of(p, p + x.size(), [](float v) { return v == 0.0f; }));

  // Every dtype, odd sizes: still aligned and zeroed.
  for (dtype t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::u8, dtype::boolean}) {
    CAPTURE(nax::name(t));
    nax::dyn_tensor y(nax::shape::make(t, {7, dim::named("seq", 5)}));
    CHECK(y.bytes() == 35 * nax::size_of(t));
    CHECK(aligned64(y.data()));
    const auto* b = static_cast<const unsigned char*>(y.data());
    CHECK(std::all_of(b, b + y.bytes(), [](unsigned char v) { return v == 0; }));
  }
}

TEST_CASE("a dyn_tensor of a scalar, of an empty shape, and default-constructed") {
  nax::dyn_tensor s(nax::shape::make(dtype::i64, {}));
  CHECK(s.rank() == 0);
  CHECK(s.size() == 1);
  CHECK(s.bytes() == 8);
  CHECK(*s.data<std::int64_t>() == 0);
  CHECK(s.to_string() == "i64[]");

  nax::dyn_tensor e(nax::shape::make(dtype::f32, {dim::named("batch", 0), 3}));
  CHECK(e.empty());
  CHECK(e.size() == 0);
  CHECK(e.bytes() == 0);
  CHECK(e.data() == nullptr);
  CHECK(e.clone().empty());

  nax::dyn_tensor d;
  CHECK(d.to_string() == "f32[]");
  CHECK(*d.data<float>() == 0.0f);
  std::vector<nax::dyn_tensor> several(3);
  CHECK(several[2].size() == 1);
}

TEST_CASE("a dyn_tensor needs a concrete shape") {
  using nax::shape_error;
  CHECK_THROWS_WITH_AS(nax::dyn_tensor(nax::shape::make(dtype::f32, {"batch", 3})),
                       "dyn_tensor needs a concrete shape: dimension 0 (axis 'batch') of "
                       "f32[batch, 3] has no extent (give one: nax::dim::named(\"batch\", n))",
                       shape_error);
  CHECK_THROWS_WITH_AS(nax::dyn_tensor(nax::shape::make(dtype::f32, {2, nax::dynamic})),
                       "dyn_tensor needs a concrete shape: dimension 1 of f32[2, ?] has no extent",
                       shape_error);
  CHECK_THROWS_WITH_AS(
      nax::dyn_tensor(nax::shape::make(dtype::f32, {2, dim::bounded("seq", 512)})),
      "dyn_tensor needs a concrete shape: dimension 1 (axis 'seq') of f32[2, seq<=512] has no "
      "extent (give one: nax::dim::named(\"seq\", n))",
      shape_error);
  CHECK_THROWS_WITH_AS(nax::dyn_tensor::wrap(nax::shape::make(dtype::u8, {"x"}), nullptr),
                       doctest::Contains("dimension 0 (axis 'x') of u8[x] has no extent"),
                       shape_error);
  const std::size_t big = std::numeric_limits<std::size_t>::max() / 2 + 1;
  CHECK_THROWS_WITH_AS(nax::dyn_tensor(nax::shape::make(dtype::f32, {dim::named("a", big)})),
                       doctest::Contains("has more bytes than fit in size_t"), shape_error);
  const std::string message = "u8[" + std::to_string(big) + ", 2] has more bytes";
  CHECK_THROWS_WITH_AS(nax::dyn_tensor(nax::shape::make(dtype::u8, {big, 2})),
                       doctest::Contains(message.c_str()), shape_error);
  // Zero elements never overflow, whatever the other extents.
  CHECK(nax::dyn_tensor(nax::shape::make(dtype::f64, {big, big, 0})).empty());
}

TEST_CASE("copies share the buffer; clone copies it") {
  nax::dyn_tensor x(batch_hidden());
  x.fill(1.5f);
  nax::dyn_tensor y = x;
  CHECK(y.data() == x.data());
  y.data<float>()[4] = 7.0f;
  CHECK(x.data<float>()[4] == 7.0f);

  nax::dyn_tensor z = x.clone();
  CHECK(z.data() != x.data());
  CHECK(aligned64(z.data()));
  CHECK(z.owns_data());
  CHECK(z.to_string() == x.to_string());
  CHECK(z.data<float>()[0] == 1.5f);
  CHECK(z.data<float>()[4] == 7.0f);
  z.data<float>()[0] = -1.0f;
  CHECK(x.data<float>()[0] == 1.5f);

  // The buffer outlives the first handle.
  const void* p = x.data();
  x = nax::dyn_tensor();
  CHECK(y.data() == p);
  CHECK(y.data<float>()[4] == 7.0f);
}

TEST_CASE("wrap views external memory without copying or owning it") {
  alignas(64) std::array<std::int32_t, 6> buffer{1, 2, 3, 4, 5, 6};
  auto w = nax::dyn_tensor::wrap(batch_hidden(dtype::i32), buffer.data());
  CHECK(w.data() == buffer.data());
  CHECK_FALSE(w.owns_data());
  CHECK(w.size() == 6);
  w.data<std::int32_t>()[5] = 60;
  CHECK(buffer[5] == 60);
  nax::dyn_tensor copy = w;
  CHECK(copy.data() == buffer.data());
  CHECK_FALSE(copy.owns_data());
  nax::dyn_tensor deep = w.clone();
  CHECK(deep.owns_data());
  CHECK(deep.data<std::int32_t>()[5] == 60);

  // Empty shapes may wrap null.
  CHECK(nax::dyn_tensor::wrap(nax::shape::make(dtype::f32, {0}), nullptr).empty());

  CHECK_THROWS_WITH_AS(nax::dyn_tensor::wrap(batch_hidden(), nullptr),
                       "dyn_tensor::wrap: null data for f32[batch=2, hidden=3]", nax::shape_error);
  auto* bytes = reinterpret_cast<unsigned char*>(buffer.data());
  CHECK_THROWS_WITH_AS(nax::dyn_tensor::wrap(nax::shape::make(dtype::i32, {2}), bytes + 2),
                       "dyn_tensor::wrap: data for i32[2] is not aligned to 4 bytes (i32)",
                       nax::shape_error);
  CHECK(nax::dyn_tensor::wrap(nax::shape::make(dtype::u8, {2}), bytes + 1).data() == bytes + 1);
}

TEST_CASE("typed access checks the element type") {
  nax::dyn_tensor x(batch_hidden());
  const nax::dyn_tensor& cx = x;
  CHECK(cx.data<float>() == x.data());
  CHECK(x.data<const float>() == x.data());
  CHECK_THROWS_WITH_AS(x.data<double>(),
                       "dyn_tensor: element type f64 requested, but f32[batch=2, hidden=3] holds "
                       "f32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(cx.data<std::uint8_t>(),
                       "dyn_tensor: element type u8 requested, but f32[batch=2, hidden=3] holds "
                       "f32",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(x.fill(1), doctest::Contains("element type i32 requested"),
                       nax::shape_error);
  CHECK(x.data<float>()[0] == 0.0f);  // a failed fill writes nothing

  nax::dyn_tensor b(nax::shape::make(dtype::boolean, {3}));
  b.fill(true);
  CHECK(b.data<bool>()[2]);
  CHECK_THROWS_WITH_AS(b.data<std::uint8_t>(),
                       "dyn_tensor: element type u8 requested, but bool[3] holds bool",
                       nax::shape_error);
}

TEST_CASE("extent by position and by name") {
  nax::dyn_tensor x(nax::shape::make(dtype::f64, {dim::named("batch", 2), 5, dim::named("c", 4)}));
  CHECK(x.extent(1) == 5);
  CHECK(x.extent("c") == 4);
  CHECK_THROWS_WITH_AS(x.extent(3),
                       "dyn_tensor: dimension 3 is out of range for f64[batch=2, 5, c=4] (rank 3)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(x.extent("seq"), "dyn_tensor: no axis 'seq' in f64[batch=2, 5, c=4]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(x.extent(""), "dyn_tensor: no axis '' in f64[batch=2, 5, c=4]",
                       nax::shape_error);
}
