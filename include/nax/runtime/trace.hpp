#pragma once
// nax::trace: an opt-in record of what runs did — every step, which thread ran it, when it
// started and ended — exported as Chrome trace event JSON (open it in Perfetto,
// https://ui.perfetto.dev, or chrome://tracing). While no trace records, a run pays one relaxed
// atomic load for it.
//
//   nax::trace t;                  // records from here...
//   ex.run(inputs, outputs);
//   t.stop();                      // ...to here (or to t's destruction)
//   t.write_chrome_json("run.json");

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>

namespace nax::NAX_ISA {

/// One step of a run, as a trace saw it.
struct trace_event {
  std::string name;          // the step's op ("fused_dense") and its index ("fused_dense #3")
  std::uint32_t step = 0;    // its index in the program
  std::uint32_t group = 0;   // its group in the specialization's schedule
  std::uint32_t thread = 0;  // the thread that ran it: 0 for the first thread the trace saw, ...
  std::uint64_t run = 0;     // which run of the trace it belongs to: 0, 1, ...
  std::int64_t tile = -1;    // a pipelined step's tile (runtime/pipeline.hpp), else -1
  double start_us = 0, end_us = 0;  // since the trace started
};

class trace {
 public:
  /// Starts recording every run of every executable, on every thread. One trace records at a
  /// time: making a second while one records throws std::logic_error.
  NAX_RUNTIME_INLINE trace();
  NAX_RUNTIME_INLINE ~trace();
  trace(const trace&) = delete;
  trace& operator=(const trace&) = delete;

  /// Stops recording, once the runs that have started recording have finished (so stop() must not
  /// be called from inside a step of a run).
  NAX_RUNTIME_INLINE void stop();

  /// The events so far, ordered by start time.
  NAX_RUNTIME_INLINE std::vector<trace_event> events() const;
  /// The names of the threads the events mention, by trace_event::thread ("main",
  /// "nax-worker-1", ...).
  NAX_RUNTIME_INLINE std::vector<std::string> thread_names() const;

  /// The events as Chrome trace event JSON: one complete event ("ph": "X") per step (per tile of
  /// a pipelined step), with its step, group, run (and tile) as arguments, and the threads' names
  /// as metadata.
  NAX_RUNTIME_INLINE std::string to_chrome_json() const;
  /// The same, written to `path`; std::runtime_error naming the path if it cannot be written.
  NAX_RUNTIME_INLINE void write_chrome_json(const std::string& path) const;

  // Used by the runtime while this trace records.
  NAX_RUNTIME_INLINE std::uint64_t begin_run() noexcept;
  NAX_RUNTIME_INLINE double now_us() const noexcept;
  NAX_RUNTIME_INLINE void record(std::string_view op, std::uint32_t step, std::uint32_t group,
                                 std::uint64_t run, double start_us, double end_us,
                                 std::int64_t tile = -1);

 private:
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::uint64_t> runs_{0};
  mutable std::mutex mutex_;
  std::vector<trace_event> events_;
  std::vector<std::string> thread_names_;
  std::vector<std::uint64_t> thread_keys_;  // by trace_event::thread: the thread's key
  bool recording_ = false;
};

namespace detail {
/// The trace recording now, if any.
inline std::atomic<trace*> active_trace{nullptr};
/// Runs holding a pointer to a trace: trace::stop() waits for them before the trace can go.
inline std::atomic<std::uint32_t> trace_users{0};

/// The trace a run records into, held for the run (null when none records: one relaxed load).
class trace_use {
 public:
  trace_use() noexcept {
    if (active_trace.load(std::memory_order_relaxed) != nullptr) [[unlikely]] {
      // Counted before the pointer is read again, so that stop(), which clears the pointer
      // and then waits for the count, either is seen here or waits for this run.
      trace_users.fetch_add(1, std::memory_order_seq_cst);
      trace_ = active_trace.load(std::memory_order_seq_cst);
      if (trace_ == nullptr) trace_users.fetch_sub(1, std::memory_order_seq_cst);
    }
  }
  trace_use(const trace_use&) = delete;
  trace_use& operator=(const trace_use&) = delete;
  ~trace_use() {
    if (trace_ != nullptr) trace_users.fetch_sub(1, std::memory_order_seq_cst);
  }
  trace* get() const noexcept { return trace_; }

 private:
  trace* trace_ = nullptr;
};
}  // namespace detail

}  // namespace nax

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#if defined(__linux__) && defined(__GLIBC__)
#include <pthread.h>
#endif

