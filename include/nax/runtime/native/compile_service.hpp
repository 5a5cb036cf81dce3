#pragma once
// The native tier's compiler in the background: one per process, a worker thread that turns a
// generated unit into a loaded block function, looking in the disk cache (disk_cache.hpp) before
// it runs the compiler (compiler.hpp). Each distinct source is one native_kernel, shared by every
// step and executable that asks for it; its function pointer is published once, atomically, so
// a run reads it without a lock and switches from the interpreter on its next block loop.
//
// It never blocks a run and never fails one: a missing compiler, a failed compilation or a
// rejected cache entry leaves the kernel `failed` (the interpreter keeps running it), with one
// message on stderr (and in messages()).
//
// Stopping (stop(), the destructor, the process's exit) is prompt and leaves nothing behind: no
// compiler starts once it has begun, the running one is killed with its whole process group
// (compiler_processes), its temporary files are removed, and nothing is said (a stop is not a
// failure). The worker also removes, when it starts, temporary files of this scheme older than
// an hour that another process left in the cache directory (disk_cache::remove_stale_scratch).

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/kernels/elementwise/native_block.hpp>
#include <nax/runtime/native/compiler.hpp>
#include <nax/runtime/native/disk_cache.hpp>
#include <nax/runtime/native/toolchain.hpp>

namespace nax::NAX_ISA::runtime::native {

enum class kernel_state : std::uint8_t { queued, ready, failed };

/// One generated unit and what became of it.
struct native_kernel {
  std::string key;     // hash of the toolchain's identity and the source
  std::string source;  // the generated unit
  std::atomic<kernels::native::block_fn> fn{nullptr};
  std::atomic<kernel_state> state{kernel_state::queued};
  // Written by the worker before `state` leaves queued:
  bool from_disk = false;  // loaded from the disk cache (else compiled in this process)
  double seconds = 0;      // the compilation's or the load's wall time
  std::string failure;     // why it failed
};

/// What the service has done so far.
struct service_counts {
  std::size_t compiled = 0, loaded_from_disk = 0, failed = 0, rejected_entries = 0;
};

class compile_service {
 public:
  /// Temporary files of the cache's scheme older than this are another process's leftovers.
  static constexpr double stale_scratch_seconds = 3600;

  /// A service compiling with toolchain t into the cache directory `cache_dir` (empty: a private
  /// temporary directory, removed when the service stops). `quiet`: messages are kept for
  /// messages() but not printed.
  NAX_RUNTIME_INLINE compile_service(toolchain t, std::string cache_dir, bool quiet = false);
  /// Stops the worker: a compiler still running is killed with its process group, queued kernels
  /// fail, silently.
  NAX_RUNTIME_INLINE ~compile_service();
  compile_service(const compile_service&) = delete;
  compile_service& operator=(const compile_service&) = delete;

  /// The process's service: process_toolchain() and disk_cache::default_dir(). Stopped at exit.
  NAX_RUNTIME_INLINE static compile_service& process();

  /// The kernel of `source`: the same object for the same source; queued for the worker if new.
  NAX_RUNTIME_INLINE std::shared_ptr<native_kernel> request(std::string source);
  /// Returns once k is ready or failed.
  NAX_RUNTIME_INLINE void wait(const native_kernel& k);

  /// Why nothing can be compiled, or empty.
  const std::string& problem() const noexcept { return toolchain_.problem; }
  const toolchain& tools() const noexcept { return toolchain_; }
  /// The cache directory in use.
  NAX_RUNTIME_INLINE std::string cache_dir() const;
  NAX_RUNTIME_INLINE service_counts counts() const;
  /// Every message so far, in order.
  NAX_RUNTIME_INLINE std::vector<std::string> messages() const;

  /// Stops the worker (as the destructor does); later requests fail at once.
  NAX_RUNTIME_INLINE void stop();

  /// fork() handlers (process() registers them for its service). Before: the state is taken
  /// whole (no request or finish is halfway). In the child, which has none of the parent's
  /// threads: its lock and condition are made afresh (the parent's worker may have been waiting
  /// on it), the kernel the parent's worker was building goes back to the queue, the parent's
  /// compiler and temporary directory are left to the parent, and the next request or wait
  /// starts a worker of the child's own.
  NAX_RUNTIME_INLINE void before_fork();
  NAX_RUNTIME_INLINE void after_fork_in_parent();
  NAX_RUNTIME_INLINE void after_fork_in_child();

 private:
  void start_worker_locked();
  void work();
  void build(native_kernel& k);
  void say(std::string message);
  void finish(native_kernel& k, kernels::native::block_fn fn, std::string failure);

