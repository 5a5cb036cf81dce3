// Part 2 of the compiled component (parts.hpp, section 2).
#define NAX_RUNTIME_PART 2
#include "parts.hpp"
