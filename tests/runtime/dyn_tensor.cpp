#include <nax/runtime/dyn_tensor.hpp>

#include <nax/typed/layout.hpp>

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

TEST_CASE("typed -> dyn -> typed shares one buffer") {
  nax::tensor<float, batch, hidden> t(batch(2));
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = float(i);

  nax::dyn_tensor d = nax::to_dyn(t);
  CHECK(d.data() == t.data());
  CHECK_FALSE(d.owns_data());
  CHECK(d.to_string() == "f32[batch=2, hidden=3]");
  CHECK(d.shape() ==
        nax::shape::make(dtype::f32, {dim::named("batch", 2), dim::named("hidden", 3)}));

  nax::tensor_view<float, batch, hidden> v = d.view<float, batch, hidden>();
  CHECK(v.data() == t.data());
  CHECK(v.extent<batch>() == 2);
  CHECK(v.is_contiguous());
  v(1, 2) = 42.0f;
  CHECK(t(1, 2) == 42.0f);

  // The view may be more specific than the tensor it came from, or less.
  auto fixed = d.view<float, nax::axis<"batch", 2>, nax::axis<"hidden">>();
  CHECK(fixed.data() == t.data());
  CHECK(fixed.extent(1) == 3);
  const nax::dyn_tensor& cd = d;
  nax::tensor_view<const float, batch, hidden> cv = cd.view<float, batch, hidden>();
  CHECK(cv(1, 2) == 42.0f);

  // Unnamed dims match any axis name.
  nax::dyn_tensor u = nax::dyn_tensor::wrap(nax::shape::make(dtype::f32, {2, 3}), t.data());
  CHECK(u.view<float, batch, other>().data() == t.data());
}

TEST_CASE("to_dyn of an rvalue tensor takes its buffer and keeps it alive") {
  nax::dyn_tensor d;
  const float* p = nullptr;
  {
    nax::tensor<float, batch, seq, hidden> t(batch(2), seq(4));
    t.fill(3.0f);
    p = t.data();
    d = nax::to_dyn(std::move(t));
  }
  CHECK(d.data() == p);
  CHECK(d.owns_data());
  CHECK(aligned64(d.data()));
  CHECK(d.to_string() == "f32[batch=2, seq=4, hidden=3]");
  CHECK(d.data<float>()[23] == 3.0f);
  nax::dyn_tensor shared = d;
  d = nax::dyn_tensor();
  CHECK(shared.view<float, batch, seq, hidden>()(1, 3, 2) == 3.0f);
}

TEST_CASE("to_dyn of a view needs it dense and row-major") {
  nax::tensor<std::int64_t, batch, hidden> t(batch(4));
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = std::int64_t(i);

  // Rows of a row-major tensor are contiguous.
  auto rows = nax::slice<batch>(t, 1, 3);
  nax::dyn_tensor r = nax::to_dyn(rows);
  CHECK(r.data() == t.data() + 3);
  CHECK(r.to_string() == "i64[batch=2, hidden=3]");
  CHECK(r.data<std::int64_t>()[0] == 3);

  // A const view gives a dyn_tensor too (which aliases it).
  nax::tensor_view<const std::int64_t, batch, hidden> cv = t.view();
  CHECK(nax::to_dyn(cv).data() == t.data());
  const auto& ct = t;
  CHECK(nax::to_dyn(ct).data() == t.data());

  // An extent-1 axis may have any stride.
  nax::tensor_view<std::int64_t, batch> single(t.data() + 2, batch(1));
  nax::tensor_view<std::int64_t, batch, hidden> odd(t.data(), nax::extents<batch, hidden>(batch(1)),
                                                    {99, 1});
  CHECK(nax::to_dyn(odd).data() == t.data());
  CHECK(nax::to_dyn(single).data<std::int64_t>()[0] == 2);

  CHECK_THROWS_WITH_AS(nax::to_dyn(nax::permute<hidden, batch>(t)),
                       "to_dyn: the view of [hidden=3, batch=4] is not contiguous row-major "
                       "(strides [1, 3]); copy it into a nax::tensor first",
                       nax::shape_error);
  using inner = nax::axis<"inner">;
  nax::tensor<std::int64_t, batch, inner> w(batch(2), inner(4));
  CHECK_THROWS_WITH_AS(nax::to_dyn(nax::slice<inner>(w, 0, 2)),
                       doctest::Contains("[batch=2, inner=2] is not contiguous row-major "
                                         "(strides [4, 1])"),
                       nax::shape_error);
}