  toolchain toolchain_;
  std::unique_ptr<disk_cache> cache_;
  std::string temporary_dir_;  // made by the service, removed when it stops
  bool quiet_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::string, std::shared_ptr<native_kernel>> kernels_;
  std::deque<std::shared_ptr<native_kernel>> queue_;
  std::vector<std::string> messages_;
  service_counts counts_;
  bool stopping_ = false, said_unavailable_ = false;
  bool prelude_tried_ = false;        // the worker's
  bool stale_removed_ = false;        // the worker's
  std::vector<std::string> prelude_;  // the worker's: flags that use the precompiled prelude
  compiler_processes processes_;  // the compiler running, and whether any may start
  std::thread worker_;
};

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>

#include <nax/runtime/native/compiler.hpp>
#include <nax/runtime/native/content_hash.hpp>

namespace nax::NAX_ISA::runtime::native {

NAX_RUNTIME_INLINE compile_service::compile_service(toolchain t, std::string cache_dir, bool quiet)
    : toolchain_(std::move(t)), quiet_(quiet) {
  if (!cache_dir.empty()) {
    cache_ = std::make_unique<disk_cache>(cache_dir);
    if (!cache_->problem().empty()) {
      say("nax native: " + cache_->problem() +
          "; kernels are compiled into a temporary directory instead");
      cache_.reset();
    }
  }
  if (!cache_) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/nax-native-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) {
      temporary_dir_ = pattern;
      cache_ = std::make_unique<disk_cache>(temporary_dir_);
    }
  }
}

NAX_RUNTIME_INLINE compile_service::~compile_service() { stop(); }

NAX_RUNTIME_INLINE void compile_service::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
  }
  changed_.notify_all();
  processes_.stop();  // (no compiler starts from here on; the running one's group is killed)
  if (worker_.joinable()) worker_.join();
  std::deque<std::shared_ptr<native_kernel>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(queue_);
  }
  for (const auto& k : left) finish(*k, nullptr, "the native tier stopped");
  if (!temporary_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temporary_dir_, ec);
    temporary_dir_.clear();
  }
}

namespace detail {

// Stops the process's service during static destruction (the service itself is never freed: a
// kernel may still be asked for by a later static destructor; it then fails at once).
struct process_service_guard {
  compile_service* service;
  ~process_service_guard() { service->stop(); }
};

}  // namespace detail

NAX_RUNTIME_INLINE compile_service& compile_service::process() {
  static compile_service* s = [] {
    auto* service = new compile_service(process_toolchain(), disk_cache::default_dir());
    static compile_service* for_fork = service;
    ::pthread_atfork([] { for_fork->before_fork(); }, [] { for_fork->after_fork_in_parent(); },
                     [] { for_fork->after_fork_in_child(); });
    return service;
  }();
  static detail::process_service_guard guard{s};
  return *s;
}

NAX_RUNTIME_INLINE void compile_service::before_fork() { mutex_.lock(); }

NAX_RUNTIME_INLINE void compile_service::after_fork_in_parent() { mutex_.unlock(); }

NAX_RUNTIME_INLINE void compile_service::after_fork_in_child() {
  // (The old objects are abandoned, never destroyed: their threads do not exist here.)
  new (&mutex_) std::mutex();
  new (&changed_) std::condition_variable();
  new (&worker_) std::thread();
  processes_.after_fork_in_child();
  temporary_dir_.clear();  // the parent's, which removes it
  for (const auto& [key, k] : kernels_)
    if (k->state.load() == kernel_state::queued &&
        std::find(queue_.begin(), queue_.end(), k) == queue_.end())
      queue_.push_front(k);
}

NAX_RUNTIME_INLINE void compile_service::start_worker_locked() {
  if (!worker_.joinable() && !stopping_ && !queue_.empty())
    worker_ = std::thread([this] { work(); });
}

NAX_RUNTIME_INLINE std::shared_ptr<native_kernel> compile_service::request(std::string source) {
  const std::string key = content_hash().add(toolchain_.identity).end_field().add(source).hex();
  std::shared_ptr<native_kernel> k;
  bool first_refusal = false;
  std::string failure;
  {
    std::lock_guard lock(mutex_);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    k = std::make_shared<native_kernel>();
    k->key = key;
    k->source = std::move(source);
    kernels_.emplace(key, k);
    if (!stopping_ && toolchain_.problem.empty() && cache_) {
      queue_.push_back(k);
      start_worker_locked();
      changed_.notify_all();
      return k;
    }
    failure = !toolchain_.problem.empty() ? toolchain_.problem
              : stopping_                 ? std::string("the native tier stopped")
                                          : std::string("no directory to compile into");
    first_refusal = !said_unavailable_;
    said_unavailable_ = true;
  }
  if (first_refusal) say("nax native: " + failure + "; the interpreter runs every group");
  finish(*k, nullptr, std::move(failure));
  return k;
}

