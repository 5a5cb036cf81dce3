#include <nax/core/extract_bindings.hpp>

#include <doctest/doctest.h>

#include <vector>

using nax::dim;
using nax::dtype;
using nax::shape;

namespace {
shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }
}  // namespace

TEST_CASE("extract_bindings reads named dynamic axes") {
  auto b =
      nax::extract_bindings(f32({"batch", dim::bounded("seq", 512), 768}), f32({32, 128, 768}));
  CHECK(b.to_string() == "{batch: 32, seq: 128}");
  // Unnamed dynamic dimensions match anything and bind nothing.
  CHECK(nax::extract_bindings(f32({nax::dynamic, 3}), f32({9, 3})).empty());
  // The same axis twice, agreeing.
  CHECK(nax::extract_bindings(f32({"n", "n"}), f32({4, 4})).to_string() == "{n: 4}");
  // A resolved shape keeps its names and extracts back to the same bindings.
  auto pattern = f32({"batch", 2});
  CHECK(nax::extract_bindings(pattern, pattern.resolve(nax::bindings{{"batch", 7}})) ==
        nax::bindings{{"batch", 7}});
  // A static named pattern axis binds nothing: only dynamic axes are bindings.
  CHECK(nax::extract_bindings(f32({dim::named("hidden", 8)}), f32({8})).empty());
}

TEST_CASE("extract_bindings errors name what is wrong") {
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch", 512}), f32({32, 512, 1})),
                       "rank mismatch: pattern f32[batch, 512] has rank 2, got f32[32, 512, 1] "
                       "with rank 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(
      nax::extract_bindings(f32({"batch", dim::named("hidden", 768)}), f32({32, 512})),
      "dimension 1 (axis 'hidden') mismatch: pattern has 768, got 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch", 768}), f32({32, 512})),
                       "dimension 1 mismatch: pattern has 768, got 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch", "batch"}), f32({32, 64})),
                       "axis 'batch' has conflicting values: 32 vs 64", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({dim::bounded("seq", 512)}), f32({600})),
                       "axis 'seq': extent 600 exceeds its bound 512", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({nax::upto(4)}), f32({5})),
                       "dimension 0: extent 5 exceeds its bound 4", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch"}), shape::make(dtype::f64, {3})),
                       "dtype mismatch: pattern f32[batch] is f32, got f64[3]", nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch", 2}), f32({"batch", 2})),
                       "the shape given, f32[batch, 2], is not concrete: dimension 0 (axis "
                       "'batch') is dynamic",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings(f32({"batch"}), f32({dim::named("seq", 3)})),
                       "dimension 0 is axis 'batch' in the pattern but axis 'seq' in the shape "
                       "given",
                       nax::shape_error);
}

TEST_CASE("multi-input extraction merges across inputs") {
  auto pa = f32({"batch", "seq", 512}), pb = f32({"batch", 64}), pc = f32({"seq"});
  auto ca = f32({32, 128, 512}), cb = f32({32, 64}), cc = f32({128});
  auto b = nax::extract_bindings({{"a", pa, ca}, {"b", pb, cb}, {"c", pc, cc}});
  CHECK(b.to_string() == "{batch: 32, seq: 128}");

  // The out-parameter form reuses (and first clears) the caller's bindings.
  std::vector<nax::binding_source> inputs{{"a", pa, ca}, {"b", pb, cb}};
  nax::bindings reused{{"stale", 1}};
  nax::extract_bindings(inputs, reused);
  CHECK(reused.to_string() == "{batch: 32, seq: 128}");
  CHECK(nax::extract_bindings(std::span<const nax::binding_source>()).empty());
}

TEST_CASE("multi-input conflicts name both inputs") {
  auto p = f32({"batch", 512});
  auto c32 = f32({32, 512}), c64 = f32({64, 512});
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"a", p, c32}, {"b", p, c64}}),
                       "axis 'batch': input 'b' has 64 but input 'a' has 32", nax::shape_error);
  // The first input that bound the axis is named, not merely the previous one.
  auto q = f32({7});
  auto cq = f32({7});
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"a", p, c32}, {"q", q, cq}, {"c", p, c64}}),
                       "axis 'batch': input 'c' has 64 but input 'a' has 32", nax::shape_error);
  // Unnamed inputs are numbered.
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"", p, c32}, {"", p, c64}}),
                       "axis 'batch': input 1 has 64 but input 0 has 32", nax::shape_error);
}

TEST_CASE("multi-input errors within one input name that input") {
  auto p = f32({"batch", 512});
  auto good = f32({32, 512});
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"a", p, good}, {"b", p, f32({32})}}),
                       "input 'b': rank mismatch: pattern f32[batch, 512] has rank 2, got f32[32] "
                       "with rank 1",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"a", p, good}, {"b", p, f32({32, 511})}}),
                       "input 'b': dimension 1 mismatch: pattern has 512, got 511",
                       nax::shape_error);
  auto square = f32({"n", "n"});
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"a", p, good}, {"sq", square, f32({3, 4})}}),
                       "input 'sq': axis 'n' has conflicting values: 3 vs 4", nax::shape_error);
  auto bounded = f32({dim::bounded("seq", 8)});
  CHECK_THROWS_WITH_AS(nax::extract_bindings({{"s", bounded, f32({9})}}),
                       "input 's': axis 'seq': extent 9 exceeds its bound 8", nax::shape_error);
  CHECK_THROWS_WITH_AS(
      nax::extract_bindings({{"d", p, shape::make(dtype::i32, {32, 512})}}),
      "input 'd': dtype mismatch: pattern f32[batch, 512] is f32, got i32[32, 512]",
      nax::shape_error);
}
