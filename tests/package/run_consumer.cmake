# Driver of the CTest test nax.package.find_package (run as `cmake -P`, see CMakeLists.txt here).
#
#   1. install the nax build tree NAX_BINARY_DIR into a fresh prefix WORK_DIR/prefix
#   2. configure CONSUMER_SOURCE_DIR with find_package(nax CONFIG REQUIRED), CMAKE_PREFIX_PATH
#      set to that prefix alone and the package registries off, same compiler and generator
#   3. check that nax was found inside the prefix (not in the source or build tree)
#   4. build the consumer and run its programs, comparing their output with EXPECTED_OUTPUT (app:
#      header-only) and EXPECTED_RUNTIME_OUTPUT (app_runtime: with the compiled nax::runtime),
#      and app_transformer (examples/transformer.cpp compiled with other flags than the
#      component, CONSUMER_FLAGS) checking a transformer block against its reference ("ok")
#   5. link a program compiled for another instruction set than the component by hand (no CMake,
#      so the component's flags are not passed on): the link must fail naming both sets
#
# Inputs (-D): NAX_BINARY_DIR NAX_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR
#              EXPECTED_OUTPUT, and optionally CONFIG GENERATOR_PLATFORM GENERATOR_TOOLSET
#              MAKE_PROGRAM NAX_DEP_xsimd_DIR NAX_DEP_Boost_DIR
cmake_minimum_required(VERSION 3.25)

set(_test "nax.package.find_package")

foreach(_var IN ITEMS NAX_BINARY_DIR NAX_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER
                      GENERATOR EXPECTED_OUTPUT)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "${_test}: run_consumer.cmake needs -D${_var}=...")
  endif()
endforeach()

# Single-config builds have an empty $<CONFIG> unless CMAKE_BUILD_TYPE is set; the consumer is
# then built as Release.
if(CONFIG)
  set(_config "${CONFIG}")
else()
  set(_config Release)
endif()

set(_prefix "${WORK_DIR}/prefix")
set(_consumer_build "${WORK_DIR}/consumer-build")

# Stops the test: the further arguments (captured output) verbatim on stderr, then `summary`.
# (message(FATAL_ERROR) re-wraps its text, which garbles compiler diagnostics.)
function(_fail summary)
  # ARGV<n>, not ARGN: compiler output may contain ';', which a list expansion would swallow.
  set(_details "")
  math(EXPR _last "${ARGC} - 1")
  if(_last GREATER_EQUAL 1)
    foreach(_i RANGE 1 ${_last})
      string(APPEND _details "${ARGV${_i}}")
    endforeach()
  endif()
  if(NOT _details STREQUAL "")
    message(NOTICE "${_details}")
  endif()
  message(FATAL_ERROR "${_test}: ${summary}")
endfunction()

# Runs a command; on failure stops with the step's name, the command and everything it printed.
function(_run step)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _out)
  if(NOT _rc STREQUAL "0")
    list(JOIN ARGN "' '" _cmd)
    _fail("step '${step}' failed (exit status: ${_rc}), its output is above"
          "---- ${_test}: command of step '${step}':\n'${_cmd}'\n---- its output:\n${_out}\n----")
  endif()
  message(STATUS "${_test}: ${step}: ok")
  set(_run_output "${_out}" PARENT_SCOPE)
endfunction()

# A package found elsewhere than in the scratch prefix would make the test meaningless: keep the
# environment from pointing find_package at another copy of nax.
foreach(_env IN ITEMS nax_DIR nax_ROOT NAX_ROOT)
  unset(ENV{${_env}})
endforeach()

# --- 1. install ----------------------------------------------------------------------------------
file(REMOVE_RECURSE "${_prefix}" "${_consumer_build}")
if(EXISTS "${_prefix}" OR EXISTS "${_consumer_build}")
  message(FATAL_ERROR "${_test}: could not remove '${_prefix}' or '${_consumer_build}'")
endif()

set(_install_cmd "${CMAKE_COMMAND}" --install "${NAX_BINARY_DIR}" --prefix "${_prefix}")
if(CONFIG)
  list(APPEND _install_cmd --config "${CONFIG}")
