// The op list: its traits are consistent, every op has a body of its name and arity, and every
// op has its row in docs/ops.md.
#include <nax/ops/elementwise.hpp>
#include <nax/ops/list.hpp>

#include <string>

#include <doctest/doctest.h>
#include <boost/mp11/algorithm.hpp>
#include "support/source_file.hpp"

TEST_CASE("ids, names and find agree") {
  // A few ops by name; the count is not pinned (a new op is its body plus one line).
  for (const char* op : {"add", "mul", "exp", "gelu", "equal", "logical_not", "where"}) {
    nax::ops::id found{};
    CHECK_MESSAGE(nax::ops::find(op, found), op);
  }
  for (std::size_t i = 0; i < nax::ops::count; ++i) {
    const auto op = static_cast<nax::ops::id>(i);
    nax::ops::id found{};
    REQUIRE(nax::ops::find(nax::ops::name(op), found));
    CHECK(found == op);
    CHECK(nax::ops::arity(op) >= 1);
    CHECK(nax::ops::arity(op) <= 3);
  }
  nax::ops::id none{};
  CHECK(!nax::ops::find("no_such_op", none));
  CHECK(!nax::ops::is_valid(nax::ops::count));
}

TEST_CASE("every op's body has its line's name and arity, and takes that many operands") {
  boost::mp11::mp_for_each<nax::ops::all>([](auto op) {
    using Op = decltype(op);
    CAPTURE(Op::name);
    CHECK(Op::name == nax::ops::name(Op::id));
    if constexpr (Op::selects)
      CHECK(Op::apply(true, 1.0f, 2.0f) == 1.0f);
    else if constexpr (Op::logical && Op::arity == 1)
      CHECK(Op::apply(true) == false);
    else if constexpr (Op::logical)
      (void)Op::apply(true, false);
    else if constexpr (Op::arity == 1)
      (void)Op::apply(1.0f);
    else
      (void)Op::apply(1.0f, 2.0f);
  });
}

TEST_CASE("every op of the list has its row in docs/ops.md") {
  const std::string text = nax_test::source_file("docs/ops.md");
  for (std::size_t i = 0; i < nax::ops::count; ++i) {
    const std::string row =
        "| `" + std::string(nax::ops::name(static_cast<nax::ops::id>(i))) + "` |";
    CAPTURE(row);
    CHECK(text.find(row) != std::string::npos);
  }
}
