// Random vertex programs: seeds 10, 12, 13 and 15 (12 and 15 nest aggregations; check.hpp).
#include "check.hpp"

TEST_CASE("random vertex programs match plain loops, central differences and themselves, part 1") {
  // Of the first 16 seeds, 8 (with a quotient, a max, softmax sums, edge values, and
  // aggregations inside aggregations, under the root's), in two parts.
  random_programs::check_programs(std::integer_sequence<std::uint64_t, 10, 12, 13, 15>{});
}
