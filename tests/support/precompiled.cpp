// The owner of the tests' precompiled header (support/precompiled.hpp, tests/CMakeLists.txt):
// CMake compiles the header for this target, and every test program reuses it.
