// bench_rowops: softmax and layer_norm along the rows of a 4096 x 1024 float tensor (along the
// 1024 axis, the inner one), nax against per-row Eigen code and PyTorch, with 1 and 2 threads.
//
//   softmax:    y = exp(x - max(x)) / sum(exp(x - max(x))) per row
//   layer_norm: y = (x - mean(x)) / sqrt(var(x) + 1e-5) * gamma + beta per row (biased var)
//
// GB/s counts the bytes the op must move: 4 per element read plus 4 per element written
// (8 bytes per element, 32 MiB per call; gamma and beta, 8 KiB, are not counted). Note that
// x and y, 16 MiB each, can stay in this machine's 105 MiB L3 from one call to the next, so the
// figures are not DRAM-bound; the "copy" rows give the bandwidth of the same bytes moved with no
// arithmetic, measured in the same run.
//
// Variants (same input, same run, interleaved):
//   nax                 auto y = nax::softmax<col>(x) / nax::layer_norm<col>(x, gamma, beta, eps),
//                       as a user writes it: it returns a new tensor each call (its allocation is
//                       timed; glibc reuses the freed 16 MiB block from the previous call)
//   Eigen per row       what a competent engineer writes with Eigen: for each row (rows split
//                       over threads by `omp parallel for schedule(static)`), Array maps of the
//                       row; softmax: m = maxCoeff(), y = (x - m).exp(), y *= 1 / y.sum();
//                       layer_norm: mean(), var = (x - mean).square().mean(),
//                       y = (x - mean) * rsqrt * gamma + beta; into a preallocated output
//   PyTorch             torch.softmax(x, -1), torch.nn.functional.layer_norm (child process,
//                       bench/peers/torch_peer.py), allocating its output each call
//   limits              copy y = x (8 bytes per element, like the ops), ordinary and
//                       non-temporal stores
//
// Method: as in bench_elementwise: outputs checked against a double-precision reference first
// (abort on mismatch); R rounds (default 15), order rotating; waits for idle thread pools before
// each sample; median and best per call. Warm by default: a sample is a ~20 ms batch of calls,
// so x (16 MiB) is mostly in L3, as the output of the op before would be; --cold flushes the
// caches before every call instead.
//
// Usage: bench_rowops [--reps R] [--threads 1,2] [--rows R] [--n N] [--ops softmax,layer_norm]
//                     [--cold]
//        bench_rowops --profile <variant> [--op softmax] [--threads T] [--calls K] [--rows R]
//                     [--cold]

#include <nax/simd/math.hpp>  // first: it carries the g++ 12 AVX-512 warning workaround

#include <nax/nax.hpp>

#include <algorithm>
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

#if NAX_BENCH_HAVE_EIGEN
#include <Eigen/Core>
#endif

