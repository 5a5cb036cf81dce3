// Random vertex programs: seeds 0, 3, 5 and 6 of the eight (check.hpp).
#include "check.hpp"

TEST_CASE("random vertex programs match plain loops, central differences and themselves, part 0") {
  // Of the first 16 seeds, 8 (with a quotient, a max, softmax sums, edge values, and
  // aggregations inside aggregations, under the root's), in two parts.
  random_programs::check_programs(std::integer_sequence<std::uint64_t, 0, 3, 5, 6>{});
}
