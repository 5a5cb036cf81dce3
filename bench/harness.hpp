#pragma once
// The measurement harness shared by bench/elementwise.cpp, rowops.cpp and reduce.cpp: cache
// flushing, quiet-machine waits, interleaved timing, the PyTorch child process, the tables.
// Each benchmark is one translation unit, so the helpers live in an anonymous namespace.

#include <nax/simd/math.hpp>  // first: it carries the g++ 12 AVX-512 warning workaround

#include <nax/nax.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <immintrin.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <omp.h>

#ifndef NAX_BENCH_HAVE_EIGEN
#define NAX_BENCH_HAVE_EIGEN 0
#endif
#ifndef NAX_BENCH_HAVE_TORCH
#define NAX_BENCH_HAVE_TORCH 0
#endif
#ifndef NAX_BENCH_COMPILER
#define NAX_BENCH_COMPILER "unknown (not built by bench/CMakeLists.txt)"
#endif
#ifndef NAX_BENCH_FLAGS
#define NAX_BENCH_FLAGS "unknown (not built by bench/CMakeLists.txt)"
#endif

// Eigen after nax's first include (nax's headers carry the g++ 12 AVX-512 warning workaround),
// with its Tensor module and thread pool for the benchmarks that use them.
#if NAX_BENCH_HAVE_EIGEN
#define EIGEN_USE_THREADS
#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>
#endif
// xtensor, in the benchmark that compares with it (bench/CMakeLists.txt defines
// NAX_BENCH_HAVE_XTENSOR, 1 or 0, for that one only).
#if defined(NAX_BENCH_HAVE_XTENSOR) && NAX_BENCH_HAVE_XTENSOR
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor_config.hpp>
#endif

namespace {

template <class T>
inline void do_not_optimize(const T& value) {
  __asm__ __volatile__("" : : "g"(&value) : "memory");
}

using clock_type = std::chrono::steady_clock;

// Concatenation by appending (g++ 12 reports a false -Wrestrict for "literal" + std::string&&,
// GCC PR 105329).
template <class... P>
std::string cat(const P&... parts) {
  std::string s;
  ((s += parts), ...);
  return s;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bench: %s\n", message.c_str());
  std::fflush(stdout);
  std::exit(1);
}

std::string read_line_starting(const char* file, std::string_view prefix) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(prefix)) {
      auto colon = line.find(':');
      auto text = colon == std::string::npos ? line : line.substr(colon + 1);
      text.erase(0, text.find_first_not_of(" \t"));
      return text;
    }
  return "unknown";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Whether a thread of the process whose tasks are listed in `task_dir` (/proc/<pid>/task), other
// than thread `skip`, is running or runnable (state R in its stat line).
bool any_thread_running(const std::string& task_dir, pid_t skip) {
  DIR* dir = opendir(task_dir.c_str());
  if (!dir) return false;
  bool running = false;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || std::atoi(e->d_name) == skip) continue;
    std::ifstream in(task_dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(in, line);
    const auto paren = line.rfind(')');  // the state follows "(comm) ", comm may hold anything
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'R') {
      running = true;
      break;
    }
  }
  closedir(dir);
  return running;
}

// 64-byte aligned, zero-initialized (touched) float buffer.
struct buffer {
  explicit buffer(std::size_t n)
      : size(n),
        data(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {
    if (!data) fail("out of memory");
    std::memset(data, 0, n * sizeof(float));
  }
  ~buffer() { std::free(data); }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  std::size_t size;
  float* data;
};

// PyTorch, in a child process running bench/peers/torch_peer.py, driven line by line.
class torch_process {
 public:
  torch_process() = default;
  torch_process(const torch_process&) = delete;
  torch_process& operator=(const torch_process&) = delete;
  ~torch_process() {
    if (pid_ > 0) {
      std::fputs("quit\n", to_);
      std::fflush(to_);
      std::fclose(to_);
      std::fclose(from_);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }

  // Starts the child; on failure says why in `info` and the torch columns are skipped.
  bool start(const char* python, const char* script, std::string& info) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
      info = "pipe failed";
      return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::string py = python, sc = script;
    char* argv[] = {py.data(), sc.data(), nullptr};
    const int rc = posix_spawn(&pid_, python, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
      close(in[1]);
      close(out[0]);
      pid_ = -1;
      info = std::string("cannot start ") + python + ": " + std::strerror(rc);
      return false;
    }
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
    const std::string hello = ask("hello");
    if (!hello.starts_with("ok ")) {
      info = cat("torch peer did not start (", hello.empty() ? std::string("no answer") : hello,
                 "): run ", python, " -c 'import torch'");
      return false;
    }
    info = hello.substr(3);
    ok_ = true;
    return true;
  }

