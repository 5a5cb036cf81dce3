#pragma once
// Running the compiler on a generated unit, and loading what it made: the two steps of the
// native tier that touch the operating system (posix_spawn, waitpid, dlopen).

#include <atomic>
#include <string>
#include <vector>

#include <sys/types.h>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/kernels/elementwise/native_block.hpp>
#include <nax/runtime/native/toolchain.hpp>

namespace nax::NAX_ISA::runtime::native {

struct compile_result {
  bool ok = false;
  std::string log;  // the compiler's output (its first lines), or why it did not run
  double seconds = 0;
};

/// Compiles the C++ file `source` into the shared object `object` with toolchain t and the
/// flags `extra`, the compiler's output going to `log_path`. `child`, if given, holds the
/// compiler's process id while it runs (so that another thread can stop it).
NAX_RUNTIME_INLINE compile_result compile_shared_object(const toolchain& t,
                                                        const std::string& source,
                                                        const std::string& object,
                                                        const std::string& log_path,
                                                        const std::vector<std::string>& extra = {},
                                                        std::atomic<pid_t>* child = nullptr);

class disk_cache;

/// The flags that start a unit from the precompiled prelude (the headers every generated unit
/// includes, parsed once: ~4x less compile time per unit), kept in `cache` like a kernel and
/// built on first use. Empty if it cannot be built (`message` says why): units then parse the
/// headers themselves.
NAX_RUNTIME_INLINE std::vector<std::string> prelude_flags(const toolchain& t,
                                                          const disk_cache& cache,
                                                          std::string& message,
                                                          std::atomic<pid_t>* child = nullptr);

/// The block function of the shared object at `path` (loaded for the life of the process: a
/// kernel may run at any time), or nullptr with `error` set.
NAX_RUNTIME_INLINE kernels::native::block_fn load_block_fn(const std::string& path,
                                                           std::string& error);

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <nax/kernels/elementwise/native_source.hpp>
#include <nax/runtime/native/disk_cache.hpp>

extern char** environ;

namespace nax::NAX_ISA::runtime::native {

NAX_RUNTIME_INLINE compile_result compile_shared_object(
    const toolchain& t, const std::string& source, const std::string& object,
    const std::string& log_path, const std::vector<std::string>& extra, std::atomic<pid_t>* child) {
  compile_result r;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> args{t.compiler};
  args.insert(args.end(), t.flags.begin(), t.flags.end());
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {source, "-o", object});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, t.compiler.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    r.log = "cannot run " + t.compiler + ": " + std::strerror(err);
    return r;
  }
  if (child) child->store(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (child) child->store(0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!r.ok) {
    r.log = detail::read_file(log_path);
    if (r.log.size() > 2000) r.log.resize(2000);
    if (r.log.empty())
      r.log = WIFSIGNALED(status)
                  ? "the compiler was stopped by signal " + std::to_string(WTERMSIG(status))
                  : "the compiler failed with no output";
  }
  return r;
}

NAX_RUNTIME_INLINE std::vector<std::string> prelude_flags(const toolchain& t,
                                                          const disk_cache& cache,
                                                          std::string& message,
                                                          std::atomic<pid_t>* child) {
  const bool clang = t.compiler.find("clang") != std::string::npos;
  const std::string key = "prelude-" + t.identity;
  const char* ext = clang ? ".pch" : ".hpp.gch";  // g++ finds <header>.gch next to the header
  const std::string header = cache.object_path(key, ".hpp");
  const std::string text = "#include <nax/kernels/elementwise/native_block.hpp>\n";
  auto use = [&](const std::string& pch) {
    return clang ? std::vector<std::string>{"-include-pch", pch}
                 : std::vector<std::string>{"-include", header};
  };
  if (detail::read_file(header) != text) {
    const std::string tmp = cache.scratch_path(key, ".hpp");
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
    ::rename(tmp.c_str(), header.c_str());
  }
  std::string why;
  if (std::string found = cache.find(key, why, ext); !found.empty()) return use(found);
  if (!why.empty()) message = why;
  // The prelude is compiled as a header with the units' flags, less -shared.
  toolchain h = t;
  std::erase(h.flags, std::string("-shared"));
  const std::string built = cache.scratch_path(key, ext), log = cache.scratch_path(key, ".log");
  compile_result r = compile_shared_object(h, header, built, log, {"-x", "c++-header"}, child);
  ::unlink(log.c_str());
  std::string error;
  std::string stored = r.ok ? cache.store(key, built, error, ext) : std::string();
  if (stored.empty()) {
    ::unlink(built.c_str());
    message = "nax native: the precompiled prelude could not be built (" +
              (r.ok ? error : r.log.substr(0, r.log.find('\n'))) +
              "); each unit parses nax's headers itself";
    return {};
  }
  return use(stored);
}

NAX_RUNTIME_INLINE kernels::native::block_fn load_block_fn(const std::string& path,
                                                           std::string& error) {
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = ::dlerror();
    error = "cannot load " + path + ": " + (e ? e : "dlopen failed");
    return nullptr;
  }
  void* sym = ::dlsym(lib, std::string(kernels::native_entry).c_str());
  if (sym == nullptr) {
    error = path + " has no " + std::string(kernels::native_entry);
    return nullptr;
  }
  kernels::native::block_fn fn = nullptr;
  static_assert(sizeof(fn) == sizeof(sym));
  std::memcpy(&fn, &sym, sizeof fn);  // (an object pointer to a function pointer, as POSIX allows)
  return fn;
}

}  // namespace nax::runtime::native
#endif  // NAX_RUNTIME_DEFINITIONS
