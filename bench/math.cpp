// bench_math: throughput of nax::simd's transcendental functions against xsimd 8's and Eigen's
// vectorized ones, single thread, on an array that stays in L1 (4096 elements) and on one that
// streams from memory (16M elements): out[i] = f(in[i]).
//
// Peers, in the same run:
//   xsimd   xsimd::exp, log, tanh, erf, sin, cos, pow; sigmoid = 1 / (1 + exp(-x)),
//           silu = x * sigmoid, gelu = x (1 + erf(x / sqrt2)) / 2, gelu_tanh =
//           x (1 + tanh(...)) / 2, all on xsimd::batch<T> (the default architecture: what
//           -march=native enables).
//   Eigen   Array .exp(), .log(), .tanh(), .logistic(), .sin(), .cos(), .erf()
//           (unsupported/SpecialFunctions), .pow()
//           and the same compositions as array expressions (optional peer: NAX_BENCH_HAVE_EIGEN).
//
// Method: each (function, size, library) body is calibrated to batches of ~20 ms; then 11 rounds
// each time the libraries' batches one after another (A/B interleaved, so all see the same
// machine state); the table gives the median ns per element, Gelem/s and the peers' time over
// nax's. Inputs: uniform in [-8, 8] (log: log-uniform in [1e-3, 1e3]), so no library takes a
// special-value path; before timing, the bench checks that every library agrees with long double
// to a loose tolerance on these inputs (so it times the right thing; the accuracy tests are in
// tests/simd/math.cpp).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nax/simd/arch.hpp>  // (pow)
#include <nax/simd/math.hpp>  // first: it carries the g++ 12 AVX-512 warning workaround

#include <xsimd/xsimd.hpp>

#ifndef NAX_BENCH_HAVE_EIGEN
#define NAX_BENCH_HAVE_EIGEN 0
#endif
#if NAX_BENCH_HAVE_EIGEN
#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>
#endif

#ifndef NAX_BENCH_COMPILER
#define NAX_BENCH_COMPILER "unknown (not built by bench/CMakeLists.txt)"
#endif
#ifndef NAX_BENCH_FLAGS
#define NAX_BENCH_FLAGS "unknown (not built by bench/CMakeLists.txt)"
#endif

namespace {

// --- measurement -------------------------------------------------------------------------------

template <class T>
inline void do_not_optimize(const T& value) {
  __asm__ __volatile__("" : : "g"(&value) : "memory");
}

using clock_type = std::chrono::steady_clock;
constexpr int kRounds = 11;
constexpr double kBatchSeconds = 0.020;

double seconds_for(const std::function<void()>& body, std::size_t calls) {
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < calls; ++i) body();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::size_t calibrate(const std::function<void()>& body) {
  std::size_t calls = 1;
  double t = seconds_for(body, calls);
  while (t < kBatchSeconds / 4) {
    calls *= 2;
    t = seconds_for(body, calls);
  }
  calls = std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(calls) * kBatchSeconds / t));
  seconds_for(body, calls);  // warm-up
  return calls;
}

// Median ns per element of each body, the bodies' batches interleaved round by round.
std::vector<double> measure(const std::vector<std::function<void()>>& bodies, std::size_t n) {
  std::vector<std::size_t> calls;
  for (const auto& b : bodies) calls.push_back(calibrate(b));
  std::vector<std::vector<double>> ns(bodies.size());
  for (int r = 0; r < kRounds; ++r)
    for (std::size_t i = 0; i < bodies.size(); ++i)
      ns[i].push_back(seconds_for(bodies[i], calls[i]) * 1e9 / static_cast<double>(calls[i] * n));
  std::vector<double> median;
  for (auto& v : ns) {
    std::sort(v.begin(), v.end());
    median.push_back(v[v.size() / 2]);
  }
  return median;
}

// --- the functions, per library ---------------------------------------------------------------

template <class T>
using batch = xsimd::batch<T>;

// Applies f to n elements (n a multiple of the batch size; the arrays are aligned).
template <class T, class F>
void apply_batches(const T* in, T* out, std::size_t n, F f) {
  constexpr std::size_t w = batch<T>::size;
  for (std::size_t i = 0; i < n; i += w) f(batch<T>::load_aligned(in + i)).store_aligned(out + i);
}

template <class T>
struct function_case {
  const char* name;
  long double (*reference)(long double);
  void (*nax)(const T*, T*, std::size_t);
  void (*xsimd)(const T*, T*, std::size_t);
#if NAX_BENCH_HAVE_EIGEN
  void (*eigen)(const T*, T*, std::size_t);
#endif
  bool positive_inputs;
};

constexpr long double kPi = 3.141592653589793238462643383279502884L;

