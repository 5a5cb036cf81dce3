// The op records (graph/op_record.hpp): every op kind has one, reached by kind and by the op a
// node holds, and each record is the row of its op in docs/graph.md's table of node kinds.
#include <nax/graph/op.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support/source_file.hpp"

namespace g = nax::graph;

namespace {

// One default-constructed attributes per op kind, in op_kind's order.
std::vector<g::attributes> one_of_each() {
  return {
#define NAX_TEST_OP(k) g::attributes(g::k##_op{}),
      NAX_GRAPH_OP_KINDS(NAX_TEST_OP)
#undef NAX_TEST_OP
  };
}

std::string_view rule_name(g::gradient_rule r) {
  switch (r) {
    case g::gradient_rule::vjp: return "vjp";
    case g::gradient_rule::none: return "none";
    case g::gradient_rule::refused: return "refused";
  }
  return "?";
}
std::string_view rule_name(g::kernel_rule r) {
  switch (r) {
    case g::kernel_rule::made: return "made";
    case g::kernel_rule::shared: return "shared";
    case g::kernel_rule::none: return "none";
  }
  return "?";
}
std::string_view rule_name(g::tiling_rule r) {
  switch (r) {
    case g::tiling_rule::never: return "never";
    case g::tiling_rule::keeps_axes: return "keeps_axes";
    case g::tiling_rule::not_axis_0: return "not_axis_0";
    case g::tiling_rule::by_operands: return "by_operands";
  }
  return "?";
}

// The cells of the table row that starts with "| `name` |", or none.
std::vector<std::string> row_of(const std::string& text, std::string_view name) {
  const std::string start = "\n| `" + std::string(name) + "` |";
  const std::size_t at = text.find(start);
  if (at == std::string::npos) return {};
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  std::vector<std::string> cells;
  std::size_t from = 1;
  for (std::size_t bar; (bar = line.find(" |", from)) != std::string::npos; from = bar + 2) {
    std::string cell = line.substr(from, bar - from);
    while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
    cells.push_back(cell);
  }
  return cells;
}

}  // namespace

TEST_CASE("every op kind has its record, by kind and by the op a node holds") {
  const std::vector<g::attributes> ops = one_of_each();
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const g::op_kind k = ops[i].kind();
    CHECK(static_cast<std::size_t>(k) == i);
    const g::op_record& r = g::record_of(k);
    CAPTURE(r.name);
    CHECK(g::name(k) == r.name);
    CHECK(names.insert(r.name).second);  // no two kinds share a name
    // visit hands over the struct held, whose record is the kind's.
    CHECK(ops[i].visit([](const auto& op) { return &std::remove_cvref_t<decltype(op)>::record; }) ==
          &r);
  }
  // A few rules the rest of nax relies on, stated once more.
  CHECK(g::record_of(g::op_kind::parameter).kernel == g::kernel_rule::none);
  CHECK(g::record_of(g::op_kind::fused_elementwise).gradient == g::gradient_rule::refused);
  CHECK(g::record_of(g::op_kind::reshape).may_alias);
  CHECK_FALSE(g::record_of(g::op_kind::transpose).may_alias);
}

TEST_CASE("every record is its op's row in docs/graph.md") {
  const std::string text = nax_test::source_file("docs/graph.md");
  for (const g::attributes& op : one_of_each()) {
    const g::op_record& r = g::record_of(op.kind());
    CAPTURE(r.name);
    const std::vector<std::string> cells = row_of(text, r.name);
    REQUIRE(cells.size() == 6);  // kind, made by, gradient, kernel, tiling, view
    CHECK(cells[2] == rule_name(r.gradient));
    CHECK(cells[3] == rule_name(r.kernel));
    CHECK(cells[4] == rule_name(r.tiling));
    CHECK(cells[5] == (r.may_alias ? "yes" : "no"));
  }
}
