# A ```cpp file=<path> block is that file of the repository, verbatim: the file is built and run
# by the test suite, so the page shows code that is tested. Usage:
#   cmake -DBLOCK=<the block, as extracted> -DFILE=<the file> -DPAGE=<page> -P same_as_file.cmake
file(READ "${BLOCK}" block)
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${PAGE}: the block is `file=${FILE}`, which does not exist")
endif()
file(READ "${FILE}" content)
if(NOT block STREQUAL content)
  message(FATAL_ERROR "${PAGE}: the block marked file= differs from ${FILE}; copy one to the other")
endif()
