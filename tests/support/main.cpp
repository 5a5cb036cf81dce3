// The runner of every test program (tests/CMakeLists.txt): doctest's, with its command line
// (--source-file=..., --test-case=..., doctest's --help).
#include <doctest/doctest.h>

int main(int argc, char** argv) { return doctest::Context(argc, argv).run(); }