endif()
_run("install nax into ${_prefix}" ${_install_cmd})

foreach(_file IN ITEMS include/nax/nax.hpp share/cmake/nax/naxConfig.cmake
                       share/cmake/nax/naxConfigVersion.cmake share/cmake/nax/naxTargets.cmake)
  if(NOT EXISTS "${_prefix}/${_file}")
    _fail("the install did not produce '${_prefix}/${_file}' (install output above)"
          "${_run_output}")
  endif()
endforeach()

# --- 2. configure the consumer -------------------------------------------------------------------
set(_configure_cmd
    "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_consumer_build}"
    -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${_config}"
    "-DCMAKE_PREFIX_PATH=${_prefix}"
    # No user or system package registry (a build tree registered with export(PACKAGE) would
    # otherwise be a candidate). The older CMAKE_FIND_PACKAGE_NO_*_REGISTRY spellings are ignored
    # when these are set, and CMake warns that they are unused, so they are not passed.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    "-DNAX_EXPECTED_PREFIX=${_prefix}"
    "-DNAX_FORBIDDEN_INCLUDE_DIR=${NAX_SOURCE_DIR}/include"
    "-DNAX_EXAMPLES_DIR=${NAX_SOURCE_DIR}/examples"
    "-DNAX_CONSUMER_FLAGS=${CONSUMER_FLAGS}")
