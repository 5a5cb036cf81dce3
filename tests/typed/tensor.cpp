#include <nax/typed/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 3>;

TEST_CASE("a tensor is constructed from its dynamic extents by name, in any order") {
  nax::tensor<float, batch, seq, hidden> x(seq(5), batch(2));
  CHECK(x.extent<batch>() == 2);
  CHECK(x.extent<seq>() == 5);
  CHECK(x.extent<hidden>() == 3);
  CHECK(x.size() == 30);
  CHECK(decltype(x)::rank == 3);
  CHECK(reinterpret_cast<std::uintptr_t>(x.data()) % 64 == 0);
  nax::tensor<double, hidden> s;  // all static
  CHECK(s.size() == 3);
  CHECK_THROWS_WITH_AS((nax::tensor<float, batch, seq>(batch(1), seq(513))),
                       "axis 'seq': extent 513 exceeds its bound 512", nax::shape_error);
}

TEST_CASE("positional access is row-major in the listed axis order") {
  nax::tensor<int, batch, hidden> x(batch(2));
  for (int i = 0; i < 6; ++i) x.data()[i] = i;
  CHECK(x(0, 0) == 0);
  CHECK(x(0, 2) == 2);
  CHECK(x(1, 0) == 3);
  CHECK(x(1, 2) == 5);
  x(1, 1) = 42;
  CHECK(x.data()[4] == 42);
  const auto& cx = x;
  CHECK(cx(1, 1) == 42);
}

TEST_CASE("fill, values from a span, and their size check") {
  nax::tensor<std::int64_t, batch> x(batch(4));
  x.fill(7);
  for (auto v : x) CHECK(v == 7);
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  nax::tensor<float, batch, hidden> y(std::span<const float>(values), batch(2));
  CHECK(y(1, 2) == 6);
  CHECK_THROWS_WITH_AS(
      (nax::tensor<float, batch, hidden>(std::span<const float>(values), batch(3))),
      "a tensor of [batch=3, hidden=3] needs 9 values, got 6", nax::shape_error);
}

TEST_CASE("copies are deep, moves steal") {
  nax::tensor<float, batch> a(batch(3));
  a.fill(1);
  nax::tensor<float, batch> b = a;
  b.fill(2);
  CHECK(a(0) == 1);
  nax::tensor<float, batch> c = std::move(b);
  CHECK(c(2) == 2);
  a = c;
  CHECK(a(1) == 2);
  nax::tensor<float, batch> other(batch(4));
  CHECK_THROWS_WITH_AS(other = c, "axis 'batch' mismatch: destination has 4, expression has 3",
                       nax::shape_error);
}

TEST_CASE("empty tensors") {
  nax::tensor<float, batch, hidden> x(batch(0));
  CHECK(x.size() == 0);
  CHECK(x.data() == nullptr);
  x.fill(3);  // nothing to do
  nax::tensor<float, batch, hidden> y = x;
  CHECK(y.size() == 0);
}

TEST_CASE("extents whose bytes do not fit in size_t throw instead of wrapping around") {
  using a = nax::axis<"a">;
  using b = nax::axis<"b">;
  const std::size_t big = std::size_t{1} << 32;
  CHECK_THROWS_WITH_AS((nax::tensor<float, a, b>(a{big}, b{big})),
                       "nax::tensor: [a=4294967296, b=4294967296] of 4-byte elements has more "
                       "bytes than fit in size_t",
                       nax::shape_error);
  CHECK_THROWS_AS((nax::tensor<double, a>(a{std::size_t{1} << 61})), nax::shape_error);
  CHECK((nax::tensor<float, a, b>(a{big}, b{0}).data() == nullptr));  // empty: no overflow
}
