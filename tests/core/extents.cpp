#include <nax/core/extents.hpp>

#include <doctest/doctest.h>

#include <array>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 768>;
using out = nax::axis<"out", 3072>;

TEST_CASE("only dynamic extents are stored") {
  static_assert(sizeof(nax::extents<hidden, out>) == 1);
  static_assert(sizeof(nax::extents<>) == 1);
  static_assert(sizeof(nax::extents<batch, hidden>) == sizeof(std::size_t));
  static_assert(sizeof(nax::extents<batch, hidden, seq>) == 2 * sizeof(std::size_t));
  static_assert(nax::extents<batch, hidden, seq>::rank() == 3);
  static_assert(nax::extents<batch, hidden, seq>::rank_dynamic() == 2);
  static_assert(nax::extents<batch, hidden>::static_extent(0) == nax::dynamic_extent);
  static_assert(nax::extents<batch, hidden>::static_extent(1) == 768);
  CHECK(nax::extents<batch, hidden>::names()[1] == "hidden");
}

TEST_CASE("constructed from axis values by name, in any order") {
  constexpr nax::extents<batch, seq, hidden> e(seq(128), batch(32));
  static_assert(e.extent<batch>() == 32 && e.extent<seq>() == 128 && e.extent<hidden>() == 768);
  static_assert(e.extent(0) == 32 && e.extent(1) == 128 && e.extent(2) == 768);
  static_assert(e.size() == 32 * 128 * 768);
  // A static axis may be given; its value is checked.
  constexpr nax::extents<batch, hidden> f(hidden(), batch(2));
  static_assert(f.size() == 2 * 768);
  // By name: a dynamic axis type of the same name gives a static axis its (checked) extent.
  CHECK(nax::extents<hidden>(nax::axis<"hidden">(768)).size() == 768);
  CHECK(e.to_string() == "[batch=32, seq=128, hidden=768]");
  CHECK(nax::extents<>().size() == 1);
  CHECK(nax::extents<>().to_string() == "[]");
  CHECK(nax::extents<batch>(batch(0)).size() == 0);
}

TEST_CASE("extents compare by value") {
  using E = nax::extents<batch, hidden>;
  CHECK(E(batch(3)) == E(batch(3)));
  CHECK_FALSE(E(batch(3)) == E(batch(4)));
}

TEST_CASE("a value checked against a stricter axis of the list throws") {
  // The given axis types are plain dynamic; the list's axes are static or bounded.
  CHECK_THROWS_WITH_AS(nax::extents<hidden>(nax::axis<"hidden">(512)),
                       "axis 'hidden' is static with extent 768, got 512", nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::extents<batch, seq>(batch(1), nax::axis<"seq">(600))),
                       "axis 'seq': extent 600 exceeds its bound 512", nax::shape_error);
}

TEST_CASE("positional extents are checked against each axis") {
  using E = nax::extents<batch, seq, hidden>;
  constexpr std::array<std::size_t, 3> good{4, 5, 768};
  CHECK(E(std::span<const std::size_t, 3>(good)) == E(batch(4), seq(5)));
  const std::array<std::size_t, 3> wrong_static{4, 5, 767}, over_bound{4, 513, 768};
  CHECK_THROWS_WITH_AS(E(std::span<const std::size_t, 3>(wrong_static)),
                       "axis 'hidden' is static with extent 768, got 767", nax::shape_error);
  CHECK_THROWS_WITH_AS(E(std::span<const std::size_t, 3>(over_bound)),
                       "axis 'seq': extent 513 exceeds its bound 512", nax::shape_error);
}
