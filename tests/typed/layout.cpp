// permute, rename, slice and concat: views on tensors, lazy nodes on expressions, and errors.
#include <nax/typed/layout.hpp>

#include <nax/typed/elementwise.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using c_ax = nax::axis<"c", 4>;
using d_ax = nax::axis<"d">;

namespace {
template <class T>
void iota(T& t) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<typename T::value_type>(i);
}
}  // namespace

TEST_CASE("permute: a strided view of a tensor, a reordering of an expression") {
  nax::tensor<float, a_ax, b_ax, c_ax> x(a_ax{2}, b_ax{3});
  iota(x);
  auto v = nax::permute<c_ax, a_ax, b_ax>(x);
  static_assert(std::is_same_v<decltype(v), nax::tensor_view<float, c_ax, a_ax, b_ax>>);
  CHECK(v.data() == x.data());
  CHECK(v(3, 1, 2) == x(1, 2, 3));
  v(0, 0, 0) = -1;  // a view of a mutable tensor writes through
  CHECK(x(0, 0, 0) == -1);
  const auto& cx = x;
  auto cv = nax::permute<b_ax, c_ax, a_ax>(cx);
  static_assert(std::is_same_v<decltype(cv), nax::tensor_view<const float, b_ax, c_ax, a_ax>>);
  auto e = nax::eval(nax::permute<c_ax, b_ax, a_ax>(x * 2));
  static_assert(std::is_same_v<decltype(e), nax::tensor<float, c_ax, b_ax, a_ax>>);
  CHECK(e(2, 1, 0) == 2 * x(0, 1, 2));
}

TEST_CASE("rename keeps the extent and changes the name") {
  nax::tensor<float, a_ax, c_ax> x(a_ax{2});
  iota(x);
  auto r = nax::rename<c_ax, d_ax>(x);
  static_assert(std::is_same_v<decltype(r), nax::tensor_view<float, a_ax, nax::axis<"d", 4>>>);
  CHECK(r(1, 3) == x(1, 3));
  // On an expression: broadcasting now goes by the new name.
  nax::tensor<float, nax::axis<"d", 4>> y;
  y.fill(10);
  nax::tensor<float, a_ax, nax::axis<"d", 4>> z = nax::rename<c_ax, d_ax>(x * 1.0f) + y;
  CHECK(z(1, 2) == x(1, 2) + 10);
}

TEST_CASE("slice: a view of a tensor, an offset node on an expression") {
  nax::tensor<int, a_ax, c_ax> x(a_ax{5});
  iota(x);
  auto s = nax::slice<a_ax>(x, 1, 4);
  static_assert(std::is_same_v<decltype(s), nax::tensor_view<int, a_ax, c_ax>>);
  CHECK(s.extent<a_ax>() == 3);
  CHECK(s(0, 0) == x(1, 0));
  auto t = nax::slice<c_ax>(x, 1, 3);  // a static axis becomes bounded by its extent
  static_assert(
      std::is_same_v<decltype(t), nax::tensor_view<int, a_ax, nax::axis<"c", nax::upto(4)>>>);
  CHECK(t(4, 1) == x(4, 2));
  nax::tensor<int, a_ax, nax::axis<"c", nax::upto(4)>> u = nax::slice<c_ax>(x * 10, 2, 4);
  CHECK(u.extent<c_ax>() == 2);
  CHECK(u(3, 0) == 10 * x(3, 2));
  CHECK_THROWS_WITH_AS(nax::slice<a_ax>(x, 2, 6),
                       "slice of axis 'a': [2, 6) is out of range [0, 5)", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::slice<c_ax>(x * 2, 3, 2),
                       "slice of axis 'c': [3, 2) is out of range [0, 4)", nax::shape_error);
}

TEST_CASE("slice with bounds known at compile time: the axis static, of extent End - Begin") {
  nax::tensor<int, a_ax, c_ax> x(a_ax{5});
  iota(x);
  auto s = nax::slice<a_ax, 1, 4>(x);  // a dynamic axis: static in the result, int-typed
  static_assert(std::is_same_v<decltype(s), nax::tensor_view<int, nax::axis<"a", 3>, c_ax>>);
  CHECK(s.data() == x.data() + 4);
  CHECK(s(2, 3) == x(3, 3));
  auto t = nax::slice<c_ax, 1, 3>(x * 10);  // on an expression, a static axis keeps its type
  static_assert(std::is_same_v<decltype(nax::eval(t)), nax::tensor<int, a_ax, nax::axis<"c", 2>>>);
  const nax::tensor<int, a_ax, nax::axis<"c", 2>> u = t;
  CHECK(u(4, 1) == 10 * x(4, 2));
  // The same entries as the slice of run-time bounds.
  const nax::tensor<int, a_ax, nax::axis<"c", nax::upto(4)>> w = nax::slice<c_ax>(x * 10, 1, 3);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 2; ++j) CHECK(u(i, j) == w(i, j));
  CHECK_THROWS_WITH_AS((nax::slice<a_ax, 2, 6>(x)),
                       "slice of axis 'a': [2, 6) is out of range [0, 5)", nax::shape_error);
}

