#pragma once
// nax's one persistent thread pool and the loops built on it: nax::parallel_for,
// nax::parallel_for_each_thread, nax::parallel_reduce, nax::set_num_threads / nax::num_threads.
//
// The model (docs/threads.md):
// - n threads = the calling thread (lane 0) + n - 1 workers, created on the first parallel region
//   and reused; an idle worker spins for 100 us, then sleeps in std::atomic::wait (a futex).
// - A range is cut into at most n contiguous chunks of at least `grain` elements; chunk c runs on
//   worker c, unless that worker has not started it when the caller has finished chunk 0: then
//   the caller runs it. The cut depends only on (begin, end, grain, n): reductions reproduce.
// - One region holds the pool at a time. A call that finds the pool taken (a nested call from
//   inside a region, or another user thread's call) runs the same chunks, in order, on its own
//   thread: no blocking on another caller, no deadlock, the same results.
// - Every chunk runs; the first exception thrown is rethrown by the caller after the last one.

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <intrin.h>
#endif

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA {

/// The most threads nax runs (a sanity limit against typos such as NAX_NUM_THREADS=80000).
inline constexpr int max_num_threads = 1024;

/// A half-open index range [begin, end).
struct index_range {
  std::size_t begin = 0;
  std::size_t end = 0;
  [[nodiscard]] std::size_t size() const noexcept { return end - begin; }
  friend bool operator==(const index_range&, const index_range&) noexcept = default;
};

/// Part `part` of `parts` (0 <= part < parts) of [begin, end): contiguous, in order, the first
/// (end - begin) % parts parts one element longer than the others. The partition every parallel
/// loop uses; a per-thread reduction calls it with (thread_index, thread_count).
[[nodiscard]] inline index_range split_range(std::size_t begin, std::size_t end, std::size_t part,
                                             std::size_t parts) noexcept {
  const std::size_t n = end - begin;
  const std::size_t q = n / parts;
  const std::size_t r = n % parts;
  const std::size_t lo = begin + part * q + std::min(part, r);
  return {lo, lo + q + (part < r ? 1 : 0)};
}

namespace detail {

// The thread count: 0 until first asked for (then NAX_NUM_THREADS or the hardware's count).
inline std::atomic<int> requested_num_threads{0};

/// NAX_NUM_THREADS's value as a thread count: decimal digits, optionally surrounded by spaces,
/// from 1 to max_num_threads. Anything else (null, empty, 0, a sign, "4,2", "2x", too large) is
/// std::nullopt.
[[nodiscard]] NAX_RUNTIME_INLINE std::optional<int> parse_num_threads(const char* text) noexcept;

/// NAX_NUM_THREADS if set and valid, else std::thread::hardware_concurrency() (at least 1, at
/// most max_num_threads).
[[nodiscard]] NAX_RUNTIME_INLINE int default_num_threads() noexcept;

/// How many chunks a range of `size` elements is cut into: at most `threads`, each of at least
/// `grain` elements (a grain of 0 counts as 1), and always at least one.
[[nodiscard]] inline std::size_t chunk_count(std::size_t size, std::size_t grain,
                                             std::size_t threads) noexcept {
  return std::max<std::size_t>(1, std::min(threads, size / std::max<std::size_t>(grain, 1)));
}

inline void cpu_relax() noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
  _mm_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
  __asm__ __volatile__("yield");
#endif
}

// How a thread waits before it sleeps. A worker waiting for work spins (cpu_relax) for
// idle_spin: enough to bridge the gap between back-to-back regions, short enough that an idle
// pool soon costs nothing. The caller waiting for its workers spins as long, then yields the core
// (to a worker that may need it) until completion_wait has passed: a sleeping thread can take
// tens of microseconds to run again (more in a VM), and a caller that slept as well would make
// the workers of the next region fall asleep too, paying that twice per region.
inline constexpr std::chrono::microseconds idle_spin{100};
inline constexpr std::chrono::microseconds completion_wait{1000};

// Waits until ready(): spins for `spin`, then yields until `total` has passed. Returns
// ready()'s last answer.
template <class Ready>
bool spin_until(Ready ready, std::chrono::nanoseconds spin,
                std::chrono::nanoseconds total) noexcept {
  if (ready()) return true;
  const auto start = std::chrono::steady_clock::now();
  for (unsigned i = 1;; ++i) {
    cpu_relax();
    if (ready()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > spin) break;
  }
  while (std::chrono::steady_clock::now() - start < total) {
    std::this_thread::yield();
    if (ready()) return true;
  }
  return false;
}

// One parallel region, on the stack of the thread that runs it. Lane t runs chunks t,
// t + lanes, ...: one chunk per lane unless the pool has fewer threads than chunks. Every chunk
// runs, even after another has thrown; the first exception is kept.
struct region {
  region(void (*fn)(void*, std::size_t), void* b, std::size_t n, std::size_t l) noexcept
      : run_chunk(fn), body(b), chunks(n), lanes(l) {}

  void (*run_chunk)(void* body, std::size_t chunk);
  void* body;
  std::size_t chunks;
  std::size_t lanes;
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written by the one thread that set `failed`

  void run_lane(std::size_t lane) noexcept {
    for (std::size_t c = lane; c < chunks; c += lanes) {
      try {
        run_chunk(body, c);
      } catch (...) {
        if (!failed.exchange(true, std::memory_order_relaxed)) error = std::current_exception();
      }
    }
  }
};

/// A persistent pool: the caller of run() is lane 0, worker i is lane i. nax uses one, made by
/// global_pool(); a separate one is for tests.
class thread_pool {
 public:
  thread_pool() = default;
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  /// Precondition: no region is running on this pool.
  ~thread_pool() { shutdown(); }

  /// Calls body(c) for every chunk c in [0, chunks), with the pool resized to `threads` threads
  /// (the caller included) first, and returns once every chunk has finished; then rethrows the
  /// first exception a chunk threw. Chunk c runs on lane c (round robin if the pool has fewer
  /// threads than chunks), or on the caller if lane c's worker had not started when the caller
  /// finished its own. If the pool is taken (a nested call, another thread's region, or after
  /// shutdown()), runs body(0), body(1), ... on the calling thread instead.
  template <class Body>
  void run(std::size_t threads, std::size_t chunks, Body& body) {
    run_erased(threads, chunks, &invoke<Body>, static_cast<void*>(std::addressof(body)));
  }

  /// Resizes to `threads` threads now if the pool has started and is idle; otherwise the next
  /// region does it.
  void resize(std::size_t threads) {
    if (!try_acquire()) return;
    struct release_on_exit {
      thread_pool* p;
      ~release_on_exit() { p->release(); }
    } guard{this};
    if (started_) resize_locked(threads);
  }

  /// Stops and joins the workers once no region is running; later regions run inline. If a
  /// region is running (exit() called from inside one), leaves the workers alone.
  void shutdown() noexcept {
    if (!try_acquire()) return;
    try {
      resize_locked(1);
    } catch (...) {  // join failed (system_error): nothing better to do at shutdown
    }
    // busy_ is never released: every later region runs inline.
  }

  /// In the child of a fork(), which has none of the workers: from now on every region runs
  /// inline and nothing is joined. Only for a pthread_atfork child handler.
  void abandon_after_fork() noexcept { busy_.store(true, std::memory_order_relaxed); }

  /// Workers alive (threads - 1 once a region has run).
  [[nodiscard]] std::size_t num_workers() const noexcept {
    return num_workers_.load(std::memory_order_relaxed);
  }
  /// Regions that ran on the pool, and regions that found it taken and ran inline.
  [[nodiscard]] std::uint64_t regions_dispatched() const noexcept {
    return dispatched_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t regions_inlined() const noexcept {
    return inlined_.load(std::memory_order_relaxed);
  }
  /// Lanes the caller ran itself because their worker had not started them in time.
  [[nodiscard]] std::uint64_t lanes_taken_back() const noexcept {
    return taken_back_.load(std::memory_order_relaxed);
  }

 private:
  struct alignas(64) worker {
    std::atomic<std::uint32_t> seq{0};  // bumped by every wake(): what the worker waits on
    std::atomic<bool> sleeping{false};  // in seq.wait(): wake() must notify
    std::atomic<region*> job{nullptr};  // taken by the worker, or taken back by the caller
    std::atomic<bool> exit{false};
    std::size_t lane = 0;
    std::thread thread;
  };

  template <class Body>
  static void invoke(void* body, std::size_t chunk) {
    (*static_cast<Body*>(body))(chunk);
  }

  bool try_acquire() noexcept {
    return !busy_.load(std::memory_order_relaxed) &&
           !busy_.exchange(true, std::memory_order_acquire);
  }
  void release() noexcept { busy_.store(false, std::memory_order_release); }

  void run_erased(std::size_t threads, std::size_t chunks, void (*fn)(void*, std::size_t),
                  void* body);

  // Wakes `w` to look at its job and exit flag. seq_cst on both sides of the sleeping
  // handshake: either we see `sleeping` or the worker sees the new seq before it sleeps.
  static void wake(worker& w) noexcept {
    w.seq.fetch_add(1, std::memory_order_seq_cst);
    if (w.sleeping.load(std::memory_order_seq_cst)) w.seq.notify_one();
  }

  void wait_for_helpers() noexcept;

  void worker_main(worker& w) noexcept;

  static std::uint32_t wait_for_wake(worker& w, std::uint32_t seen) noexcept;

  // With busy_ held. Stops and joins extra workers, or starts missing ones (a failure to start
  // a thread leaves the pool smaller; regions then give some lanes several chunks).
  void resize_locked(std::size_t threads);

  static void name_thread(std::thread& t, std::size_t lane) noexcept;

  std::atomic<bool> busy_{false};  // a region (or a resize) holds the pool
  // Only with busy_ held:
  std::vector<std::unique_ptr<worker>> workers_;
  bool started_ = false;
  std::size_t failed_size_ = 0;

  alignas(64) std::atomic<std::uint32_t> pending_{0};  // helpers still running this region
  std::atomic<bool> caller_sleeping_{false};
  alignas(64) std::atomic<std::size_t> num_workers_{0};
  std::atomic<std::uint64_t> dispatched_{0};
  std::atomic<std::uint64_t> inlined_{0};
  std::atomic<std::uint64_t> taken_back_{0};
};

struct global_pool_shutdown {
  thread_pool* pool;
  ~global_pool_shutdown() { pool->shutdown(); }
};

inline std::atomic<thread_pool*> global_pool_for_fork{nullptr};

/// The pool every nax parallel loop runs on, made on first use. Its workers are joined during
/// static destruction; the object itself is never freed, so a parallel loop run from a later
/// static destructor still works (inline). In the child of a fork() it runs everything inline.
NAX_RUNTIME_INLINE thread_pool& global_pool();

}  // namespace detail

/// The number of threads parallel loops use, the calling thread included. Until
/// set_num_threads() is called: NAX_NUM_THREADS if it holds a valid count (read once, on the
/// first call; an invalid value is ignored), else std::thread::hardware_concurrency().
[[nodiscard]] inline int num_threads() noexcept {
  int n = detail::requested_num_threads.load(std::memory_order_relaxed);
  if (n == 0) [[unlikely]] {
    const int d = detail::default_num_threads();
    if (detail::requested_num_threads.compare_exchange_strong(n, d, std::memory_order_relaxed)) {
      n = d;
    }
  }
  return n;
}

/// Sets the number of threads (1 to max_num_threads; anything else throws
/// std::invalid_argument). Safe at any time from any thread, inside a region too: regions
/// already running keep their count; the pool's workers are started or stopped now if it is
/// idle, else at the start of the next region.
NAX_RUNTIME_INLINE void set_num_threads(int n);

/// Calls f(lo, hi) on contiguous sub-ranges that together cover [begin, end) once: at most
/// num_threads() chunks, each of at least `grain` elements (a grain of 0 counts as 1); chunk 0
/// on the caller, chunk c on worker c (or on the caller, if worker c has not started it by the
/// time chunk 0 is done). A range with fewer than 2 * grain elements is one call f(begin, end)
/// on the caller, with no synchronization. An empty range (end <= begin) calls nothing. The
/// chunks depend only on (begin, end, grain, num_threads()). Nested in a parallel region, or
/// while another thread's region holds the pool, the same chunks run in order on the calling
/// thread. f runs concurrently on several threads; chunks must not wait for each other. Every
/// chunk runs even if another throws; the first exception thrown is rethrown once all have
/// finished.
template <class F>
requires std::invocable<F&, std::size_t, std::size_t>
void parallel_for(std::size_t begin, std::size_t end, std::size_t grain, F&& f) {
  if (end <= begin) return;
  const auto threads = static_cast<std::size_t>(num_threads());
  const std::size_t chunks = detail::chunk_count(end - begin, grain, threads);
  if (chunks == 1) {
    f(begin, end);
    return;
  }
  auto body = [&f, begin, end, chunks](std::size_t c) {
    const index_range r = split_range(begin, end, c, chunks);
    f(r.begin, r.end);
  };
  detail::global_pool().run(threads, chunks, body);
}

/// Calls f(thread_index, thread_count) once for every thread_index in [0, thread_count), with
/// thread_count = num_threads(): index 0 on the caller, index t on worker t (or on the caller,
/// as for parallel_for), or all in order on the calling thread if the pool is taken. Size
/// per-thread storage by thread_count (or use parallel_reduce), and split work with
/// split_range(begin, end, index, count). Exceptions as for parallel_for.
template <class F>
requires std::invocable<F&, std::size_t, std::size_t>
void parallel_for_each_thread(F&& f) {
  const auto threads = static_cast<std::size_t>(num_threads());
  if (threads == 1) {
    f(std::size_t{0}, std::size_t{1});
    return;
  }
  auto body = [&f, threads](std::size_t t) { f(t, threads); };
  detail::global_pool().run(threads, threads, body);
}

/// A deterministic parallel reduction: cuts [begin, end) exactly as parallel_for does into
/// chunks 0..k-1, computes p_c = map(lo_c, hi_c) in parallel, and returns
/// combine(...combine(combine(identity, p_0), p_1)..., p_{k-1}) (identity for an empty range).
/// The same range, grain and num_threads() give the same result bit for bit, whichever threads
/// ran the chunks.
template <class T, class Map, class Combine>
requires std::invocable<Map&, std::size_t, std::size_t> &&
    std::constructible_from<T, std::invoke_result_t<Map&, std::size_t, std::size_t>> &&
    std::invocable<Combine&, T, T>
[[nodiscard]] T parallel_reduce(std::size_t begin, std::size_t end, std::size_t grain, T identity,
                                Map&& map, Combine&& combine) {
  if (end <= begin) return identity;
  const auto threads = static_cast<std::size_t>(num_threads());
  const std::size_t chunks = detail::chunk_count(end - begin, grain, threads);
  if (chunks == 1) return combine(std::move(identity), T(map(begin, end)));
  std::vector<std::optional<T>> partial(chunks);
  auto body = [&map, &partial, begin, end, chunks](std::size_t c) {
    const index_range r = split_range(begin, end, c, chunks);
    partial[c].emplace(map(r.begin, r.end));
  };
  detail::global_pool().run(threads, chunks, body);
  T acc = std::move(identity);
  for (auto& p : partial) acc = combine(std::move(acc), std::move(*p));
  return acc;
}

}  // namespace nax

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA {
namespace detail {

NAX_RUNTIME_INLINE std::optional<int> parse_num_threads(const char* text) noexcept {
  if (text == nullptr) return std::nullopt;
  std::string_view s(text);
  constexpr std::string_view space = " \t\n\r\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return std::nullopt;
  s = s.substr(first, s.find_last_not_of(space) - first + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  if (value < 1 || value > static_cast<unsigned>(max_num_threads)) return std::nullopt;
  return static_cast<int>(value);
}

NAX_RUNTIME_INLINE int default_num_threads() noexcept {
  if (auto n = parse_num_threads(std::getenv("NAX_NUM_THREADS"))) return *n;
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, static_cast<unsigned>(max_num_threads)));
}

NAX_RUNTIME_INLINE thread_pool& global_pool() {
  static thread_pool* const pool = [] {
    auto* p = new thread_pool;
#if defined(__unix__) || defined(__APPLE__)
    global_pool_for_fork.store(p);
    pthread_atfork(nullptr, nullptr, [] {
      if (thread_pool* q = global_pool_for_fork.load(std::memory_order_relaxed)) {
        q->abandon_after_fork();
      }
    });
#endif
    return p;
  }();
  static global_pool_shutdown shutdown_at_exit{pool};
  return *pool;
}

NAX_RUNTIME_INLINE void thread_pool::run_erased(std::size_t threads, std::size_t chunks,
                                                void (*fn)(void*, std::size_t), void* body) {
  if (!try_acquire()) {
    inlined_.fetch_add(1, std::memory_order_relaxed);
    region r(fn, body, chunks, 1);
    r.run_lane(0);
    if (r.error) std::rethrow_exception(r.error);
    return;
  }
  struct release_on_exit {
    thread_pool* p;
    ~release_on_exit() { p->release(); }
  } guard{this};
  started_ = true;
  if (workers_.size() + 1 != threads) resize_locked(threads);
  dispatched_.store(dispatched_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);

  region r(fn, body, chunks, std::min(chunks, workers_.size() + 1));
  const std::size_t helpers = r.lanes - 1;
  pending_.store(static_cast<std::uint32_t>(helpers), std::memory_order_relaxed);
  for (std::size_t i = 0; i < helpers; ++i) {
    workers_[i]->job.store(&r, std::memory_order_release);
    wake(*workers_[i]);
  }
  r.run_lane(0);
  // A worker that has not taken its job yet (asleep, or preempted) would only make us wait:
  // take the job back and run that lane here. Same chunks, another thread.
  std::uint32_t taken_back = 0;
  for (std::size_t i = 0; i < helpers; ++i) {
    region* expected = &r;
    if (workers_[i]->job.load(std::memory_order_relaxed) == &r &&
        workers_[i]->job.compare_exchange_strong(expected, nullptr, std::memory_order_acquire)) {
      r.run_lane(i + 1);
      ++taken_back;
    }
  }
  if (taken_back != 0) {
    pending_.fetch_sub(taken_back, std::memory_order_acq_rel);
    taken_back_.store(taken_back_.load(std::memory_order_relaxed) + taken_back,
                      std::memory_order_relaxed);
  }
  wait_for_helpers();
  if (r.error) std::rethrow_exception(r.error);
}

NAX_RUNTIME_INLINE void thread_pool::wait_for_helpers() noexcept {
  if (spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; }, idle_spin,
                 completion_wait)) {
    return;
  }
  caller_sleeping_.store(true, std::memory_order_seq_cst);
  for (std::uint32_t p; (p = pending_.load(std::memory_order_seq_cst)) != 0;) {
    pending_.wait(p, std::memory_order_seq_cst);
  }
  caller_sleeping_.store(false, std::memory_order_relaxed);
}

