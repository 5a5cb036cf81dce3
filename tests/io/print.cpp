#include <nax/io/print.hpp>

#include <nax/typed/elementwise.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 3>;

namespace {
template <class X>
std::string str(const X& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
}  // namespace

TEST_CASE("printing shows the dtype, axis names, extents and values") {
  nax::tensor<float, batch, hidden> x(batch{2});
  for (std::size_t i = 0; i < 6; ++i) x.data()[i] = float(i) / 2;
  CHECK(str(x) == "tensor<f32>[batch=2, hidden=3]\n[[0, 0.5, 1],\n [1.5, 2, 2.5]]");
  nax::tensor<std::uint8_t, hidden> u;
  u.fill(65);
  CHECK(str(u) == "tensor<u8>[hidden=3]\n[65, 65, 65]");
  nax::tensor<bool, hidden> m = nax::cast<std::int32_t>(u) > 64;  // (u8 is not numeric)
  CHECK(str(m) == "tensor<bool>[hidden=3]\n[true, true, true]");
  nax::tensor<double> s;
  s = 1.25;
  CHECK(str(s) == "tensor<f64>[]\n1.25");
  nax::tensor<float, batch> empty(batch{0});
  CHECK(str(empty) == "tensor<f32>[batch=0]\n[]");
}

TEST_CASE("large tensors are cut to the first and last three entries of each axis") {
  nax::tensor<std::int32_t, batch> x(batch{2000});
  for (int i = 0; i < 2000; ++i) x(i) = i;
  CHECK(str(x) == "tensor<i32>[batch=2000]\n[0, 1, 2, ..., 1997, 1998, 1999]");
  using rows = nax::axis<"rows">;
  nax::tensor<std::int32_t, rows, hidden> y(rows{500});
  for (int i = 0; i < 1500; ++i) y.data()[i] = i;
  CHECK(str(y) ==
        "tensor<i32>[rows=500, hidden=3]\n[[0, 1, 2],\n [3, 4, 5],\n [6, 7, 8],\n ...,\n"
        " [1491, 1492, 1493],\n [1494, 1495, 1496],\n [1497, 1498, 1499]]");
}
