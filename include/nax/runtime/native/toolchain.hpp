#pragma once
// How the native tier compiles a generated unit: which compiler, which flags, where nax's
// headers are, and the identity of all three (a part of every cache key, so that a new compiler,
// other flags or changed headers never load an old kernel).
//
// The compiler is the one this code was built with unless NAX_NATIVE_CXX names another; the
// instruction-set flags reproduce this build's (-mavx2 -mfma ... from the predefined macros), so
// xsimd picks the same kernels and a native group gives the interpreter's bits. The headers are
// found from NAX_NATIVE_INCLUDE, else from this file's own path. NAX_NATIVE_FLAGS adds flags
// (an include directory for xsimd or Boost outside the system's, say).

#include <string>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>

namespace nax::NAX_ISA::runtime::native {

struct toolchain {
  std::string compiler;            // a path, or a name looked up in PATH
  std::vector<std::string> flags;  // everything but the source and -o
  std::string include_dir;         // holds nax/
  std::string identity;            // the compiler's file, the flags, the headers' hash
  std::string problem;             // non-empty: why nothing can be compiled
};

/// The toolchain of this process, worked out on first use (it reads the environment once, and
/// every header under the include directory to hash them).
NAX_RUNTIME_INLINE const toolchain& process_toolchain();

/// The toolchain from explicit parts (tests; process_toolchain uses it): `compiler` as given or,
/// if empty, this build's; `include_dir` likewise.
NAX_RUNTIME_INLINE toolchain make_toolchain(std::string compiler, std::string include_dir,
                                            const std::string& extra_flags);

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include <nax/runtime/native/content_hash.hpp>

namespace nax::NAX_ISA::runtime::native {
namespace detail {

#define NAX_NATIVE_STRINGIFY2(x) #x
#define NAX_NATIVE_STRINGIFY(x) NAX_NATIVE_STRINGIFY2(x)

// The flags that give the generated unit this build's instruction sets and language mode.
inline std::vector<std::string> build_flags() {
  std::vector<std::string> f;
#if defined(__STRICT_ANSI__)
  f.push_back("-std=c++20");
#else
  f.push_back("-std=gnu++20");
#endif
  f.insert(f.end(), {"-O3", "-fPIC", "-shared", "-fvisibility=hidden", "-w", "-pipe"});
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
  // g++ contracts a * b + c within an op's body only when it optimizes: a unit for a build
  // without optimization must not either, or it would round differently from the build's bodies.
  f.push_back("-ffp-contract=off");
#endif
#if defined(__SSE2__)
  f.push_back("-msse2");
#endif
#if defined(__SSE3__)
  f.push_back("-msse3");
#endif
#if defined(__SSSE3__)
  f.push_back("-mssse3");
#endif
#if defined(__SSE4_1__)
  f.push_back("-msse4.1");
#endif
#if defined(__SSE4_2__)
  f.push_back("-msse4.2");
#endif
#if defined(__AVX__)
  f.push_back("-mavx");
#endif
#if defined(__AVX2__)
  f.push_back("-mavx2");
#endif
#if defined(__FMA__)
  f.push_back("-mfma");
#endif
#if defined(__F16C__)
  f.push_back("-mf16c");
#endif
#if defined(__AVX512F__)
  f.push_back("-mavx512f");
#endif
#if defined(__AVX512CD__)
  f.push_back("-mavx512cd");
#endif
#if defined(__AVX512DQ__)
  f.push_back("-mavx512dq");
#endif
#if defined(__AVX512BW__)
  f.push_back("-mavx512bw");
#endif
#if defined(__AVX512VL__)
  f.push_back("-mavx512vl");
#endif
#if defined(__ARM_NEON)
  f.push_back("-march=native");  // (no finer macro map for ARM yet)
#endif
#if defined(NAX_SIMD_ARCH)
  f.push_back("-DNAX_SIMD_ARCH=" NAX_NATIVE_STRINGIFY(NAX_SIMD_ARCH));
#endif
  return f;
}

// This build's compiler, by name: the same major version first.
inline std::string build_compiler() {
#if defined(__clang__)
  return "clang++-" NAX_NATIVE_STRINGIFY(__clang_major__);
#elif defined(__GNUC__)
  return "g++-" NAX_NATIVE_STRINGIFY(__GNUC__);
#else
  return "c++";
#endif
}

#undef NAX_NATIVE_STRINGIFY
#undef NAX_NATIVE_STRINGIFY2

// `name` as an executable file: itself if it has a slash, else the first match in PATH; empty
// if none.
inline std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// The include directory this file was compiled from (…/include/nax/runtime/native/toolchain.hpp),
// if __FILE__ is an absolute path that still exists.
inline std::string own_include_dir() {
  const std::filesystem::path self(__FILE__);
  if (!self.is_absolute()) return {};
  std::filesystem::path dir = self.parent_path().parent_path().parent_path().parent_path();
  std::error_code ec;
  return std::filesystem::exists(dir / "nax" / "nax.hpp", ec) ? dir.string() : "";
}

// A hash of every file under dir/nax (paths and contents, in sorted order).
inline std::string headers_hash(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(std::filesystem::path(dir) / "nax", ec),
       end;
       !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  content_hash h;
  for (const std::filesystem::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    h.add(p.lexically_relative(dir).string()).end_field().add(text).end_field();
  }
  return h.hex();
}

}  // namespace detail

NAX_RUNTIME_INLINE toolchain make_toolchain(std::string compiler, std::string include_dir,
                                            const std::string& extra_flags) {
  toolchain t;
  if (compiler.empty()) {
    compiler = detail::find_executable(detail::build_compiler());
    if (compiler.empty()) compiler = detail::find_executable("c++");
    if (compiler.empty())
      t.problem = "no C++ compiler found (looked for " + detail::build_compiler() +
                  " and c++ in PATH; NAX_NATIVE_CXX names one)";
  } else if (detail::find_executable(compiler).empty()) {
    t.problem = "the compiler '" + compiler + "' is not an executable file";
  }
  t.compiler = compiler;
  if (include_dir.empty()) include_dir = detail::own_include_dir();
  std::error_code ec;
  if (t.problem.empty() &&
      (include_dir.empty() ||
       !std::filesystem::exists(std::filesystem::path(include_dir) / "nax" / "nax.hpp", ec)))
    t.problem = include_dir.empty()
                    ? "nax's headers were not found (set NAX_NATIVE_INCLUDE to the directory "
                      "that holds nax/)"
                    : "NAX_NATIVE_INCLUDE '" + include_dir + "' holds no nax/nax.hpp";
  t.include_dir = include_dir;
  t.flags = detail::build_flags();
  t.flags.push_back("-I" + include_dir);
  std::stringstream extra(extra_flags);
  for (std::string f; extra >> f;) t.flags.push_back(f);
  if (!t.problem.empty()) return t;
  // The compiler's identity: its resolved file's path, size and time (cheaper than running it).
  content_hash id;
  const std::string exe = detail::find_executable(t.compiler);
  std::error_code rc;
  const std::filesystem::path real = std::filesystem::canonical(exe, rc);
  struct stat st {};
  if (!rc && ::stat(real.c_str(), &st) == 0)
    id.add(real.string())
        .end_field()
        .add(std::to_string(st.st_size))
        .end_field()
        .add(std::to_string(st.st_mtime));
  for (const std::string& f : t.flags)  // (not where the headers are: what they hold)
    if (f != "-I" + include_dir) id.end_field().add(f);
  id.end_field().add(detail::headers_hash(include_dir));
  t.identity = id.hex();
  return t;
}

NAX_RUNTIME_INLINE const toolchain& process_toolchain() {
  static const toolchain t = [] {
    const char* cxx = std::getenv("NAX_NATIVE_CXX");
    const char* inc = std::getenv("NAX_NATIVE_INCLUDE");
    const char* flags = std::getenv("NAX_NATIVE_FLAGS");
    return make_toolchain(cxx ? cxx : "", inc ? inc : "", flags ? flags : "");
  }();
  return t;
}

}  // namespace nax::runtime::native
#endif  // NAX_RUNTIME_DEFINITIONS
