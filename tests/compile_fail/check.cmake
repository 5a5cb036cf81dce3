# Usage: cmake -DCXX=<compiler> -DFAMILY=gcc|clang -DINCLUDE=<nax/include> -DSOURCE=<snippet>
#              -P check.cmake
# The snippet's `// expect: TEXT` lines (and `// expect-gcc:` / `// expect-clang:` ones for this
# compiler family) must all appear in the first line of the compiler's output that says ": error: ".
set(flags -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I${INCLUDE} ${SOURCE})

execute_process(COMMAND ${CXX} ${flags} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "control build of ${SOURCE} (without NAX_COMPILE_FAIL) failed:\n${err}")
endif()

execute_process(COMMAND ${CXX} -DNAX_COMPILE_FAIL ${flags} RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_QUIET)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled with NAX_COMPILE_FAIL; it must not")
endif()

# g++ quotes with ‘ ’ in a UTF-8 locale and with ' ' in the C locale: compare in the latter.
string(REPLACE "‘" "'" err "${err}")
string(REPLACE "’" "'" err "${err}")
string(REGEX MATCH "[^\n]*: error: [^\n]*" first "${err}")
file(STRINGS ${SOURCE} expectations REGEX "^// expect(-${FAMILY})?: ")
if(NOT expectations)
  message(FATAL_ERROR "${SOURCE} has no `// expect:` line for ${FAMILY}")
endif()
foreach(line IN LISTS expectations)
  string(REGEX REPLACE "^// expect(-${FAMILY})?: " "" text "${line}")
  string(FIND "${first}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "first error line lacks `${text}`:\n${first}\n\nfull output:\n${err}")
  endif()
endforeach()
message(STATUS "first error line: ${first}")