template <class T>
std::vector<function_case<T>> cases() {
  using B = batch<T>;
#if NAX_BENCH_HAVE_EIGEN
  using A = Eigen::Array<T, Eigen::Dynamic, 1>;
  using M = Eigen::Map<const A, Eigen::Aligned64>;
  using O = Eigen::Map<A, Eigen::Aligned64>;
#define NAX_EIGEN(expr)                            \
  , [](const T* in, T* out, std::size_t n) {       \
    const M x(in, static_cast<Eigen::Index>(n));   \
    O(out, static_cast<Eigen::Index>(n)) = (expr); \
  }
#else
#define NAX_EIGEN(expr)
#endif
#define NAX_CASE(NAME, REF, XS, EIG, POS)                                              \
  function_case<T> {                                                                   \
    NAME, [](long double x) -> long double { return REF; },                            \
        [](const T* in, T* out, std::size_t n) {                                       \
          apply_batches(in, out, n, [](const B& x) { return nax::simd::NAME_FN(x); }); \
        },                                                                             \
        [](const T* in, T* out, std::size_t n) {                                       \
          apply_batches(in, out, n, [](const B& x) -> B { return XS; });               \
        } NAX_EIGEN(EIG),                                                              \
        POS                                                                            \
  }
  const T half = T(0.5), one = T(1), rsqrt2 = T(0.70710678118654752440L);
  const T k = T(0.79788456080286535588L), c = T(0.044715);
  (void)half, (void)one, (void)rsqrt2, (void)k, (void)c;
  std::vector<function_case<T>> v;
#define NAME_FN exp
  v.push_back(NAX_CASE("exp", std::exp(x), xsimd::exp(x), x.exp(), false));
#undef NAME_FN
#define NAME_FN log
  v.push_back(NAX_CASE("log", std::log(x), xsimd::log(x), x.log(), true));
#undef NAME_FN
#define NAME_FN tanh
  v.push_back(NAX_CASE("tanh", std::tanh(x), xsimd::tanh(x), x.tanh(), false));
#undef NAME_FN
#define NAME_FN sigmoid
  v.push_back(NAX_CASE("sigmoid", 1 / (1 + std::exp(-x)), B(1) / (B(1) + xsimd::exp(-x)),
                       x.logistic(), false));
#undef NAME_FN
#define NAME_FN silu
  v.push_back(NAX_CASE("silu", x / (1 + std::exp(-x)), x / (B(1) + xsimd::exp(-x)),
                       x * x.logistic(), false));
#undef NAME_FN
#define NAME_FN erf
  v.push_back(NAX_CASE("erf", std::erf(x), xsimd::erf(x), x.erf(), false));
#undef NAME_FN
#define NAME_FN gelu
  v.push_back(NAX_CASE("gelu", x * std::erfc(-x / std::sqrt(2.0L)) / 2,
                       B(T(0.5)) * x * (B(1) + xsimd::erf(x * B(T(0.70710678118654752440L)))),
                       T(0.5) * x * (T(1) + (x * T(0.70710678118654752440L)).erf()), false));
#undef NAME_FN
#define NAME_FN gelu_tanh
  v.push_back(NAX_CASE(
      "gelu_tanh", x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715L * x * x * x))) / 2,
      B(T(0.5)) * x *
          (B(1) + xsimd::tanh(B(T(0.79788456080286535588L)) * (x + B(T(0.044715)) * x * x * x))),
      T(0.5) * x * (T(1) + (T(0.79788456080286535588L) * (x + T(0.044715) * x * x * x)).tanh()),
      false));
#undef NAME_FN
#define NAME_FN sin
  v.push_back(NAX_CASE("sin", std::sin(x), xsimd::sin(x), x.sin(), false));
#undef NAME_FN
#define NAME_FN cos
  v.push_back(NAX_CASE("cos", std::cos(x), xsimd::cos(x), x.cos(), false));
#undef NAME_FN
  // pow(x, 2.7) on x log-uniform in [1e-3, 1e3]: nax's pow is xsimd's plus C's special cases
  // (Annex F) as compares and blends (simd/arch.hpp); this prices them. std::pow is the reference.
  v.push_back(function_case<T>{
      "pow(x,2.7)", [](long double x) -> long double { return std::pow(x, 2.7L); },
      [](const T* in, T* out, std::size_t n) {
        apply_batches(in, out, n, [](const B& x) { return nax::simd::pow(x, B(T(2.7))); });
      },
      [](const T* in, T* out, std::size_t n) {
        apply_batches(in, out, n, [](const B& x) -> B { return xsimd::pow(x, B(T(2.7))); });
      } NAX_EIGEN(x.pow(T(2.7))),
      true});
#undef NAX_CASE
#undef NAX_EIGEN
  return v;
}

// --- machine ----------------------------------------------------------------------------------

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

template <class T>
struct aligned_buffer {
  explicit aligned_buffer(std::size_t n)
      : data(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))) {
    if (!data) std::abort();
  }
  ~aligned_buffer() { std::free(data); }
  aligned_buffer(const aligned_buffer&) = delete;
  aligned_buffer& operator=(const aligned_buffer&) = delete;
  T* data;
};

