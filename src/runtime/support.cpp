// Part 3 of the compiled component (parts.hpp, section 3).
#define NAX_RUNTIME_PART 3
#include "parts.hpp"
