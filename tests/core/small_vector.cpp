#include <nax/core/small_vector.hpp>

#include <doctest/doctest.h>

#include <vector>

using vec = nax::core_detail::small_vector<int, 3>;

namespace {
std::vector<int> items(const vec& v) { return {v.begin(), v.end()}; }
}  // namespace

TEST_CASE("small_vector stays inline up to N and grows past it") {
  vec v;
  CHECK(v.empty());
  CHECK(v.capacity() == 3);
  for (int i = 0; i < 3; ++i) v.push_back(i);
  CHECK(v.capacity() == 3);
  v.push_back(3);
  v.push_back(v[0]);  // an element of the vector itself, while it grows
  CHECK(v.capacity() >= 5);
  CHECK(items(v) == std::vector<int>{0, 1, 2, 3, 0});
  CHECK(v.back() == 0);
}

TEST_CASE("insert keeps order, inline and on the heap") {
  vec v{1, 3};
  v.insert(1, 2);
  v.insert(0, 0);
  v.insert(4, 4);
  CHECK(items(v) == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("copies and moves, inline and heap") {
  vec small{1, 2}, big{1, 2, 3, 4, 5};
  vec a = small, b = big;
  CHECK(items(a) == items(small));
  CHECK(items(b) == items(big));
  vec c = std::move(b);
  CHECK(items(c) == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(b.empty());
  vec d = std::move(a);
  CHECK(items(d) == std::vector<int>{1, 2});
  d = big;
  CHECK(items(d) == items(big));
  d = small;
  CHECK(items(d) == items(small));
  c = std::move(d);
  CHECK(items(c) == items(small));
  vec& alias = c;
  c = alias;  // self-assignment
  CHECK(items(c) == items(small));
  c.resize(4);
  CHECK(items(c) == std::vector<int>{1, 2, 0, 0});
  c.clear();
  CHECK(c.empty());
}

TEST_CASE("a copy of an inline vector has its elements only, whatever its storage held before") {
  vec shrunk{7, 8, 9};
  shrunk.clear();
  shrunk.push_back(1);  // the storage still holds 8 and 9 past the end
  vec copy = shrunk;
  CHECK(items(copy) == std::vector<int>{1});
  CHECK(copy.capacity() == 3);
  copy.resize(3);
  CHECK(items(copy) == std::vector<int>{1, 0, 0});
  vec grown{1, 2, 3, 4};
  grown = shrunk;  // from the heap back inline
  CHECK(items(grown) == std::vector<int>{1});
  CHECK(grown.capacity() == 3);
  vec moved = std::move(shrunk);
  CHECK(items(moved) == std::vector<int>{1});
  CHECK(shrunk.empty());
}
