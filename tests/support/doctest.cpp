// doctest's implementation, compiled once (without the precompiled header, which holds doctest's
// declarations only) and linked into every program of the test build: the test programs, and
// the docs' and fuzz replays' programs, whose precompiled header registers doctest's default
// test suite too.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
