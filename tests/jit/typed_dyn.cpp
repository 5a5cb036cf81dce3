#include <nax/jit/typed_dyn.hpp>

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

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

}  // namespace

TEST_CASE("typed -> dyn -> typed shares one buffer") {
  nax::tensor<float, batch, hidden> t(batch(2));
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = float(i);

  nax::dyn_tensor d = nax::to_dyn(t);
  CHECK(d.data() == t.data());
  CHECK_FALSE(d.owns_data());
  CHECK(d.to_string() == "f32[batch=2, hidden=3]");
  CHECK(d.shape() ==
        nax::shape::make(dtype::f32, {dim::named("batch", 2), dim::named("hidden", 3)}));

  nax::tensor_view<float, batch, hidden> v = nax::typed_view<float, batch, hidden>(d);
  CHECK(v.data() == t.data());
  CHECK(v.extent<batch>() == 2);
  CHECK(v.is_contiguous());
  v(1, 2) = 42.0f;
  CHECK(t(1, 2) == 42.0f);

  // The view may be more specific than the tensor it came from, or less.
  auto fixed = nax::typed_view<float, nax::axis<"batch", 2>, nax::axis<"hidden">>(d);
  CHECK(fixed.data() == t.data());
  CHECK(fixed.extent(1) == 3);
  const nax::dyn_tensor& cd = d;
  nax::tensor_view<const float, batch, hidden> cv = nax::typed_view<float, batch, hidden>(cd);
  CHECK(cv(1, 2) == 42.0f);

  // Unnamed dims match any axis name.
  nax::dyn_tensor u = nax::dyn_tensor::wrap(nax::shape::make(dtype::f32, {2, 3}), t.data());
  CHECK(nax::typed_view<float, batch, other>(u).data() == t.data());
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
  CHECK(nax::typed_view<float, batch, seq, hidden>(shared)(1, 3, 2) == 3.0f);
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

TEST_CASE("typed_view checks dtype, rank, names and extents, naming what differs") {
  using nax::shape_error;
  nax::dyn_tensor x(nax::shape::make(dtype::f32, {dim::named("batch", 2), dim::named("seq", 5)}));
  CHECK_THROWS_WITH_AS((nax::typed_view<double, batch, seq>(x)),
                       "dyn_tensor: element type f64 requested, but f32[batch=2, seq=5] holds f32",
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch>(x)),
                       "dyn_tensor: a view over [batch] has rank 1, but f32[batch=2, seq=5] has "
                       "rank 2",
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch, seq, hidden>(x)),
                       doctest::Contains("a view over [batch, seq, hidden] has rank 3"),
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float>(x)), doctest::Contains("a view over [] has rank 0"),
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float, seq, batch>(x)),
                       "dyn_tensor: dimension 0 of f32[batch=2, seq=5] is axis 'batch', but the "
                       "view has axis 'seq' there",
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch, nax::axis<"seq", 4>>(x)),
                       "dyn_tensor: axis 'seq' is static with extent 4, but dimension 1 of "
                       "f32[batch=2, seq=5] has 5",
                       shape_error);
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch, seq>(x)),  // seq is upto(4)
                       "dyn_tensor: axis 'seq' is bounded by 4, but dimension 1 of "
                       "f32[batch=2, seq=5] has 5",
                       shape_error);
  const nax::dyn_tensor& cx = x;
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch, other>(cx)),
                       doctest::Contains("dimension 1 of f32[batch=2, seq=5] is axis 'seq', but "
                                         "the view has axis 'other' there"),
                       shape_error);
  // Unnamed dims are still checked for their extent.
  nax::dyn_tensor u(nax::shape::make(dtype::f32, {2, 4}));
  CHECK_THROWS_WITH_AS((nax::typed_view<float, batch, hidden>(u)),
                       "dyn_tensor: axis 'hidden' is static with extent 3, but dimension 1 of "
                       "f32[2, 4] has 4",
                       shape_error);
  CHECK(nax::typed_view<float, batch, seq>(u).extent<seq>() == 4);
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
