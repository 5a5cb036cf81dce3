#pragma once
// Running the compiler on a generated unit, and loading what it made: the two steps of the
// native tier that touch the operating system (posix_spawn, waitpid, dlopen).

#include <mutex>
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
  bool stopped = false;  // not run, or killed, because compiler_processes::stop() was called
  std::string log;       // the compiler's output (its first lines), or why it did not run
  double seconds = 0;
};

/// The compilers one owner (a compile service) runs, so that another thread can stop them. Each
/// compiler starts in a process group of its own (the driver and what it starts: cc1plus, as),
/// and stop() kills the whole group; once stop() has been called, no compiler starts. A
/// compiler is started and recorded, and stop() kills, under one lock: none is started after
/// stop() nor killed after it was reaped (its group id cannot have been reused).
class compiler_processes {
 public:
  /// Kills the running compiler's process group, if any, and refuses every later start.
  NAX_RUNTIME_INLINE void stop();
  NAX_RUNTIME_INLINE bool stopped() const;
  /// The process group of the running compiler, or 0.
  NAX_RUNTIME_INLINE pid_t running() const;
  /// In a forked child: a fresh lock, and no compiler (the parent's is the parent's).
  NAX_RUNTIME_INLINE void after_fork_in_child();

 private:
  friend NAX_RUNTIME_INLINE compile_result compile_shared_object(const toolchain&, const std::string&,
                                              const std::string&, const std::string&,
                                              const std::vector<std::string>&,
                                              compiler_processes*);
  mutable std::mutex mutex_;
  pid_t group_ = 0;
  bool stopped_ = false;
};

/// Compiles the C++ file `source` into the shared object `object` with toolchain t and the
/// flags `extra`, the compiler's output going to `log_path`. `processes`, if given, records the
/// compiler while it runs (so that another thread can stop it) and may refuse to start it.
NAX_RUNTIME_INLINE compile_result compile_shared_object(
    const toolchain& t, const std::string& source, const std::string& object,
    const std::string& log_path, const std::vector<std::string>& extra = {},
    compiler_processes* processes = nullptr);

class disk_cache;

/// The flags that start a unit from the precompiled prelude (the headers every generated unit
/// includes, parsed once: ~4x less compile time per unit), kept in `cache` like a kernel and
/// built on first use. Empty if it cannot be built (`message` says why, unless it was stopped):
/// units then parse the headers themselves.
NAX_RUNTIME_INLINE std::vector<std::string> prelude_flags(
    const toolchain& t, const disk_cache& cache, std::string& message,
    compiler_processes* processes = nullptr);

/// The block function of the shared object at `path` (loaded for the life of the process: a
/// kernel may run at any time), or nullptr with `error` set.
NAX_RUNTIME_INLINE kernels::native::block_fn load_block_fn(const std::string& path,
                                                           std::string& error);

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <new>

#include <nax/kernels/elementwise/native_source.hpp>
#include <nax/runtime/native/disk_cache.hpp>

extern char** environ;

namespace nax::NAX_ISA::runtime::native {

NAX_RUNTIME_INLINE void compiler_processes::stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  if (group_ > 0) ::kill(-group_, SIGKILL);
}

NAX_RUNTIME_INLINE bool compiler_processes::stopped() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

NAX_RUNTIME_INLINE pid_t compiler_processes::running() const {
  std::lock_guard lock(mutex_);
  return group_;
}

NAX_RUNTIME_INLINE void compiler_processes::after_fork_in_child() {
  new (&mutex_) std::mutex();  // (the old one is abandoned: a parent's thread may have held it)
  group_ = 0;
}

NAX_RUNTIME_INLINE compile_result compile_shared_object(
    const toolchain& t, const std::string& source, const std::string& object,
    const std::string& log_path, const std::vector<std::string>& extra,
    compiler_processes* processes) {
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
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // a group of its own, named by its process id
  pid_t pid = 0;
  int err = 0;
  {
    std::unique_lock<std::mutex> lock;
    if (processes) {
      lock = std::unique_lock(processes->mutex_);
      if (processes->stopped_) err = -1;
    }
    if (err == 0)
      err = ::posix_spawnp(&pid, t.compiler.c_str(), &actions, &attributes, argv.data(), environ);
    if (err == 0 && processes) processes->group_ = pid;
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    r.stopped = err < 0;
    r.log = r.stopped ? "the native tier stopped"
                      : "cannot run " + t.compiler + ": " + std::strerror(err);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (processes) {
    std::lock_guard lock(processes->mutex_);
    processes->group_ = 0;  // (stop() killed the whole group, if it was called meanwhile)
    r.stopped = processes->stopped_;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.ok = !r.stopped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (r.stopped) {
    r.log = "the native tier stopped";
  } else if (!r.ok) {
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
                                                          compiler_processes* processes) {
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
  compile_result r =
      compile_shared_object(h, header, built, log, {"-x", "c++-header"}, processes);
  ::unlink(log.c_str());
  if (r.stopped) {  // (at exit, say: nothing to tell)
    ::unlink(built.c_str());
    return {};
  }
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