NAX_RUNTIME_INLINE void compile_service::wait(const native_kernel& k) {
  std::unique_lock lock(mutex_);
  start_worker_locked();  // (none yet in a forked child)
  changed_.wait(lock, [&] { return k.state.load() != kernel_state::queued; });
}

NAX_RUNTIME_INLINE std::string compile_service::cache_dir() const {
  return cache_ ? cache_->dir() : std::string();
}

NAX_RUNTIME_INLINE service_counts compile_service::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

NAX_RUNTIME_INLINE std::vector<std::string> compile_service::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

NAX_RUNTIME_INLINE void compile_service::say(std::string message) {
  if (!quiet_) std::fprintf(stderr, "%s\n", message.c_str());
  std::lock_guard lock(mutex_);
  messages_.push_back(std::move(message));
}

NAX_RUNTIME_INLINE void compile_service::finish(native_kernel& k, kernels::native::block_fn fn,
                                                std::string failure) {
  {
    std::lock_guard lock(mutex_);
    k.failure = std::move(failure);
    if (fn) {
      k.fn.store(fn, std::memory_order_release);
      ++(k.from_disk ? counts_.loaded_from_disk : counts_.compiled);
    } else {
      ++counts_.failed;
    }
    k.source.clear();
    k.source.shrink_to_fit();
    k.state.store(fn ? kernel_state::ready : kernel_state::failed, std::memory_order_release);
  }
  changed_.notify_all();
}

NAX_RUNTIME_INLINE void compile_service::work() {
  if (!stale_removed_) {  // (the worker's alone; once per service, not per fork)
    stale_removed_ = true;
    cache_->remove_stale_scratch(stale_scratch_seconds);
  }
  for (;;) {
    std::shared_ptr<native_kernel> k;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      k = queue_.front();
      queue_.pop_front();
    }
    build(*k);
  }
}

NAX_RUNTIME_INLINE void compile_service::build(native_kernel& k) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string why;
  if (const std::string path = cache_->find(k.key, why); !path.empty()) {
    std::string error;
    if (kernels::native::block_fn fn = load_block_fn(path, error)) {
      k.from_disk = true;
      k.seconds = elapsed();
      return finish(k, fn, {});
    }
    why = "nax native: cache entry " + path + " rejected: " + error + "; it is rebuilt";
    ::unlink(path.c_str());
    ::unlink(cache_->record_path(k.key).c_str());
  }
  if (!why.empty()) {
    {
      std::lock_guard lock(mutex_);
      ++counts_.rejected_entries;
    }
    say(why);
  }
  const std::string source = cache_->scratch_path(k.key, ".cpp");
  const std::string object = cache_->scratch_path(k.key, ".so");
  const std::string log = cache_->scratch_path(k.key, ".log");
  {
    std::ofstream out(source, std::ios::binary | std::ios::trunc);
    out << k.source;
  }
  if (!prelude_tried_) {  // (the worker's alone)
    prelude_tried_ = true;
    std::string message;
    prelude_ = prelude_flags(toolchain_, *cache_, message, &processes_);
    if (!message.empty()) say(message);
  }
  compile_result r = compile_shared_object(toolchain_, source, object, log, prelude_, &processes_);
  if (!r.ok && !r.stopped && !prelude_.empty()) {  // (a prelude the compiler refuses: without it)
    prelude_.clear();
    r = compile_shared_object(toolchain_, source, object, log, {}, &processes_);
  }
  std::string error;
  kernels::native::block_fn fn = nullptr;
  if (r.ok) {
    const std::string stored = cache_->store(k.key, object, error);
    if (!stored.empty()) fn = load_block_fn(stored, error);
  } else {
    error = r.log;
  }
  k.seconds = elapsed();
  ::unlink(log.c_str());
  ::unlink(object.c_str());
  if (fn) {
    ::unlink(source.c_str());
    return finish(k, fn, {});
  }
  if (!r.stopped && !processes_.stopped()) {
    // Keep the source for whoever reads the message.
    const std::string kept = cache_->dir() + "/failed-" + k.key + ".cpp";
    ::rename(source.c_str(), kept.c_str());
    const std::string first_line = error.substr(0, error.find('\n'));
    say("nax native: compiling a fused group failed (" + first_line +
        "); the interpreter runs it. The unit: " + kept);
  } else {
    ::unlink(source.c_str());
  }
  finish(k, nullptr, r.stopped || error.empty() ? "the native tier stopped" : error);
}

}  // namespace nax::runtime::native
#endif  // NAX_RUNTIME_DEFINITIONS
