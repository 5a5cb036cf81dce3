"""Conan 2 recipe for nax (header-only).

    conan create . --build=missing            # package nax/0.1.0 into the local cache
    # consumer: requires = "nax/0.1.0"; generators CMakeDeps + CMakeToolchain, then
    #           find_package(nax CONFIG REQUIRED) / target_link_libraries(app PRIVATE nax::nax)

Not exercised by nax's own tests (no Conan remote is reachable where they run); the CMake install
that this layout mirrors is, by the CTest test nax.package.find_package.
"""

import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class NaxConan(ConanFile):
    name = "nax"
    version = "0.1.0"
    description = "Typed tensors with named axes, fused at compile time"
    license = "MIT"
    topics = ("tensor", "named-axes", "simd", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    # package() uses only include/ and LICENSE; CMakeLists.txt and cmake/ are exported too so that
    # the recipe's sources can also be installed with CMake (with NAX_BUILD_TESTS/EXAMPLES=OFF:
    # tests/ and examples/ are not exported).
    exports_sources = "include/*", "CMakeLists.txt", "cmake/*", "LICENSE"
    no_copy_source = True

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        # Same versions as nax's CMake build asks for (find_package(xsimd 8), Boost >= 1.74).
        self.requires("xsimd/8.1.0")
        # nax uses Boost.Mp11 only, which is header-only: a consumer that needs no compiled Boost
        # library can pass -o "boost/*:header_only=True" (not forced here: another package in the
        # same graph may need the compiled ones).
        self.requires("boost/[>=1.74.0 <2]")

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def package(self):
        # The same layout as `cmake --install`: include/nax/**; the license under licenses/
        # (Conan's place for it; the CMake install puts it in share/doc/nax). nax's own
        # naxConfig.cmake is not packaged: CMakeDeps generates the consumers' config instead.
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        copy(self, "*", src=os.path.join(self.source_folder, "include"),
             dst=os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "nax")
        self.cpp_info.set_property("cmake_target_name", "nax::nax")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["xsimd::xsimd", "boost::headers"]
