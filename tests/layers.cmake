# The include direction of nax's layers (docs/architecture.md), checked on every #include line
# of include/nax: a header may include headers of its own layer and of the layers below it,
# never of a layer above. Usage: cmake -DINCLUDE=<repo>/include -P layers.cmake
#
# Two chains share the bottom (core, simd, exec, ops, kernels):
#   core -> simd -> exec -> ops -> kernels -> typed
#                                  kernels -> graph -> runtime -> jit
# and gnn, then io, sit on top of everything; nax.hpp (the umbrella) may include anything.
# typed and graph never see each other: jit is the one layer that sees both.
#
# It also checks the namespaces (include/nax/core/isa.hpp): every layer above core declares its
# names in the instruction set's inline namespace (`namespace nax::NAX_ISA...`), and core never
# does (except nax::error, the diagnostics' tag types, which any layer may add to).

set(order_core core)
set(order_simd core simd)
set(order_exec core simd exec)
set(order_ops core simd exec ops)
set(order_kernels core simd exec ops kernels)
set(order_typed core simd exec ops kernels typed)
set(order_graph core simd exec ops kernels graph)
set(order_runtime core simd exec ops kernels graph runtime)
set(order_jit core simd exec ops kernels typed graph runtime jit)
set(order_gnn core simd exec ops kernels typed graph runtime jit gnn)
set(order_io core simd exec ops kernels typed graph runtime jit gnn io)
set(layers core simd exec ops kernels typed graph runtime jit gnn io)

file(GLOB_RECURSE headers RELATIVE ${INCLUDE}/nax ${INCLUDE}/nax/*.hpp ${INCLUDE}/nax/*.ipp)
set(violations "")
set(checked 0)
foreach(header IN LISTS headers)
  if(header STREQUAL "nax.hpp")
    continue()
  endif()
  string(REGEX MATCH "^[a-z_]+" layer "${header}")
  list(FIND layers "${layer}" known)
  if(known EQUAL -1)
    string(APPEND violations "  ${header}: not in a known layer (${layers})\n")
    continue()
  endif()
  file(STRINGS ${INCLUDE}/nax/${header} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]nax/")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "nax/([a-z_]+)/" _ "${line}")
    set(target "${CMAKE_MATCH_1}")
    math(EXPR checked "${checked} + 1")
    if(target STREQUAL "")
      string(APPEND violations "  ${header}: ${line} (the umbrella header, from inside nax)\n")
      continue()
    endif()
    list(FIND order_${layer} "${target}" allowed)
    if(allowed EQUAL -1)
      string(APPEND violations "  ${header} (layer ${layer}) includes ${target}/: ${line}\n")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes that go up a layer (see docs/architecture.md):\n${violations}")
endif()

set(namespaces 0)
foreach(header IN LISTS headers)
  if(header STREQUAL "nax.hpp" OR header STREQUAL "core/isa.hpp")
    continue()
  endif()
  string(REGEX MATCH "^[a-z_]+" layer "${header}")
  file(STRINGS ${INCLUDE}/nax/${header} lines REGEX "^[ \t]*namespace nax[ :]")
  foreach(line IN LISTS lines)
    math(EXPR namespaces "${namespaces} + 1")
    if(line MATCHES "namespace nax::error \\{")
      continue()
    endif()
    if(layer STREQUAL "core" AND line MATCHES "NAX_ISA")
      string(APPEND violations "  ${header}: ${line} (core/ is the same for every instruction set)\n")
    elseif(NOT layer STREQUAL "core" AND NOT line MATCHES "^[ \t]*namespace nax::NAX_ISA[ :]")
      string(APPEND violations "  ${header}: ${line} (write namespace nax::NAX_ISA...)\n")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "namespaces outside the instruction set's (include/nax/core/isa.hpp):\n"
                      "${violations}")
endif()
message(STATUS "${checked} #include lines in ${INCLUDE}/nax go down or across, none up; "
               "${namespaces} namespace declarations by the instruction set's rule")
