#pragma once
// What the programs generated from the docs' C++ blocks call (tests/docs/extract.cmake; the
// conventions are in docs/writing.md). Nothing here is nax: it only reports which block failed.

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nax_doc {

// Runs one block (a scope of the page's main) and reports an exception that escapes it with the
// block's place in the page; the page's other blocks still run.
template <class Block>
int run(const char* where, Block&& block) {
  try {
    block();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << where << ": the block threw: " << e.what() << "\n";
  } catch (...) {
    std::cerr << where << ": the block threw something that is not a std::exception\n";
  }
  return 1;
}

// A statement the page marks `// throws "text"`: it must throw a std::exception whose what()
// contains the text (any std::exception when the page quotes none).
template <class Statement>
void expect_throw(Statement&& statement, std::string_view expected, const char* file, int line) {
  const std::string where = std::string(file) + ":" + std::to_string(line) + ": ";
  try {
    statement();
  } catch (const std::exception& e) {
    if (std::string_view(e.what()).find(expected) != std::string_view::npos) return;
    throw std::runtime_error(where + "the message shown is \"" + std::string(expected) +
                             "\", but what() is \"" + e.what() + "\"");
  }
  throw std::runtime_error(where + "the page says this throws; it did not");
}

// A value the page states: NAX_DOC_CHECK(s.total == 3) fails the block, naming the page's line,
// if the condition is false (a comment saying `// 3` would not be tested).
inline void check(bool ok, const char* condition, const char* file, int line) {
  if (!ok)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": the page states " +
                             condition + "; it is false");
}

}  // namespace nax_doc

#define NAX_DOC_CHECK(...) \
  ::nax_doc::check(static_cast<bool>(__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