  bool ok() const { return ok_; }

  // Sends one command, returns the answer line ("" if the child is gone).
  std::string ask(const std::string& command) {
    if (pid_ <= 0) return "";
    if (std::fprintf(to_, "%s\n", command.c_str()) < 0 || std::fflush(to_) != 0) return "";
    char* line = nullptr;
    std::size_t cap = 0;
    const ssize_t got = getline(&line, &cap, from_);
    std::string answer = got > 0 ? std::string(line, static_cast<std::size_t>(got)) : "";
    std::free(line);
    while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
    return answer;
  }
  // ask(), aborting unless the answer is "ok ..."; returns what follows "ok".
  std::string must(const std::string& command) {
    const std::string answer = ask(command);
    if (answer != "ok" && !answer.starts_with("ok "))
      fail("torch peer: '" + command + "': " + answer);
    return answer.size() > 3 ? answer.substr(3) : "";
  }

  pid_t pid() const { return pid_; }

  // Hands a buffer to the child as tensor `name` (a raw file in /dev/shm, read then removed).
  void load(const std::string& name, const float* data, const std::vector<std::size_t>& dims) {
    std::size_t count = 1;
    std::string shape;
    for (std::size_t d : dims) {
      count *= d;
      shape += cat(" ", std::to_string(d));
    }
    const std::string path = temp_path(name);
    write_file(path, data, count);
    must("load " + name + " " + path + shape);
    std::remove(path.c_str());
  }
  // Runs `op` once in the child and reads its result back.
  std::vector<float> result(const std::string& op, std::size_t count) {
    const std::string path = temp_path("result");
    must("save " + op + " " + path);
    std::vector<float> v(count);
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) fail("torch peer: no result file " + path);
    const std::size_t got = std::fread(v.data(), sizeof(float), count, f);
    std::fclose(f);
    std::remove(path.c_str());
    if (got != count)
      fail(cat("torch peer: result of ", op, " has ", std::to_string(got), " values"));
    return v;
  }

 private:
  static std::string temp_path(const std::string& name) {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return cat(dir, "/nax_bench_", std::to_string(getpid()), "_", name, ".f32");
  }
  static void write_file(const std::string& path, const float* data, std::size_t count) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, sizeof(float), count, f) != count) fail("cannot write " + path);
    std::fclose(f);
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  bool ok_ = false;
};

torch_process* g_torch = nullptr;  // for quiesce()

// Waits until no other thread of this process or of the torch child is running or runnable:
// thread pools spin for a while after a parallel region (libgomp's workers for ~4 ms here, Eigen's
// and nax's less), and a variant must not share the cores with the previous one's spinning
// workers. (Thread states, not CPU clocks: those of threads on other cores advance only at
// scheduler ticks, 4 ms apart, and miss a short spin.) Quiet means 3 checks 1 ms apart; at most
// ~0.5 s.
void quiesce() {
  const std::string self = "/proc/self/task";
  const std::string child =
      g_torch && g_torch->pid() > 0 ? cat("/proc/", std::to_string(g_torch->pid()), "/task") : "";
  const pid_t me = gettid();
  for (int i = 0, quiet = 0; i < 500 && quiet < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const bool busy =
        any_thread_running(self, me) || (!child.empty() && any_thread_running(child, 0));
    quiet = busy ? 0 : quiet + 1;
  }
}

enum class kind { nax, peer, baseline, limit };

struct variant {
  std::string name;
  std::string threads;  // as printed
  kind role = kind::peer;
  double bytes = 0;  // counted bytes per call
  // Seconds for `calls` back-to-back calls.
  std::function<double(std::size_t calls)> time_calls;
  // Runs once and compares with the reference: "" when it matches, else what is wrong.
  std::function<std::string()> verify;
  // Results: seconds per call.
  double median = 0, best = 0;
  std::size_t calls = 1;
};

// Times `calls` calls of f on this thread.
template <class F>
double time_local(F& f, std::size_t calls) {
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < calls; ++i) f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// A variant timing `body` on this thread, verified by `v`, for `threads` (as printed).
template <class F>
variant timed(std::string name, kind role, int threads, F body, std::function<std::string()> v) {
  variant out;
  out.name = std::move(name);
  out.threads = std::to_string(threads);
  out.role = role;
  out.time_calls = [body](std::size_t calls) mutable { return time_local(body, calls); };
  out.verify = std::move(v);
  return out;
}

