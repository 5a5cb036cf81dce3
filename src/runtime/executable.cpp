// Part 6 of the compiled component (parts.hpp, section 6).
#define NAX_RUNTIME_PART 6
#include "parts.hpp"
