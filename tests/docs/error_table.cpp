// docs/errors.md, checked. Every row of its table is a case (error_cases_*.cpp) and every case is
// a row (by the row's id), so the two cannot drift. A row whose message is code is a bad input:
// its case must throw the row's exception type with exactly the row's message (`<file>` stands
// for the file the case uses). A row whose message is prose is a behaviour (NaN and inf
// propagated, empty axes), which its case checks.
#include "error_cases.hpp"

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

using namespace error_cases;

namespace {

// --- the table ------------------------------------------------------------------------------

struct row {
  std::size_t line = 0;
  std::string id, exception, message;
  bool error = false;  // the message is code: a bad input that throws it
};

// The cells of a Markdown table line (`|` inside a cell written `\|`), trimmed.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return out;
}

// `text` without its backticks if it is one code span, else empty.
std::string code(const std::string& text) {
  if (text.size() < 2 || text.front() != '`' || text.back() != '`') return "";
  const std::string inner = text.substr(1, text.size() - 2);
  return inner.find('`') == std::string::npos ? inner : "";
}

// The rows of the table in docs/errors.md: the lines after its header `| id | ...`.
std::vector<row> read_table() {
  const char* root = std::getenv("NAX_SOURCE_DIR");
  REQUIRE_MESSAGE(root != nullptr, "NAX_SOURCE_DIR (the repository's root) is not set");
  const std::string path = std::string(root) + "/docs/errors.md";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, path << " cannot be read");
  std::vector<row> rows;
  std::string line;
  bool in_table = false;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.rfind("| id |", 0) == 0) {
      REQUIRE_MESSAGE(!in_table, "docs/errors.md:" << n << ": a second table");
      in_table = true;
      std::getline(in, line);  // | --- | ...
      ++n;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|", 0) != 0) {
      if (!rows.empty()) break;  // the table's end
      continue;
    }
    const std::vector<std::string> c = cells(line);
    REQUIRE_MESSAGE(c.size() == 5,
                    "docs/errors.md:" << n << ": a row has 5 cells, not " << c.size());
    row r;
    r.line = n;
    r.id = code(c[0]);
    REQUIRE_MESSAGE(!r.id.empty(), "docs/errors.md:" << n << ": the id is not code");
    r.exception = code(c[3]).empty() ? c[3] : code(c[3]);  // `nax::shape_error`, or none
    r.message = code(c[4]);
    r.error = !r.message.empty();
    if (!r.error) r.message = c[4];
    rows.push_back(r);
  }
  return rows;
}

// Every case, by the row's id.
case_map make_cases() {
  case_map c;
  add_typed_cases(c);
  add_graph_cases(c);
  add_other_cases(c);
  return c;
}

}  // namespace

TEST_CASE("docs/errors.md: every row has its case, every case its row") {
  const std::vector<row> rows = read_table();
  const auto cases = make_cases();
  std::set<std::string> ids;
  for (const row& r : rows) {
    CAPTURE(r.line);
    CHECK_MESSAGE(ids.insert(r.id).second, "id '" << r.id << "' is in two rows");
    CHECK_MESSAGE(cases.count(r.id) == 1, "row '" << r.id << "' has no case in this test");
  }
  for (const auto& entry : cases)  // (not a structured binding: clang 14 cannot capture one)
    CHECK_MESSAGE(ids.count(entry.first) == 1,
                  "case '" << entry.first << "' has no row in docs/errors.md");
  CHECK(rows.size() == cases.size());
  MESSAGE(rows.size(), " rows checked");
}

TEST_CASE("docs/errors.md: each bad input gives its row's exception and exact message") {
  const auto cases = make_cases();
  const int threads = nax::num_threads();
  for (const row& r : read_table()) {
    if (!cases.count(r.id)) continue;  // (reported by the test case above)
    INFO("docs/errors.md:", r.line, ": ", r.id);
    current_file.clear();
    if (!r.error) {  // a behaviour: the case checks it, and throws nothing
      CHECK(r.exception == "none");
      CHECK_NOTHROW(cases.at(r.id)());
    } else {
      std::string what, type;
      bool threw = false;
      try {
        cases.at(r.id)();
      } catch (const nax::io_error& e) {
        threw = true;
        type = "nax::io_error";
        what = e.what();
      } catch (const nax::shape_error& e) {
        threw = true;
        type = "nax::shape_error";
        what = e.what();
      } catch (const std::invalid_argument& e) {
        threw = true;
        type = "std::invalid_argument";
        what = e.what();
      } catch (const std::exception& e) {
        threw = true;
        type = "another std::exception";
        what = e.what();
      }
      CHECK_MESSAGE(threw, "the bad input threw nothing");
      CHECK(type == r.exception);
      std::string want = r.message;
      if (const auto at = want.find("<file>"); at != std::string::npos)
        want.replace(at, 6, current_file);
      CHECK(what == want);
    }
    if (!current_file.empty()) std::remove(current_file.c_str());
  }
  nax::set_num_threads(threads);
}
