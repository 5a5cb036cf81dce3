// Starts section NAX_RUNTIME_SECTION of parts.hpp (included once per section, so no include
// guard): its headers' definitions and explicit instantiations are compiled in the part of the
// same number, and only declared (extern templates) in the later parts.
#undef NAX_RUNTIME_DEFINITIONS
#undef NAX_RUNTIME_TEMPLATE
#if NAX_RUNTIME_PART == NAX_RUNTIME_SECTION
#define NAX_RUNTIME_DEFINITIONS 1
#define NAX_RUNTIME_TEMPLATE template
#else
#define NAX_RUNTIME_DEFINITIONS 0
#define NAX_RUNTIME_TEMPLATE extern template
#endif
