// Part 1 of the compiled component (parts.hpp, section 1).
#define NAX_RUNTIME_PART 1
#include "parts.hpp"
