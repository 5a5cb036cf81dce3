#pragma once
// A file of the repository, read whole, for the tests that check the docs against the code (an
// op's row in docs/ops.md, a graph op's in docs/graph.md). The repository's root comes from the
// environment (tests/CMakeLists.txt sets NAX_SOURCE_DIR for CTest), not from the command line:
// a path compiled in would make every build directory's objects differ.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace nax_test {

inline std::string source_file(const std::string& relative) {
  const char* root = std::getenv("NAX_SOURCE_DIR");
  REQUIRE_MESSAGE(root != nullptr, "NAX_SOURCE_DIR (the repository's root) is not set");
  const std::string path = std::string(root) + "/" + relative;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, path << " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace nax_test
