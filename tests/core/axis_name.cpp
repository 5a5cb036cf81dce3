#include <nax/core/axis_name.hpp>

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

TEST_CASE("axis names are interned: equal text, equal name") {
  nax::axis_name a("batch"), b(std::string("batch")), c(std::string_view("seq"));
  CHECK(a == b);
  CHECK_FALSE(a == c);
  CHECK(a.view() == "batch");
  CHECK(a == std::string_view("batch"));
  CHECK(a.hash() == b.hash());
  CHECK(std::hash<nax::axis_name>{}(a) == a.hash());
  static_assert(std::is_trivially_copyable_v<nax::axis_name>);
  static_assert(sizeof(nax::axis_name) == sizeof(void*));
}

TEST_CASE("the empty name is unnamed") {
  nax::axis_name none, empty("");
  CHECK(none.empty());
  CHECK(empty.empty());
  CHECK(none == empty);
  CHECK_FALSE(static_cast<bool>(none));
  CHECK(none.view().empty());
}

TEST_CASE("order is alphabetical, not the order of interning") {
  nax::axis_name z("zz_late"), a("aa_later");
  CHECK(a < z);
  CHECK_FALSE(z < a);
}

TEST_CASE("interning from several threads gives one name") {
  std::vector<nax::axis_name> names(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < names.size(); ++i)
    threads.emplace_back([&names, i] { names[i] = nax::axis_name("concurrent_axis"); });
  for (auto& t : threads) t.join();
  for (auto n : names) CHECK(n == names[0]);
}