if(GENERATOR_PLATFORM)
  list(APPEND _configure_cmd -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND _configure_cmd -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
  list(APPEND _configure_cmd "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
# Where nax's own build found its dependencies (the consumer must find them without help from
# CMAKE_PREFIX_PATH, which names the scratch prefix only).
foreach(_dep IN ITEMS xsimd Boost)
  if(NAX_DEP_${_dep}_DIR)
    list(APPEND _configure_cmd "-D${_dep}_DIR=${NAX_DEP_${_dep}_DIR}")
  endif()
endforeach()
_run("configure the consumer" ${_configure_cmd})
set(_configure_output "${_run_output}")

# --- 3. nax must come from the scratch prefix ----------------------------------------------------
# (The consumer's CMakeLists.txt also checks nax::nax's include directories.)
file(STRINGS "${_consumer_build}/CMakeCache.txt" _nax_dir_line REGEX "^nax_DIR:")
string(REGEX REPLACE "^nax_DIR:[A-Z]+=" "" _nax_dir "${_nax_dir_line}")
file(REAL_PATH "${_prefix}" _prefix_real)
if(_nax_dir STREQUAL "")
  _fail("nax_DIR is not set in the consumer's CMakeCache.txt (configure output above)"
        "${_configure_output}")
endif()
file(REAL_PATH "${_nax_dir}" _nax_dir_real)
cmake_path(IS_PREFIX _prefix_real "${_nax_dir_real}" NORMALIZE _inside)
if(NOT _inside)
  set(_msg "the consumer found nax in '${_nax_dir}', not in the scratch prefix '${_prefix}'")
  _fail("${_msg} (configure output above)" "${_configure_output}")
endif()
message(STATUS "${_test}: nax_DIR = ${_nax_dir}")

# --- 4. build and run ----------------------------------------------------------------------------
_run("build the consumer" "${CMAKE_COMMAND}" --build "${_consumer_build}" --config "${_config}")

# Runs consumer program `name` and compares its standard output with `expected`.
function(_run_program name expected)
  set(_location_file "${_consumer_build}/${name}-location-${_config}.txt")
  if(NOT EXISTS "${_location_file}")
    message(FATAL_ERROR "${_test}: '${_location_file}' is missing: cannot locate '${name}'")
  endif()
  file(READ "${_location_file}" _app)
  string(STRIP "${_app}" _app)
  if(NOT EXISTS "${_app}")
    message(FATAL_ERROR "${_test}: the consumer program '${_app}' was not built")
  endif()
  # Apart from _run(): only standard output is compared, standard error is shown on failure.
  execute_process(COMMAND "${_app}"
                  RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _stdout
                  ERROR_VARIABLE _stderr)
  if(NOT _rc STREQUAL "0")
    _fail("step 'run ${name}' failed (exit status: ${_rc}), its output is above"
          "---- ${_test}: command:\n'${_app}'\n---- standard output:\n${_stdout}\n"
          "---- standard error:\n${_stderr}\n----")
  endif()
  string(REGEX REPLACE "[\r\n]+$" "" _actual "${_stdout}")
  if(NOT "${_actual}" STREQUAL "${expected}")
    _fail("unexpected output from ${name}: expected '${expected}', got '${_actual}'"
          "---- standard error of '${_app}':\n${_stderr}\n----")
  endif()
  message(STATUS "${_test}: ${name} printed '${_actual}' as expected")
endfunction()

_run_program(app "${EXPECTED_OUTPUT}")
if(EXPECTED_RUNTIME_OUTPUT)
  _run_program(app_runtime "${EXPECTED_RUNTIME_OUTPUT}")
endif()

# A program with other flags than the component: right answers, since nax::runtime passes its
# flags on (the last -march wins). The program checks itself and prints "ok" last.
set(_location_file "${_consumer_build}/app_transformer-location-${_config}.txt")
file(READ "${_location_file}" _app)
string(STRIP "${_app}" _app)
execute_process(COMMAND "${_app}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _stdout ERROR_VARIABLE _stderr)
if(NOT _rc STREQUAL "0" OR NOT _stdout MATCHES "\nok\n$")
  _fail("app_transformer (compiled with '${CONSUMER_FLAGS}' before nax::runtime's flags) is not "
        "ok: exit status ${_rc}" "---- standard output:\n${_stdout}\n---- standard error:\n"
        "${_stderr}\n----")
endif()
message(STATUS "${_test}: app_transformer, compiled with '${CONSUMER_FLAGS}' too, printed ok")

# --- 5. a program for another instruction set must not link --------------------------------------
# Compiled and linked by hand, as a build without nax's CMake target would: for x86-64's baseline
# (SSE2), or for AVX2 with FMA if the component is the baseline. Both sets must be named.
file(GLOB_RECURSE _archive "${_prefix}/*/libnax_runtime.a")
if(NOT _archive)
  _fail("no libnax_runtime.a under '${_prefix}'")
endif()
list(GET _archive 0 _archive)
file(STRINGS "${_archive}" _defined REGEX "nax_runtime_compiled_for_[a-z0-9_]+")
string(REGEX MATCH "nax_runtime_compiled_for_([a-z0-9_]+)" _ "${_defined}")
set(_component_isa "${CMAKE_MATCH_1}")
if(_component_isa STREQUAL "")
  _fail("'${_archive}' defines no nax_runtime_compiled_for_<instruction set>")
endif()
if(_component_isa MATCHES "^(sse|ssse|avx|avx2|avx512)")
  if(_component_isa STREQUAL "sse2")
    set(_other_flags -mavx2 -mfma)
    set(_other_isa avx2_fma)
  else()
    set(_other_flags -march=x86-64)
    set(_other_isa sse2)
  endif()
  execute_process(
    COMMAND "${CXX_COMPILER}" -std=c++20 -DNAX_SEPARATE_RUNTIME ${_other_flags}
            "-I${_prefix}/include" "${CONSUMER_SOURCE_DIR}/runtime.cpp" "${_archive}" -pthread
            -ldl -o "${WORK_DIR}/mismatched"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc STREQUAL "0")
    _fail("a program compiled with '${_other_flags}' linked the component compiled for "
          "${_component_isa}: it must not")
  endif()
  foreach(_symbol IN ITEMS "nax_runtime_compiled_for_${_other_isa}"
                           "nax_program_compiled_for_${_component_isa}")
    string(FIND "${_out}" "${_symbol}" _at)
    if(_at EQUAL -1)
      _fail("linking a program for ${_other_isa} with the component for ${_component_isa} "
            "failed without naming '${_symbol}'" "---- its output:\n${_out}\n----")
    endif()
  endforeach()
  message(STATUS "${_test}: a program for ${_other_isa} did not link the component for "
                 "${_component_isa}, both named")
else()
  message(STATUS "${_test}: the component is for ${_component_isa}: no other x86 set to try")
endif()
