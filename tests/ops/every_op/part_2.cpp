// Every op of the list whose position is 2 modulo 8, in every layer that runs it (check.hpp).
#include "check.hpp"

TEST_CASE("every op of the list, part 2 of 8: typed, kernel and scalar body agree bit for bit") {
  every_op::part<2, 8>();
}
