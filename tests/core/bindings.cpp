#include <nax/core/bindings.hpp>

#include <doctest/doctest.h>

#include <unordered_map>

TEST_CASE("bindings print in alphabetical order, whatever order they were made in") {
  nax::bindings a{{"seq", 128}, {"batch", 32}}, b{{"batch", 32}, {"seq", 128}};
  CHECK(a.to_string() == "{batch: 32, seq: 128}");
  CHECK(a == b);
  CHECK(a.size() == 2);
  CHECK(nax::bindings{}.to_string() == "{}");
  CHECK(nax::bindings{{"batch", 32}}.to_string() == "{batch: 32}");
  std::string order;
  for (const auto& e : a) order += std::string(e.name.view()) + ";";
  CHECK(order == "batch;seq;");
}

TEST_CASE("find, contains, at") {
  nax::bindings b{{"batch", 32}};
  CHECK(b.find("batch") == 32u);
  CHECK(b.find(nax::axis_name("batch")) == 32u);
  CHECK_FALSE(b.find("seq").has_value());
  CHECK_FALSE(b.find(nax::axis_name("seq")).has_value());
  CHECK(b.contains("batch"));
  CHECK(b.at("batch") == 32);
  CHECK_THROWS_WITH_AS(b.at("seq"), "axis 'seq' is not bound in {batch: 32}", nax::shape_error);
}

TEST_CASE("bind, set and their errors") {
  nax::bindings b;
  b.bind("batch", 32);
  b.bind("batch", 32);  // the same value again is fine
  CHECK_THROWS_WITH_AS(b.bind("batch", 64), "axis 'batch' has conflicting values: 32 vs 64",
                       nax::shape_error);
  CHECK(b.at("batch") == 32);  // unchanged by the failed bind
  b.set("batch", 64);
  CHECK(b.at("batch") == 64);
  b.set("a", 1);
  CHECK(b.to_string() == "{a: 1, batch: 64}");
  CHECK_THROWS_WITH_AS(b.bind("", 3), "cannot bind an unnamed axis (extent 3)", nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::bindings{{"batch", 1}, {"batch", 2}}),
                       "axis 'batch' has conflicting values: 1 vs 2", nax::shape_error);
  CHECK_THROWS_WITH_AS((nax::bindings{{"batch", -1}}), "axis 'batch' bound to negative extent -1",
                       nax::shape_error);
  b.clear();
  CHECK(b.empty());
}

namespace {
// Out of line and reused after clear(), as a cache-hit path does; g++ 12 at -O3 once warned
// (-Warray-bounds) on this inlined into a caller.
[[gnu::noinline]] void rebind(nax::bindings& out, nax::axis_name a) {
  out.clear();
  out.bind(a, 32);
}
}  // namespace

TEST_CASE("clear then bind reuses the storage") {
  nax::bindings b{{"x", 1}, {"y", 2}};
  rebind(b, "batch");
  CHECK(b.to_string() == "{batch: 32}");
}

TEST_CASE("many bindings spill to the heap and stay sorted") {
  nax::bindings b;
  const char* names[] = {"f", "e", "d", "c", "b", "a"};
  for (std::size_t i = 0; i < 6; ++i) b.bind(names[i], i);
  CHECK(b.to_string() == "{a: 5, b: 4, c: 3, d: 2, e: 1, f: 0}");
}

TEST_CASE("hash and key: equal bindings, equal keys; any difference, different keys") {
  nax::bindings a{{"batch", 32}, {"seq", 128}}, same{{"seq", 128}, {"batch", 32}};
  nax::bindings other_value{{"batch", 32}, {"seq", 129}}, other_name{{"batch", 32}, {"len", 128}};
  CHECK(a.hash() == same.hash());
  CHECK(a.key() == same.key());
  CHECK_FALSE(a.key() == other_value.key());
  CHECK_FALSE(a.key() == other_name.key());
  CHECK_FALSE(a.key() == nax::bindings{{"batch", 32}}.key());
  CHECK(a.key().to_string() == "{batch: 32, seq: 128}");
  CHECK(a.key().bindings() == a);
  CHECK(nax::binding_key() == nax::bindings{}.key());
}

namespace {
struct colliding_hash {  // every key in one bucket: lookups must rely on full equality
  std::size_t operator()(const nax::binding_key&) const noexcept { return 0; }
};
}  // namespace

TEST_CASE("keys compare in full, so colliding hashes cannot merge two bindings") {
  std::unordered_map<nax::binding_key, int, colliding_hash> cache;
  for (int v = 0; v < 50; ++v) cache[nax::bindings{{"batch", v}}.key()] = v;
  cache[nax::bindings{{"seq", 7}}.key()] = 1000;
  CHECK(cache.size() == 51);
  for (int v = 0; v < 50; ++v) CHECK(cache.at(nax::bindings{{"batch", v}}.key()) == v);
  CHECK(cache.at(nax::bindings{{"seq", 7}}.key()) == 1000);
  nax::bindings b1{{"batch", 1}};
  CHECK(std::hash<nax::bindings>{}(b1) == b1.hash());
  CHECK(std::hash<nax::binding_key>{}(b1.key()) == b1.hash());
}
