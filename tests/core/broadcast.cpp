// The one broadcast rule of runtime shapes: by name when both shapes are named on every axis,
// else NumPy's, from the right; and where an operand's axes go in its result.
#include <nax/core/broadcast.hpp>

#include <array>
#include <cstddef>

#include <doctest/doctest.h>

using nax::dim;
using nax::dtype;
using nax::shape;

namespace {
shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }
std::string str(const shape& s) { return s.to_string(); }
}  // namespace

TEST_CASE("named on every axis: by name, a's axes then b's others") {
  CHECK(str(nax::broadcast_shapes(f32({"batch", "seq"}), f32({"seq", "hidden"}), dtype::f32)) ==
        "f32[batch, seq, hidden]");
  CHECK(str(nax::broadcast_shapes(f32({"seq"}), f32({"batch", "seq"}), dtype::boolean)) ==
        "bool[seq, batch]");
  const dim h4 = dim::named("h", 4), h5 = dim::named("h", 5);
  CHECK_THROWS_WITH_AS(nax::broadcast_shapes(f32({h4}), f32({h5}), dtype::f32),
                       "axis 'h' mismatch: 4 vs 5", nax::shape_error);
}

TEST_CASE("otherwise NumPy's rule: from the right, a missing axis or a static 1 broadcasts") {
  CHECK(str(nax::broadcast_shapes(f32({"batch", 256}), f32({256}), dtype::f32)) ==
        "f32[batch, 256]");
  CHECK(str(nax::broadcast_shapes(f32({256}), f32({"batch", 256}), dtype::f32)) ==
        "f32[batch, 256]");
  CHECK(str(nax::broadcast_shapes(f32({3, 1, 5}), f32({4, 1}), dtype::f32)) == "f32[3, 4, 5]");
  CHECK(str(nax::broadcast_shapes(f32({"batch", 1}), f32({1, 7}), dtype::f32)) == "f32[batch, 7]");
  CHECK(str(nax::broadcast_shapes(f32({}), f32({2, 3}), dtype::f32)) == "f32[2, 3]");
  // Pairs unify: an unnamed axis adopts the other's name; static beats dynamic; bounds shrink.
  const shape u = nax::broadcast_shapes(f32({nax::dynamic, 3}), f32({"batch", 3}), dtype::f32);
  CHECK(u[0].name() == "batch");
  const shape named_one =
      nax::broadcast_shapes(f32({dim::named("hidden", 1)}), f32({"batch", 8}), dtype::f32);
  CHECK(named_one[1].name() == "hidden");
  CHECK(named_one[1].extent() == 8);
  CHECK(str(nax::broadcast_shapes(f32({dim::bounded("seq", 8), 2}),
                                  f32({dim::bounded("seq", 4), 2}), dtype::f32)) ==
        "f32[seq<=4, 2]");
  CHECK_THROWS_WITH_AS(nax::broadcast_shapes(f32({"batch", 512}), f32({"time", 512}), dtype::f32),
                       doctest::Contains("incompatible axis names: 'batch' vs 'time' (dimension 0 "
                                         "of the result; operands align from the right)"),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::broadcast_shapes(f32({2, 3}), f32({4}), dtype::f32),
                       doctest::Contains("dimension mismatch: 3 vs 4 (dimension 1 of the result"),
                       nax::shape_error);
  // A name both have must be aligned: positional pairing would silently misplace it.
  CHECK_THROWS_WITH_AS(nax::broadcast_shapes(f32({"batch", 256}), f32({"batch"}), dtype::f32),
                       doctest::Contains("axis 'batch' is dimension 0 of the first"),
                       nax::shape_error);
}

TEST_CASE("broadcast_axis_map: where each axis of an operand goes in its result") {
  std::array<std::size_t, 3> map{};
  nax::broadcast_axis_map(f32({"seq", "batch"}), f32({"batch", "seq", "hidden"}), map);
  CHECK(map[0] == 1);
  CHECK(map[1] == 0);
  nax::broadcast_axis_map(f32({256}), f32({"batch", 256}), map);
  CHECK(map[0] == 1);
  nax::broadcast_axis_map(f32({"batch", 1}), f32({"batch", 7}), map);
  CHECK(map[0] == 0);
  CHECK(map[1] == 1);
  CHECK_THROWS_WITH_AS(nax::broadcast_axis_map(f32({"time"}), f32({"batch"}), map),
                       "axis 'time' of f32[time] is not in f32[batch]", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::broadcast_axis_map(f32({2, 3}), f32({3}), map),
                       doctest::Contains("has more axes than"), nax::shape_error);
}
