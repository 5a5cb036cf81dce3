#include <nax/typed/tensor_view.hpp>

#include <nax/typed/tensor.hpp>

#include <doctest/doctest.h>

#include <array>
#include <vector>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 4>;

TEST_CASE("a view over existing memory, row-major by default") {
  std::vector<float> data(8);
  for (int i = 0; i < 8; ++i) data[i] = float(i);
  nax::tensor_view<float, batch, hidden> v(data.data(), batch(2));
  CHECK(v.size() == 8);
  CHECK(v.extent<batch>() == 2);
  CHECK(v.stride<batch>() == 4);
  CHECK(v.stride<hidden>() == 1);
  CHECK(v.is_contiguous());
  CHECK(v(1, 3) == 7);
  v(0, 1) = 100;
  CHECK(data[1] == 100);
  nax::tensor_view<const float, batch, hidden> cv = v;
  CHECK(cv(0, 1) == 100);
}

TEST_CASE("strided views: a transposed reading of the same memory") {
  std::vector<float> data(8);
  for (int i = 0; i < 8; ++i) data[i] = float(i);
  // The same 2 x 4 memory read as (hidden, batch): strides 1 and 4.
  nax::tensor_view<float, hidden, batch> t(data.data(), nax::extents<hidden, batch>(batch(2)),
                                           std::array<std::ptrdiff_t, 2>{1, 4});
  CHECK_FALSE(t.is_contiguous());
  CHECK(t(3, 1) == 7);
  CHECK(t(1, 0) == 1);
}

TEST_CASE("assigning through a view writes the viewed memory") {
  nax::tensor<float, batch, hidden> x(batch(2));
  x.fill(0);
  auto v = x.view();
  v = 5.0f;
  for (float e : x) CHECK(e == 5);
  v += 1.0f;
  v *= 2.0f;
  v -= 2.0f;
  v /= 5.0f;
  for (float e : x) CHECK(e == 2);
}

TEST_CASE("a view from a pointer refuses null data (unless empty) and misaligned data") {
  CHECK_THROWS_WITH_AS((nax::tensor_view<float, batch, hidden>(nullptr, batch{2})),
                       "nax::tensor_view: null data for [batch=2, hidden=4]", nax::shape_error);
  CHECK((nax::tensor_view<float, batch, hidden>(nullptr, batch{0}).data() == nullptr));
  alignas(8) static unsigned char bytes[64] = {};
  CHECK_THROWS_WITH_AS(
      (nax::tensor_view<const double, hidden>(reinterpret_cast<const double*>(bytes + 4))),
      "nax::tensor_view: data for [hidden=4] is not aligned to 8 bytes", nax::shape_error);
  CHECK(nax::tensor_view<const double, hidden>(reinterpret_cast<const double*>(bytes + 8)).size() ==
        4);
}
