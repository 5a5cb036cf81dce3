# Every header with a compiled-component definitions block (`#if NAX_RUNTIME_DEFINITIONS`,
# nax/core/linkage.hpp) is listed exactly once in src/runtime/parts.hpp, so that exactly one part
# of nax_runtime defines it (parts.hpp says how a header lands in a part). A header reached only
# through another one would still be defined, but where is then an accident of include order.
# Usage: cmake -DROOT=<repository> -P runtime_parts.cmake
file(GLOB_RECURSE headers RELATIVE ${ROOT}/include ${ROOT}/include/nax/*.hpp)
file(STRINGS ${ROOT}/src/runtime/parts.hpp listed REGEX "^#include <nax/")
set(problems "")
foreach(header IN LISTS headers)
  file(STRINGS ${ROOT}/include/${header} blocks REGEX "^#if NAX_RUNTIME_DEFINITIONS")
  if(NOT blocks)
    continue()
  endif()
  set(count 0)
  foreach(line IN LISTS listed)
    if(line STREQUAL "#include <${header}>")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  if(NOT count EQUAL 1)
    string(APPEND problems "\n  ${header}: listed ${count} times in src/runtime/parts.hpp (must be once)")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "headers with compiled-component definitions:${problems}")
endif()
message(STATUS "every header with compiled-component definitions is in exactly one part")