namespace {

// ================================================================================================
// Harness (the same in bench/elementwise.cpp, rowops.cpp and reduce.cpp)
// ================================================================================================

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
void measure(std::vector<variant>& vs, int reps, double batch_seconds, bool cold) {
  for (auto& v : vs) {
    const std::string problem = v.verify();
    if (!problem.empty()) fail("MISMATCH: " + v.name + " (" + v.threads + " threads): " + problem);
  }
  for (auto& v : vs) {
    quiesce();
    v.time_calls(1);  // warm-up
    const double once = std::max(v.time_calls(1), 1e-7);
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
std::string profile_run(const variant& v, std::size_t calls, bool cold) {
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
void print_table(const std::vector<variant>& vs, double peer_target,
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
  std::printf("nax SIMD:   %s (%zu floats per vector)\n", nax::simd::arch::name(),
              nax::simd::width<float>);
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
#elif defined(NAX_BENCH_SHOWS_XTENSOR)
  std::printf("xtensor:    not found at configure time; its rows are skipped\n");
#endif
  std::printf("PyTorch:    %s\n", torch_info.c_str());
#if !defined(__OPTIMIZE__) || !defined(NDEBUG)
  std::printf("WARNING:    not an optimized NDEBUG build; these numbers do not mean much\n");
#endif
  std::printf("load avg:   %s (before)\n", load_average().c_str());
}

// Starts the torch child if the build found PyTorch; says what happened.
std::string start_torch(torch_process& torch) {
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
std::string compare(const float* got, const float* ref, std::size_t n, double tol, double floor) {
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

// ================================================================================================
// The benchmark
// ================================================================================================

using row = nax::axis<"row">;
using col = nax::axis<"col">;
constexpr float k_eps = 1e-5f;

struct data {
  data(std::size_t rows, std::size_t n)
      : rows(rows),
        n(n),
        x(row{rows}, col{n}),
        gamma(col{n}),
        beta(col{n}),
        out(rows * n),
        copy_out(rows * n),
        ref(rows * n) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> logits(-5.f, 5.f), g(0.5f, 1.5f), b(-0.5f, 0.5f);
    // Rows of different offsets and spreads, so that layer_norm's mean and variance matter.
    for (std::size_t r = 0; r < rows; ++r) {
      const float shift = logits(rng), spread = g(rng);
      for (std::size_t i = 0; i < n; ++i) x.data()[r * n + i] = shift + spread * logits(rng);
    }
    for (std::size_t i = 0; i < n; ++i) {
      gamma.data()[i] = g(rng);
      beta.data()[i] = b(rng);
    }
  }
  std::size_t rows, n;
  nax::tensor<float, row, col> x;
  nax::tensor<float, col> gamma, beta;
  buffer out;       // the peers' output
  buffer copy_out;  // the copy limit's output
  std::vector<float> ref;
};

void make_reference(data& d, bool softmax_op) {
  const std::size_t n = d.n;
  std::vector<double> y(n);
  for (std::size_t r = 0; r < d.rows; ++r) {
    const float* x = d.x.data() + r * n;
    float* out = d.ref.data() + r * n;
    if (softmax_op) {
      double m = -INFINITY, s = 0;
      for (std::size_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(x[i]));
      for (std::size_t i = 0; i < n; ++i) s += y[i] = std::exp(static_cast<double>(x[i]) - m);
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(y[i] / s);
    } else {
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < n; ++i) mean += x[i];
      mean /= static_cast<double>(n);
      for (std::size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
      var /= static_cast<double>(n);
      const double inv = 1 / std::sqrt(var + static_cast<double>(k_eps));
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>((x[i] - mean) * inv * d.gamma.data()[i] + d.beta.data()[i]);
    }
  }
}

std::string check(const data& d, const float* got, bool softmax_op) {
  // softmax: relative to the value (down to 1e-7); layer_norm: outputs are O(1).
  return softmax_op ? compare(got, d.ref.data(), d.rows * d.n, 2e-5, 1e-7)
                    : compare(got, d.ref.data(), d.rows * d.n, 1e-4, 1.0);
}

// Limits: y = x with ordinary and with non-temporal stores.
void copy(float* __restrict y, const float* __restrict x, std::size_t n, int threads) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = x[i];
}

void copy_nt(float* y, const float* x, std::size_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const nax::index_range r =
        nax::split_range(0, n / 16, static_cast<std::size_t>(omp_get_thread_num()),
                         static_cast<std::size_t>(omp_get_num_threads()));
    for (std::size_t i = r.begin * 16; i < r.end * 16; i += 8)
      _mm256_stream_ps(y + i, _mm256_load_ps(x + i));
    _mm_sfence();
  }
}

#if NAX_BENCH_HAVE_EIGEN
// The Eigen peers: per row, Array maps, rows split over threads.
void eigen_softmax(const float* x, float* y, std::size_t rows, std::size_t n, int threads) {
  const auto m = static_cast<Eigen::Index>(n);
  const auto rs = static_cast<std::ptrdiff_t>(rows);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t r = 0; r < rs; ++r) {
    const Eigen::Map<const Eigen::ArrayXf> xr(x + r * m, m);
    Eigen::Map<Eigen::ArrayXf> yr(y + r * m, m);
    const float mx = xr.maxCoeff();
    yr = (xr - mx).exp();
    yr *= 1.0f / yr.sum();
  }
}

void eigen_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y,
                      std::size_t rows, std::size_t n, int threads) {
  const auto m = static_cast<Eigen::Index>(n);
  const auto rs = static_cast<std::ptrdiff_t>(rows);
  const Eigen::Map<const Eigen::ArrayXf> g(gamma, m), b(beta, m);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t r = 0; r < rs; ++r) {
    const Eigen::Map<const Eigen::ArrayXf> xr(x + r * m, m);
    Eigen::Map<Eigen::ArrayXf> yr(y + r * m, m);
    const float mean = xr.mean();
    const float var = (xr - mean).square().mean();
    const float inv = 1.0f / std::sqrt(var + eps);
    yr = (xr - mean) * inv * g + b;
  }
}
#endif

template <class F>
variant local_variant(std::string name, std::string threads, kind role, double bytes, F f,
                      std::function<std::string()> verify) {
  variant v;
  v.name = std::move(name);
  v.threads = std::move(threads);
  v.role = role;
  v.bytes = bytes;
  v.time_calls = [f](std::size_t calls) mutable { return time_local(f, calls); };
  v.verify = std::move(verify);
  return v;
}

