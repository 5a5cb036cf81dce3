// Part 5 of the compiled component (parts.hpp, section 5).
#define NAX_RUNTIME_PART 5
#include "parts.hpp"