TEST_CASE("concat joins along one axis, in the first operand's order") {
  nax::tensor<float, a_ax, b_ax> x(a_ax{2}, b_ax{3});
  nax::tensor<float, b_ax, a_ax> y(a_ax{4}, b_ax{3});
  iota(x);
  iota(y);
  auto j = nax::concat<a_ax>(x, y * 1.0f);
  static_assert(std::is_same_v<decltype(j), nax::tensor<float, a_ax, b_ax>>);
  CHECK(j.extent<a_ax>() == 6);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t k = 0; k < 3; ++k) CHECK(j(i, k) == (i < 2 ? x(i, k) : y(k, i - 2)));
  nax::tensor<float, c_ax> p, q;
  p.fill(1);
  q.fill(2);
  auto pq = nax::concat<c_ax>(p, q);
  static_assert(std::is_same_v<decltype(pq), nax::tensor<float, nax::axis<"c", 8>>>);
  CHECK(pq(3) == 1);
  CHECK(pq(4) == 2);
  nax::tensor<float, b_ax, a_ax> wrong(a_ax{4}, b_ax{5});
  CHECK_THROWS_WITH_AS(nax::concat<a_ax>(x, wrong),
                       "axis 'b' mismatch: destination has 3, expression has 5", nax::shape_error);
}

TEST_CASE("concat of static axes of different extents is static; bounded ones stay bounded") {
  using k3 = nax::axis<"k", 3>;
  using k2 = nax::axis<"k", 2>;
  nax::tensor<int, b_ax, k3> x(b_ax{2});
  nax::tensor<int, k2, b_ax> y(b_ax{2});
  iota(x);
  iota(y);
  const auto j = nax::concat<k3>(x, y);
  static_assert(std::is_same_v<decltype(j), const nax::tensor<int, b_ax, nax::axis<"k", 5>>>);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t k = 0; k < 5; ++k) CHECK(j(i, k) == (k < 3 ? x(i, k) : y(k - 3, i)));
  using pos = nax::axis<"pos", nax::upto(6)>;
  nax::tensor<int, pos> cache(pos{4});
  nax::tensor<int, nax::axis<"pos", 1>> step;
  iota(cache);
  step.fill(-1);
  const auto grown = nax::concat<pos>(cache, step);
  static_assert(
      std::is_same_v<decltype(grown), const nax::tensor<int, nax::axis<"pos", nax::upto(7)>>>);
  CHECK(grown.extent<pos>() == 5);
  CHECK(grown(4) == -1);
}

TEST_CASE("concat<A, B> names the joined axis B") {
  using pos = nax::axis<"pos", nax::upto(6)>;
  using ctx = nax::axis<"ctx">;
  nax::tensor<float, b_ax, pos> cache(b_ax{2}, pos{3});
  nax::tensor<float, pos, b_ax> step(b_ax{2}, pos{1});
  iota(cache);
  step.fill(7);
  const auto joined = nax::concat<pos, ctx>(cache, step);
  static_assert(std::is_same_v<decltype(joined),
                               const nax::tensor<float, b_ax, nax::axis<"ctx", nax::upto(12)>>>);
  CHECK(joined.extent<ctx>() == 4);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t t = 0; t < 4; ++t) CHECK(joined(i, t) == (t < 3 ? cache(i, t) : 7.0f));
  // Static operands give a static joined axis; a plain dynamic one, a dynamic one.
  nax::tensor<float, c_ax> p;
  p.fill(1);
  static_assert(std::is_same_v<decltype(nax::concat<c_ax, ctx>(p, p)),
                               nax::tensor<float, nax::axis<"ctx", 8>>>);
  nax::tensor<float, a_ax> q(a_ax{2});
  q.fill(2);
  const auto qq = nax::concat<a_ax, ctx>(q, q * 3.0f);
  static_assert(std::is_same_v<decltype(qq), const nax::tensor<float, ctx>>);
  CHECK(qq(3) == 6.0f);
}