template <class T>
void run(const char* type_name, std::size_t n, std::vector<std::string>& failures) {
  aligned_buffer<T> in(n), out(n);
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> uni(-8, 8), lg(std::log(1e-3), std::log(1e3));
  for (const auto& c : cases<T>()) {
    for (std::size_t i = 0; i < n; ++i)
      in.data[i] = c.positive_inputs ? T(std::exp(lg(rng))) : T(uni(rng));
    // Sanity: each library computes its function (error relative to max(|ref|, 1): loose,
    // since the peers' compositions cancel where 1 + erf or 1 + tanh is small).
    auto check = [&](const char* lib, void (*f)(const T*, T*, std::size_t)) {
      f(in.data, out.data, n);
      double worst = 0;
      for (std::size_t i = 0; i < n; i += 7) {
        const long double ref = c.reference(static_cast<long double>(in.data[i]));
        const long double err = std::fabs(static_cast<long double>(out.data[i]) - ref);
        worst = std::max(worst, static_cast<double>(err / std::max(std::fabs(ref), 1.0L)));
      }
      const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
      if (!(worst <= tolerance))
        failures.push_back(std::string(lib) + " " + c.name + " " + type_name + ": error " +
                           std::to_string(worst));
    };
    check("nax", c.nax);
    check("xsimd", c.xsimd);
#if NAX_BENCH_HAVE_EIGEN
    check("Eigen", c.eigen);
#endif
    std::vector<std::function<void()>> bodies = {[&] {
                                                   c.nax(in.data, out.data, n);
                                                   do_not_optimize(out.data[0]);
                                                 },
                                                 [&] {
                                                   c.xsimd(in.data, out.data, n);
                                                   do_not_optimize(out.data[0]);
                                                 }};
#if NAX_BENCH_HAVE_EIGEN
    bodies.push_back([&] {
      c.eigen(in.data, out.data, n);
      do_not_optimize(out.data[0]);
    });
#endif
    const std::vector<double> ns = measure(bodies, n);
    std::printf("| %s | %s | %zu | %.3f | %.2f | %.3f | %.2fx |", c.name, type_name, n, ns[0],
                1 / ns[0], ns[1], ns[1] / ns[0]);
#if NAX_BENCH_HAVE_EIGEN
    std::printf(" %.3f | %.2fx |\n", ns[2], ns[2] / ns[0]);
#else
    std::printf(" - | - |\n");
#endif
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Optional: sizes to run (default 4096 and 16777216), e.g. `bench_math 4096`.
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {4096, std::size_t{1} << 24};

  std::printf("bench_math: out[i] = f(in[i]), single thread, nax::simd vs xsimd 8 vs Eigen\n\n");
  std::printf("cpu:        %s (allowed: %s)\n",
              read_line_starting("/proc/cpuinfo", "model name").c_str(),
              read_line_starting("/proc/self/status", "Cpus_allowed_list").c_str());
  std::printf("compiler:   %s\n", NAX_BENCH_COMPILER);
  std::string flags = NAX_BENCH_FLAGS;
  flags.erase(0, flags.find_first_not_of(' '));
  std::printf("flags:      %s (__cplusplus %ld)\n", flags.c_str(), static_cast<long>(__cplusplus));
  std::printf("xsimd arch: %s (%zu floats, %zu doubles per batch)\n", xsimd::default_arch::name(),
              batch<float>::size, batch<double>::size);
#if NAX_BENCH_HAVE_EIGEN
  std::printf("Eigen:      %d.%d.%d (SIMD: %s)\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
              EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse());
#else
  std::printf("Eigen:      not found at configure time; its columns are skipped\n");
#endif
#if !defined(__OPTIMIZE__) || !defined(NDEBUG)
  std::printf("WARNING:    not an optimized NDEBUG build; these numbers do not mean much\n");
#endif
  std::printf("load avg:   %s (before)\n", load_average().c_str());
  std::printf("method:     median of %d rounds of ~%.0f ms batches, libraries interleaved\n\n",
              kRounds, kBatchSeconds * 1e3);

  std::printf(
      "| function | type | n | nax ns/elem | nax Gelem/s | xsimd ns/elem | xsimd/nax | Eigen "
      "ns/elem | Eigen/nax |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  std::vector<std::string> failures;
  for (std::size_t n : sizes) {
    n = std::max<std::size_t>(n / 64 * 64, 64);
    run<float>("f32", n, failures);
  }
  for (std::size_t n : sizes) {
    n = std::max<std::size_t>(n / 64 * 64, 64);
    run<double>("f64", n, failures);
  }
  std::printf("\nratios > 1: the peer takes longer than nax. load avg: %s (after)\n",
              load_average().c_str());
  for (const auto& f : failures) std::printf("SANITY CHECK FAILED: %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