// Evicts every cache level: reads (clean lines, so nothing is left to write back later) a buffer
// 2.5 times the 105 MiB L3, with 2 threads. The previous variant's dirty lines are written back
// here, outside the timing.
void flush_caches() {
  static std::vector<float> junk(std::size_t{256} << 18, 1.0f);  // 256 MiB
  const auto m = static_cast<std::ptrdiff_t>(junk.size());
  const float* p = junk.data();
  float sum = 0;
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : sum)
  for (std::ptrdiff_t i = 0; i < m; i += 16) sum += p[i];
  do_not_optimize(sum);
}

// Cold: every sample is one call after flush_caches() (inputs come from memory, as for arrays
// this size in a pipeline that has moved on). Warm: every sample is a batch of calls lasting
// ~batch_seconds, so after the first call the variant finds what it left in the caches.
// (Unused by the benchmarks that time a stream of their own: bench/bounded.cpp.)
[[maybe_unused]] void measure(std::vector<variant>& vs, int reps, double batch_seconds, bool cold) {
  for (auto& v : vs) {
    const std::string problem = v.verify();
    if (!problem.empty()) fail("MISMATCH: " + v.name + " (" + v.threads + " threads): " + problem);
  }
  for (auto& v : vs) {
    quiesce();
    // Calls per batch from the fastest of a few single calls: a variant's first calls in a
    // process can be several times slower than later ones (fresh memory for a new output), and
    // a batch sized from them held too few calls to amortize the cost of waking up after
    // quiesce() (bench_rowops: 3 calls of nax's softmax per batch instead of 8, 1.35x its time).
    double once = 1e9;
    for (int k = 0; k < 6; ++k) once = std::min(once, v.time_calls(1));
    once = std::max(once, 1e-7);
    v.calls =
        cold ? 1 : std::max<std::size_t>(1, static_cast<std::size_t>(batch_seconds / once + 0.5));
    if (!cold) v.time_calls(v.calls);  // warm-up batch
  }
  std::vector<std::vector<double>> samples(vs.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t j = 0; j < vs.size(); ++j) {
      const std::size_t k = (static_cast<std::size_t>(r) + j) % vs.size();
      if (cold) flush_caches();
      quiesce();
      samples[k].push_back(vs[k].time_calls(vs[k].calls) / static_cast<double>(vs[k].calls));
    }
  for (std::size_t k = 0; k < vs.size(); ++k) {
    auto& s = samples[k];
    std::sort(s.begin(), s.end());
    vs[k].median = s[s.size() / 2];
    vs[k].best = s.front();
  }
}

// --profile: `calls` calls of one variant, back to back, or (cold) each after a cache flush;
// returns "median ms (best ms) per call".
[[maybe_unused]] std::string profile_run(const variant& v, std::size_t calls, bool cold) {
  std::vector<double> ms;
  if (!cold) {
    ms.push_back(v.time_calls(calls) / static_cast<double>(std::max<std::size_t>(calls, 1)) * 1e3);
  } else {
    for (std::size_t i = 0; i < calls; ++i) {
      flush_caches();
      quiesce();
      ms.push_back(v.time_calls(1) * 1e3);
    }
  }
  std::sort(ms.begin(), ms.end());
  char text[96];
  std::snprintf(text, sizeof text, "%.3f ms (best %.3f) per call, %s", ms[ms.size() / 2],
                ms.front(), cold ? "cold" : "back to back");
  return text;
}

double gbs(const variant& v, double seconds) { return v.bytes / seconds * 1e-9; }

const variant* find(const std::vector<variant>& vs, const std::string& name) {
  for (const auto& v : vs)
    if (v.name == name) return &v;
  return nullptr;
}