TEST_CASE("view checks dtype, rank, names and extents, naming what differs") {
  using nax::shape_error;
  nax::dyn_tensor x(nax::shape::make(dtype::f32, {dim::named("batch", 2), dim::named("seq", 5)}));
  CHECK_THROWS_WITH_AS((x.view<double, batch, seq>()),
                       "dyn_tensor: element type f64 requested, but f32[batch=2, seq=5] holds f32",
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float, batch>()),
                       "dyn_tensor: a view over [batch] has rank 1, but f32[batch=2, seq=5] has "
                       "rank 2",
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float, batch, seq, hidden>()),
                       doctest::Contains("a view over [batch, seq, hidden] has rank 3"),
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float>()), doctest::Contains("a view over [] has rank 0"),
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float, seq, batch>()),
                       "dyn_tensor: dimension 0 of f32[batch=2, seq=5] is axis 'batch', but the "
                       "view has axis 'seq' there",
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float, batch, nax::axis<"seq", 4>>()),
                       "dyn_tensor: axis 'seq' is static with extent 4, but dimension 1 of "
                       "f32[batch=2, seq=5] has 5",
                       shape_error);
  CHECK_THROWS_WITH_AS((x.view<float, batch, seq>()),  // seq is upto(4)
                       "dyn_tensor: axis 'seq' is bounded by 4, but dimension 1 of "
                       "f32[batch=2, seq=5] has 5",
                       shape_error);
  const nax::dyn_tensor& cx = x;
  CHECK_THROWS_WITH_AS((cx.view<float, batch, other>()),
                       doctest::Contains("dimension 1 of f32[batch=2, seq=5] is axis 'seq', but "
                                         "the view has axis 'other' there"),
                       shape_error);
  // Unnamed dims are still checked for their extent.
  nax::dyn_tensor u(nax::shape::make(dtype::f32, {2, 4}));
  CHECK_THROWS_WITH_AS((u.view<float, batch, hidden>()),
                       "dyn_tensor: axis 'hidden' is static with extent 3, but dimension 1 of "
                       "f32[2, 4] has 4",
                       shape_error);
  CHECK(u.view<float, batch, seq>().extent<seq>() == 4);
}

TEST_CASE("from_dyn copies into an owning tensor, with the same checks") {
  nax::dyn_tensor x(nax::shape::make(dtype::f64, {dim::named("batch", 2), 3}));
  for (std::size_t i = 0; i < x.size(); ++i) x.data<double>()[i] = double(i) * 0.5;
  nax::tensor<double, batch, hidden> t = nax::from_dyn<double, batch, hidden>(x);
  CHECK(t.data() != x.data());
  CHECK(t.extent<batch>() == 2);
  CHECK(t(1, 2) == 2.5);
  t(0, 0) = 9.0;
  CHECK(x.data<double>()[0] == 0.0);

  CHECK_THROWS_WITH_AS((nax::from_dyn<float, batch, hidden>(x)),
                       "dyn_tensor: element type f32 requested, but f64[batch=2, 3] holds f64",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::from_dyn<double, seq, hidden>(x)),
                       doctest::Contains("is axis 'batch', but the view has axis 'seq' there"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::from_dyn<double, batch, nax::axis<"hidden", 4>>(x)),
                       doctest::Contains("axis 'hidden' is static with extent 4, but dimension 1"),
                       nax::shape_error);

  nax::dyn_tensor e(nax::shape::make(dtype::f64, {dim::named("batch", 0), 3}));
  CHECK((nax::from_dyn<double, batch, hidden>(e)).size() == 0);
}
