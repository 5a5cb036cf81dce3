# Overlay port for nax, built from the repository checkout this file lives in
# (<repo>/packaging/vcpkg/ports/nax/portfile.cmake): nax has no public download to fetch.
#
#   vcpkg install nax --overlay-ports=<repo>/packaging/vcpkg/ports
#
# vcpkg does not hash the sources of such a port: after changing the checkout, reinstall with
# `vcpkg remove nax` first (and --binarysource=clear), or bump "port-version" in vcpkg.json.
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
if(NOT EXISTS "${SOURCE_PATH}/CMakeLists.txt" OR NOT EXISTS "${SOURCE_PATH}/include/nax/nax.hpp")
  message(FATAL_ERROR "The nax overlay port expects to live in <nax checkout>/packaging/vcpkg/ports/nax; "
                      "'${SOURCE_PATH}' is not a nax checkout.")
endif()

# The headers (nax::nax) and the compiled component nax::runtime (a static library: the graph
# layer, the runtime and its kernels). Its kernels use the compiler's default instruction set
# unless the feature "native" asks for the building machine's (-march=native): vcpkg's binary
# cache may move a package to another machine, so that is not the default.
set(NAX_RUNTIME_FLAGS "")
if("native" IN_LIST FEATURES)
    set(NAX_RUNTIME_FLAGS "-march=native")
endif()

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        -DNAX_BUILD_TESTS=OFF
        -DNAX_BUILD_EXAMPLES=OFF
        -DNAX_BUILD_BENCHMARKS=OFF
        -DNAX_BUILD_RUNTIME=ON
        "-DNAX_RUNTIME_FLAGS=${NAX_RUNTIME_FLAGS}"
)
vcpkg_cmake_install()

# nax installs its package config to share/cmake/nax; vcpkg wants it in share/nax.
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/nax)

file(REMOVE_RECURSE
    "${CURRENT_PACKAGES_DIR}/debug/include"
    "${CURRENT_PACKAGES_DIR}/debug/share"
    # nax's install copies LICENSE to share/doc/nax; vcpkg keeps it as share/nax/copyright.
    "${CURRENT_PACKAGES_DIR}/share/doc"
)

vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