// The table of one (op, thread count), then nax's ratios to the best peer and to the limits.
[[maybe_unused]] void print_table(
    const std::vector<variant>& vs, double peer_target,
    const std::vector<std::pair<std::string, double>>& limit_targets) {
  const variant* nax_v = nullptr;
  const variant* best_peer = nullptr;
  for (const auto& v : vs) {
    if (v.role == kind::nax && !nax_v) nax_v = &v;
    if (v.role == kind::peer && (!best_peer || v.median < best_peer->median)) best_peer = &v;
  }
  std::printf(
      "| variant | threads | ms/call median | ms/call best | GB/s median | GB/s best | nax/variant "
      "|\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& v : vs)
    std::printf("| %s | %s | %.3f | %.3f | %.2f | %.2f | %.2fx |\n", v.name.c_str(),
                v.threads.c_str(), v.median * 1e3, v.best * 1e3, gbs(v, v.median), gbs(v, v.best),
                nax_v ? v.median / nax_v->median : 0.0);
  if (!nax_v) return;
  std::printf("\n");
  if (best_peer) {
    const double r = best_peer->median / nax_v->median;
    std::printf("nax / best peer (%s): %.2fx by median, %.2fx by best", best_peer->name.c_str(), r,
                best_peer->best / nax_v->best);
    if (peer_target > 0)
      std::printf(" (target >= %.2fx: %s)", peer_target, r >= peer_target ? "met" : "MISSED");
    std::printf("\n");
  }
  for (const auto& [name, target] : limit_targets)
    if (const variant* l = find(vs, name)) {
      const double r = gbs(*nax_v, nax_v->median) / gbs(*l, l->median);
      std::printf("nax / %s: %.2fx by median GB/s, %.2fx by best", name.c_str(), r,
                  gbs(*nax_v, nax_v->best) / gbs(*l, l->best));
      if (target > 0) std::printf(" (target >= %.2fx: %s)", target, r >= target ? "met" : "MISSED");
      std::printf("\n");
    }
}

struct options {
  int reps = 15;
  std::vector<int> threads{1, 2};
  std::size_t n = 0;     // elements (elementwise) or row length (rowops, reduce); 0: the default
  std::size_t rows = 0;  // rows (rowops, reduce); 0: the default
  std::vector<std::string> ops;
  int cold = -1;        // 1: --cold, 0: --warm, -1: the benchmark's default
  std::string profile;  // variant name: run only it
  std::size_t calls = 20;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    const std::size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) fail("missing value after " + a);
      return argv[++i];
    };
    if (a == "--reps") {
      o.reps = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--threads") {
      o.threads.clear();
      for (const auto& t : split_list(next()))
        o.threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else if (a == "--n") {
      o.n = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--rows") {
      o.rows = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--ops" || a == "--op") {
      o.ops = split_list(next());
    } else if (a == "--cold" || a == "--warm") {
      o.cold = a == "--cold";
    } else if (a == "--profile") {
      o.profile = next();
    } else if (a == "--calls") {
      o.calls = std::strtoull(next().c_str(), nullptr, 10);
    } else {
      fail("unknown argument " + a);
    }
  }
  return o;
}

void print_header(const char* title, const std::string& torch_info) {
  std::printf("%s\n\n", title);
  std::printf("cpu:        %s (allowed: %s)\n",
              read_line_starting("/proc/cpuinfo", "model name").c_str(),
              read_line_starting("/proc/self/status", "Cpus_allowed_list").c_str());
  std::printf("compiler:   %s\n", NAX_BENCH_COMPILER);
  std::string flags = NAX_BENCH_FLAGS;
  flags.erase(0, flags.find_first_not_of(' '));
  std::printf("flags:      %s (__cplusplus %ld, OpenMP %d)\n", flags.c_str(),
              static_cast<long>(__cplusplus), _OPENMP);
  std::printf("nax SIMD:   %s (%zu floats per vector); row kernels %s (%zu floats)\n",
              nax::simd::arch::name(), nax::simd::width<float>, nax::simd::row_arch::name(),
              nax::simd::row_vec<float>::size);
  const nax::cache_sizes& caches = nax::machine_caches();  // they size the blocking
  std::printf("caches:     L1d %zu KiB (%s), L2 %zu KiB (%s), L3 %zu KiB shared by %zu (%s)\n",
              caches.l1d >> 10, nax::to_string(caches.l1d_source), caches.l2 >> 10,
              nax::to_string(caches.l2_source), caches.l3 >> 10, caches.l3_sharing,
              nax::to_string(caches.l3_source));
#if NAX_BENCH_HAVE_EIGEN
  std::printf("Eigen:      %d.%d.%d (SIMD: %s)\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
              EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse());
#else
  std::printf("Eigen:      not found at configure time; its rows are skipped\n");
#endif
#ifdef XTENSOR_VERSION_MAJOR
  std::printf("xtensor:    %d.%d.%d with xsimd %d.%d.%d (%s, %zu floats per batch)\n",
              XTENSOR_VERSION_MAJOR, XTENSOR_VERSION_MINOR, XTENSOR_VERSION_PATCH,
              XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR, XSIMD_VERSION_PATCH,
              xsimd::default_arch::name(), xsimd::batch<float>::size);
#elif defined(NAX_BENCH_HAVE_XTENSOR)
  std::printf("xtensor:    not found at configure time; its rows are skipped\n");
#endif
  std::printf("PyTorch:    %s\n", torch_info.c_str());
#if !defined(__OPTIMIZE__) || !defined(NDEBUG)
  std::printf("WARNING:    not an optimized NDEBUG build; these numbers do not mean much\n");
#endif
  std::printf("load avg:   %s (before)\n", load_average().c_str());
}

