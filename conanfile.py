"""Conan 2 recipe for nax: the headers (nax::nax) and the compiled runtime component
(nax::runtime, a static library: the graph layer, the runtime and its kernels).

    conan create . --build=missing            # package nax/0.1.0 into the local cache
    # consumer: requires = "nax/0.1.0"; generators CMakeDeps + CMakeToolchain, then
    #   find_package(nax CONFIG REQUIRED)
    #   target_link_libraries(app PRIVATE nax::nax)        # header-only, or
    #   target_link_libraries(app PRIVATE nax::runtime)    # with the compiled component

Not exercised by nax's own tests (no Conan remote is reachable where they run); the CMake install
that this recipe drives is, by the CTest test nax.package.find_package.
"""

import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir

required_conan_version = ">=2.0"


class NaxConan(ConanFile):
    name = "nax"
    version = "0.1.0"
    description = "Typed tensors with named axes, fused at compile time"
    license = "MIT"
    topics = ("tensor", "named-axes", "simd", "jit")
    package_type = "static-library"
    settings = "os", "arch", "compiler", "build_type"
    # native: the runtime component's kernels for the building machine's CPU (-march=native);
    # off by default, since a binary package may be used on another machine.
    options = {"native": [True, False]}
    default_options = {"native": False}
    exports_sources = "include/*", "src/*", "CMakeLists.txt", "cmake/*", "LICENSE"

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        # Same versions as nax's CMake build asks for (find_package(xsimd 8), Boost >= 1.74).
        self.requires("xsimd/8.1.0", transitive_headers=True)
        # nax uses Boost.Mp11 only, which is header-only: a consumer that needs no compiled Boost
        # library can pass -o "boost/*:header_only=True" (not forced here: another package in the
        # same graph may need the compiled ones).
        self.requires("boost/[>=1.74.0 <2]", transitive_headers=True)

    def validate(self):
        check_min_cppstd(self, 20)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["NAX_BUILD_TESTS"] = False
        tc.cache_variables["NAX_BUILD_EXAMPLES"] = False
        tc.cache_variables["NAX_BUILD_BENCHMARKS"] = False
        tc.cache_variables["NAX_BUILD_RUNTIME"] = True
        tc.cache_variables["NAX_RUNTIME_FLAGS"] = "-march=native" if self.options.native else ""
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        # nax's own CMake package files are replaced by what CMakeDeps generates for consumers.
        rmdir(self, os.path.join(self.package_folder, "share", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "share", "doc"))
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "nax")
        headers = self.cpp_info.components["headers"]
        headers.set_property("cmake_target_name", "nax::nax")
        headers.bindirs = []
        headers.libdirs = []
        headers.requires = ["xsimd::xsimd", "boost::headers"]
        if self.settings.os in ("Linux", "FreeBSD"):
            headers.system_libs = ["pthread"]
        runtime = self.cpp_info.components["runtime"]
        runtime.set_property("cmake_target_name", "nax::runtime")
        runtime.libs = ["nax_runtime"]
        runtime.defines = ["NAX_SEPARATE_RUNTIME"]
        runtime.requires = ["headers"]