std::vector<variant> variants(data& d, bool softmax_op, int t, torch_process& torch) {
  const std::size_t rows = d.rows, n = d.n, count = rows * n;
  const double bytes = 8.0 * static_cast<double>(count);
  const std::string ts = std::to_string(t);
  const auto& x = d.x;
  const auto& gamma = d.gamma;
  const auto& beta = d.beta;
  const float* xp = d.x.data();
  float* yp = d.out.data;
  std::vector<variant> vs;

  if (softmax_op)
    vs.push_back(local_variant(
        "nax", ts, kind::nax, bytes,
        [&x] {
          auto y = nax::softmax<col>(x);
          do_not_optimize(y.data()[0]);
        },
        [&x, &d] { return check(d, nax::softmax<col>(x).data(), true); }));
  else
    vs.push_back(local_variant(
        "nax", ts, kind::nax, bytes,
        [&x, &gamma, &beta] {
          auto y = nax::layer_norm<col>(x, gamma, beta, k_eps);
          do_not_optimize(y.data()[0]);
        },
        [&x, &gamma, &beta, &d] {
          return check(d, nax::layer_norm<col>(x, gamma, beta, k_eps).data(), false);
        }));
#if NAX_BENCH_HAVE_EIGEN
  {
    const float* gp = d.gamma.data();
    const float* bp = d.beta.data();
    auto run = [=] {
      if (softmax_op)
        eigen_softmax(xp, yp, rows, n, t);
      else
        eigen_layer_norm(xp, gp, bp, k_eps, yp, rows, n, t);
    };
    vs.push_back(
        local_variant("Eigen per row (OpenMP over rows)", ts, kind::peer, bytes, run, [=, &d] {
          std::fill(yp, yp + count, std::numeric_limits<float>::quiet_NaN());
          run();
          return check(d, yp, softmax_op);
        }));
  }
#endif
  if (torch.ok()) {
    const std::string name = softmax_op ? "softmax" : "layer_norm";
    variant v;
    v.name = softmax_op ? "PyTorch torch.softmax" : "PyTorch layer_norm";
    v.threads = ts;
    v.role = kind::peer;
    v.bytes = bytes;
    v.time_calls = [&torch, name, t](std::size_t calls) {
      torch.must(cat("threads ", std::to_string(t)));
      return std::stod(torch.must(cat("run ", name, " ", std::to_string(calls))));
    };
    v.verify = [&torch, &d, name, t, softmax_op] {
      torch.must(cat("threads ", std::to_string(t)));
      const std::vector<float> got = torch.result(name, d.rows * d.n);
      return check(d, got.data(), softmax_op);
    };
    vs.push_back(std::move(v));
  }
  float* cp = d.copy_out.data;
  auto check_copy = [=](auto f) {
    return [=]() mutable -> std::string {
      std::fill(cp, cp + count, std::numeric_limits<float>::quiet_NaN());
      f();
      return std::memcmp(cp, xp, count * sizeof(float)) == 0 ? "" : "copy differs";
    };
  };
  auto f_copy = [=] { copy(cp, xp, count, t); };
  auto f_copy_nt = [=] { copy_nt(cp, xp, count, t); };
  vs.push_back(local_variant("copy y = x", ts, kind::limit, bytes, f_copy, check_copy(f_copy)));
  vs.push_back(local_variant("copy y = x, NT stores", ts, kind::limit, bytes, f_copy_nt,
                             check_copy(f_copy_nt)));
  return vs;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  options o = parse(argc, argv);
  const std::size_t rows = o.rows ? o.rows : 4096;
  const std::size_t n = o.n ? o.n / 16 * 16 : 1024;
  if (n == 0) fail("--n must be at least 16");
  if (o.ops.empty()) o.ops = {"softmax", "layer_norm"};
  for (const auto& op : o.ops)
    if (op != "softmax" && op != "layer_norm") fail("unknown op " + op);

  const bool cold = o.cold == 1;
  torch_process torch;
  const std::string torch_info = o.profile.empty() ? start_torch(torch) : "not started (--profile)";
  data d(rows, n);

  if (!o.profile.empty()) {
    const int t = o.threads.front();
    nax::set_num_threads(t);
    auto vs = variants(d, o.ops.front() == "softmax", t, torch);
    const variant* v = find(vs, o.profile);
    if (!v) fail("no variant named '" + o.profile + "'");
    std::printf("%s, %s, %d threads, %zu x %zu, %zu calls: %s\n", v->name.c_str(),
                o.ops.front().c_str(), t, rows, n, o.calls,
                profile_run(*v, o.calls, o.cold == 1).c_str());
    return 0;
  }

  print_header(
      "bench_rowops: softmax and layer_norm along the inner axis of a rows x n float tensor",
      torch_info);
  std::printf(
      "shape:      %zu x %zu floats (%.0f MiB); counted bytes: 8 per element (read x, write y)\n",
      rows, n, static_cast<double>(rows * n) * 4 / (1 << 20));
  std::printf(
      "method:     outputs checked vs a double reference; %s; %d rounds, order rotating; median, "
      "best\n",
      cold ? "cold: one call per sample, caches flushed before it"
           : "warm: ~20 ms batches of calls",
      o.reps);
  if (torch.ok()) {
    torch.load("x", d.x.data(), {rows, n});
    torch.load("gamma", d.gamma.data(), {n});
    torch.load("beta", d.beta.data(), {n});
    torch.must(cat("param eps ", std::to_string(static_cast<double>(k_eps))));
  }
  for (const auto& op : o.ops) {
    const bool softmax_op = op == "softmax";
    make_reference(d, softmax_op);
    for (int t : o.threads) {
      nax::set_num_threads(t);
      auto vs = variants(d, softmax_op, t, torch);
      measure(vs, o.reps, 0.020, cold);
      std::printf("\n### %s, %d thread%s\n\n", op.c_str(), t, t == 1 ? "" : "s");
      print_table(vs, softmax_op ? 1.5 : 1.2, {{"copy y = x", 0}, {"copy y = x, NT stores", 0}});
      std::fflush(stdout);
    }
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
  return 0;
}