namespace nax::NAX_ISA {
namespace detail {

// A number per thread, never reused, so that a trace tells threads apart.
inline std::uint64_t trace_thread_key() noexcept {
  static std::atomic<std::uint64_t> next{0};
  thread_local const std::uint64_t key = next.fetch_add(1, std::memory_order_relaxed) + 1;
  return key;
}

inline std::string this_thread_name() {
#if defined(__linux__) && defined(__GLIBC__)
  char name[32] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0') return name;
#endif
  return "thread";
}

inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace detail

NAX_RUNTIME_INLINE trace::trace() : start_(std::chrono::steady_clock::now()) {
  trace* expected = nullptr;
  if (!detail::active_trace.compare_exchange_strong(expected, this, std::memory_order_acq_rel))
    throw std::logic_error("nax::trace: another trace is recording; stop it first");
  recording_ = true;
}

NAX_RUNTIME_INLINE trace::~trace() { stop(); }

NAX_RUNTIME_INLINE void trace::stop() {
  if (!recording_) return;
  trace* expected = this;
  detail::active_trace.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst);
  recording_ = false;
  // Runs that read the pointer finish their steps first (any trace's runs: the count is shared).
  while (detail::trace_users.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

NAX_RUNTIME_INLINE std::uint64_t trace::begin_run() noexcept {
  return runs_.fetch_add(1, std::memory_order_relaxed);
}

NAX_RUNTIME_INLINE double trace::now_us() const noexcept {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

NAX_RUNTIME_INLINE void trace::record(std::string_view op, std::uint32_t step, std::uint32_t group,
                                      std::uint64_t run, double start_us, double end_us,
                                      std::int64_t tile) {
  const std::uint64_t key = detail::trace_thread_key();
  std::lock_guard lock(mutex_);
  auto it = std::find(thread_keys_.begin(), thread_keys_.end(), key);
  if (it == thread_keys_.end()) {
    thread_keys_.push_back(key);
    thread_names_.push_back(detail::this_thread_name());
    it = thread_keys_.end() - 1;
  }
  trace_event e;
  e.name.assign(op);
  e.name += " #";
  e.name += std::to_string(step);
  if (tile >= 0) {
    e.name += " tile ";
    e.name += std::to_string(tile);
  }
  e.step = step;
  e.tile = tile;
  e.group = group;
  e.thread = static_cast<std::uint32_t>(it - thread_keys_.begin());
  e.run = run;
  e.start_us = start_us;
  e.end_us = end_us;
  events_.push_back(std::move(e));
}

NAX_RUNTIME_INLINE std::vector<trace_event> trace::events() const {
  std::vector<trace_event> out;
  {
    std::lock_guard lock(mutex_);
    out = events_;
  }
  std::stable_sort(out.begin(), out.end(), [](const trace_event& a, const trace_event& b) {
    return a.start_us < b.start_us;
  });
  return out;
}

NAX_RUNTIME_INLINE std::vector<std::string> trace::thread_names() const {
  std::lock_guard lock(mutex_);
  return thread_names_;
}

NAX_RUNTIME_INLINE std::string trace::to_chrome_json() const {
  const std::vector<trace_event> ev = events();
  const std::vector<std::string> names = thread_names();
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  auto next = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (std::size_t t = 0; t < names.size(); ++t) {
    next();
    out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(t) +
           ",\"args\":{\"name\":";
    detail::append_json_string(out, names[t]);
    out += "}}";
  }
  char num[64];
  for (const trace_event& e : ev) {
    next();
    out += "{\"name\":";
    detail::append_json_string(out, e.name);
    std::snprintf(num, sizeof num, "%.3f", e.start_us);
    out += ",\"cat\":\"step\",\"ph\":\"X\",\"ts\":";
    out += num;
    std::snprintf(num, sizeof num, "%.3f", e.end_us - e.start_us);
    out += ",\"dur\":";
    out += num;
    out += ",\"pid\":1,\"tid\":" + std::to_string(e.thread) +
           ",\"args\":{\"step\":" + std::to_string(e.step) +
           ",\"group\":" + std::to_string(e.group) + ",\"run\":" + std::to_string(e.run);
    if (e.tile >= 0) out += ",\"tile\":" + std::to_string(e.tile);
    out += "}}";
  }
  out += "]}\n";
  return out;
}

NAX_RUNTIME_INLINE void trace::write_chrome_json(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  const std::string json = to_chrome_json();
  if (f) f.write(json.data(), static_cast<std::streamsize>(json.size()));
  if (!f) throw std::runtime_error("nax::trace: cannot write '" + path + "'");
}

}  // namespace nax
#endif  // NAX_RUNTIME_DEFINITIONS