NAX_RUNTIME_INLINE void thread_pool::worker_main(worker& w) noexcept {
  std::uint32_t seen = 0;
  for (;;) {
    seen = wait_for_wake(w, seen);
    if (w.exit.load(std::memory_order_relaxed)) return;
    region* r = w.job.exchange(nullptr, std::memory_order_acquire);
    if (r == nullptr) continue;  // the caller took it back (or a stale wake)
    r->run_lane(w.lane);
    // After this decrement the worker does not touch *r.
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      pending_.notify_one();
    }
  }
}

NAX_RUNTIME_INLINE std::uint32_t thread_pool::wait_for_wake(worker& w,
                                                            std::uint32_t seen) noexcept {
  std::uint32_t s = seen;
  if (spin_until([&] { return (s = w.seq.load(std::memory_order_acquire)) != seen; }, idle_spin,
                 idle_spin)) {
    return s;
  }
  w.sleeping.store(true, std::memory_order_seq_cst);
  while ((s = w.seq.load(std::memory_order_seq_cst)) == seen) {
    w.seq.wait(seen, std::memory_order_seq_cst);
  }
  w.sleeping.store(false, std::memory_order_relaxed);
  return s;
}

NAX_RUNTIME_INLINE void thread_pool::resize_locked(std::size_t threads) {
  const std::size_t want = std::max<std::size_t>(threads, 1) - 1;
  while (workers_.size() > want) {
    worker& w = *workers_.back();
    w.exit.store(true, std::memory_order_relaxed);
    wake(w);
    w.thread.join();
    workers_.pop_back();
  }
  if (workers_.size() < want && want != failed_size_) {
    try {
      workers_.reserve(want);
      while (workers_.size() < want) {
        auto w = std::make_unique<worker>();
        w->lane = workers_.size() + 1;
        w->thread = std::thread([this, p = w.get()] { worker_main(*p); });
        name_thread(w->thread, w->lane);
        workers_.push_back(std::move(w));  // cannot throw: reserved
      }
    } catch (...) {
      failed_size_ = want;  // do not retry until a different size is asked for
    }
  }
  num_workers_.store(workers_.size(), std::memory_order_relaxed);
}

NAX_RUNTIME_INLINE void thread_pool::name_thread([[maybe_unused]] std::thread& t,
                                                 [[maybe_unused]] std::size_t lane) noexcept {
#if defined(__linux__) && defined(__GLIBC__)
  char name[16] = "nax-worker-";
  const auto [end, ec] = std::to_chars(name + 11, name + 15, lane);
  if (ec == std::errc{}) {
    *end = '\0';
    pthread_setname_np(t.native_handle(), name);
  }
#endif
}

}  // namespace detail

NAX_RUNTIME_INLINE void set_num_threads(int n) {
  if (n < 1) {
    throw std::invalid_argument(
        detail::message("nax::set_num_threads: the thread count must be at least 1, got ", n));
  }
  if (n > max_num_threads) {
    throw std::invalid_argument(detail::message("nax::set_num_threads: ", n,
                                                " threads requested, at most ", max_num_threads,
                                                " are supported"));
  }
  detail::requested_num_threads.store(n, std::memory_order_relaxed);
  detail::global_pool().resize(static_cast<std::size_t>(n));
}

}  // namespace nax
#endif
