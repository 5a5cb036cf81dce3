// Every op of the list whose position is 4 modulo 8, in every layer that runs it (check.hpp).
#include "check.hpp"

TEST_CASE("every op of the list, part 4 of 8: typed, kernel and scalar body agree bit for bit") {
  every_op::part<4, 8>();
}
