// Part 4 of the compiled component (parts.hpp, section 4).
#define NAX_RUNTIME_PART 4
#include "parts.hpp"