// A peer variant that runs `op` of bench/peers/torch_peer.py in the torch child on `threads`
// threads; `check` compares the `count` values of its result with the reference.
[[maybe_unused]] variant torch_variant(
    torch_process& torch, std::string label, std::string op, int threads, double bytes,
    std::size_t count, std::function<std::string(const std::vector<float>&)> check) {
  variant v;
  v.name = std::move(label);
  v.threads = std::to_string(threads);
  v.role = kind::peer;
  v.bytes = bytes;
  v.time_calls = [&torch, op, threads](std::size_t calls) {
    torch.must(cat("threads ", std::to_string(threads)));
    return std::stod(torch.must(cat("run ", op, " ", std::to_string(calls))));
  };
  v.verify = [&torch, op, threads, count, check = std::move(check)] {
    torch.must(cat("threads ", std::to_string(threads)));
    return check(torch.result(op, count));
  };
  return v;
}

// The FMA peak of this core: 12 independent register FMA chains at the widest vectors the
// flags allow (what the micro-kernels can at best reach), per thread, on `threads` threads.
[[maybe_unused]] double fma_peak_gflops(int threads) {
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
#if defined(__AVX512F__)
    using reg = __m512;
    constexpr int lanes = 16;
#define NAX_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define NAX_SET(x) _mm512_set1_ps(x)
#else
    using reg = __m256;
    constexpr int lanes = 8;
#define NAX_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define NAX_SET(x) _mm256_set1_ps(x)
#endif
    reg acc[12];
    for (auto& r : acc) r = NAX_SET(0.f);
    const reg a = NAX_SET(0.999f), b = NAX_SET(0.001f);
    const long iters = 20000000;
    const auto t0 = clock_type::now();
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < 12; ++i) acc[i] = NAX_FMA(a, acc[i], b);
    }
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    do_not_optimize(acc);
    total += 12.0 * 2 * lanes * double(iters) / s * 1e-9;
#undef NAX_FMA
#undef NAX_SET
  }
  return total;
}

// PyTorch runs its ops on OpenMP and its products on OpenBLAS's threads; with libgomp's default
// spin-waiting, OpenMP workers spin on the cores the other threads need (bench/jit.cpp measured
// 2-thread runs several times slower on 2 cores). libgomp reads the policy when it loads, so a
// benchmark calls this first in main: unless OMP_WAIT_POLICY is set, the program runs itself
// again with it passive (the torch child inherits it). Returns if the policy was set, or if the
// re-run failed (said on stderr; the policy then stays unset).
[[maybe_unused]] void run_with_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "bench: cannot re-run itself (%s); OMP_WAIT_POLICY stays unset\n",
               std::strerror(errno));
  unsetenv("OMP_WAIT_POLICY");
}

// Starts the torch child if the build found PyTorch; says what happened.
[[maybe_unused]] std::string start_torch(torch_process& torch) {
#if NAX_BENCH_HAVE_TORCH
  std::string info;
  if (torch.start(NAX_BENCH_PYTHON, NAX_BENCH_TORCH_SCRIPT, info)) {
    g_torch = &torch;
    return info + " (child process: " NAX_BENCH_PYTHON " " NAX_BENCH_TORCH_SCRIPT ")";
  }
  return "skipped: " + info;
#else
  (void)torch;
  return "not found at configure time; its rows are skipped";
#endif
}

// Compares `got` with `ref`: |got - ref| <= tol * max(|ref|, floor). "" if every element passes.
[[maybe_unused]] std::string compare(const float* got, const float* ref, std::size_t n, double tol,
                                     double floor) {
  std::size_t bad = 0, first = n;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double scale = std::max(std::fabs(static_cast<double>(ref[i])), floor);
    if (!(err <= tol * scale)) {  // NaN fails too
      if (first == n) first = i;
      ++bad;
    }
    if (err / scale > worst || std::isnan(err)) worst = std::isnan(err) ? INFINITY : err / scale;
  }
  if (bad == 0) return "";
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "%zu of %zu elements off (first at %zu: %.9g, reference %.9g; worst error %.3g)",
                bad, n, first, static_cast<double>(got[first]), static_cast<double>(ref[first]),
                worst);
  return msg;
}

}  // namespace
