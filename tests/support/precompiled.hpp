// The precompiled header of every test program (tests/CMakeLists.txt: compiled once per
// configuration, then loaded by each test source before its first line). All of nax's
// user-facing surface, doctest and the standard headers the tests use: about 2 s of parsing
// per source at -O0 on the project's machines, paid once instead of once per source.
//
// A test still includes what it uses, so that it compiles without this header too
// (NAX_TEST_PCH=OFF). Nothing here defines a macro that changes how nax compiles.
#include <nax/nax.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
