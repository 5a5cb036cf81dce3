// What the native tier costs and what it gains, for choosing when a group is compiled
// (native_options::after_runs / after_seconds, docs/native.md "When a group is compiled"):
//   1. the compilation: the precompiled prelude with the first group, then one more group, each
//      on a cold private cache directory (eager: the specialization waits for it), and a load
//      from the warm cache;
//   2. a run of one fused group, interpreted (policy off) and native (eager), over n floats;
//   3. from both: the runs and the interpreted time after which compiling a group has paid for
//      itself (its compile time saved again by the faster runs).
// Run it alone: bench_native_tier [--reps N]. It sets NAX_NATIVE_CACHE to a fresh directory of
// its own (removed at the end); NAX_NATIVE_INCLUDE must name the headers if the build's paths
// are relative.

#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace g = nax::graph;
using clk = std::chrono::steady_clock;

namespace {

double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

// CPU seconds of the compilers run so far (waited-for children and theirs): unlike the wall
// time, the same on a loaded machine.
double compiler_cpu() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// y = tanh((x * 1.5 + z) * 0.5 - 0.25) * x, then `more` times y = y * 0.5 + z: one fused group
// of 6 + 2 * more ops (a distinct unit per `more`: constants are inputs, not text).
nax::executable make(int more, g::native_policy p) {
  g::builder b;
  auto x = b.parameter("x", nax::shape::make(nax::dtype::f32, {"n"}));
  auto z = b.parameter("z", nax::shape::make(nax::dtype::f32, {"n"}));
  auto y = g::tanh((x * 1.5 + z) * 0.5 - 0.25) * x;
  for (int i = 0; i < more; ++i) y = y * 0.5 + z;
  g::compile_options o;
  o.native.policy = p;
  return g::compile(b, {y}, o);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 2000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  const std::string cache =
      (std::filesystem::temp_directory_path() / ("nax-native-cost-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(cache);
  ::setenv("NAX_NATIVE_CACHE", cache.c_str(), 1);

  auto inputs = [](std::size_t n) {
    std::vector<nax::dyn_tensor> in;
    for (int k = 0; k < 2; ++k) {
      nax::dyn_tensor t(nax::shape::make(nax::dtype::f32, {nax::dim::named("n", n)}));
      for (std::size_t i = 0; i < n; ++i) t.data<float>()[i] = float(i % 17) * 0.1f - 0.8f;
      in.push_back(std::move(t));
    }
    return in;
  };
  const auto small = inputs(16);

  // 1. Compilation.
  auto t0 = clk::now();
  double c0 = compiler_cpu();
  nax::executable first = make(0, g::native_policy::eager);
  first.run(small);
  const double prelude_and_unit = since(t0), prelude_and_unit_cpu = compiler_cpu() - c0;
  std::vector<double> units, units_cpu;
  for (int i = 0; i < 5; ++i) {
    t0 = clk::now();
    c0 = compiler_cpu();
    nax::executable e = make(1 + i, g::native_policy::eager);
    e.run(small);
    units.push_back(since(t0));
    units_cpu.push_back(compiler_cpu() - c0);
    if (e.stats().native_ready != 1) std::printf("unit %d not native\n", i);
  }
  std::sort(units.begin(), units.end());
  std::sort(units_cpu.begin(), units_cpu.end());
  const double unit_median = units_cpu[units_cpu.size() / 2];
  std::printf("native ready: %zu\n", first.stats().native_ready);
  std::printf("compile: prelude + first unit %.2f s wall, %.2f s compiler CPU\n", prelude_and_unit,
              prelude_and_unit_cpu);
  std::printf("one more unit (%zu): wall median %.2f s (min %.2f, max %.2f); compiler CPU median "
              "%.2f s (min %.2f, max %.2f)\n",
              units.size(), units[units.size() / 2], units.front(), units.back(), unit_median,
              units_cpu.front(), units_cpu.back());
  std::printf("(break-even below: the unit's compiler CPU time saved again by faster runs)\n");

  // 2. Runs, interpreted against native.
  std::printf("%10s %14s %14s %10s %16s %18s\n", "n", "interp us/run", "native us/run", "speedup",
              "break-even runs", "break-even interp s");
  for (std::size_t n : {1000u, 10000u, 100000u, 1000000u}) {
    const auto in = inputs(n);
    nax::executable slow = make(0, g::native_policy::off);
    nax::executable fast = make(0, g::native_policy::eager);
    const int r = std::max(5, static_cast<int>(reps * 1000 / n));
    auto best = [&](nax::executable& e) {
      double b = 1e9;
      for (int round = 0; round < 5; ++round) {
        auto out = e.run(in);
        const auto t = clk::now();
        for (int i = 0; i < r; ++i) out = e.run(in);
        b = std::min(b, since(t) / r);
      }
      return b;
    };
    const double ti = best(slow), tn = best(fast);
    const double saved = ti - tn;
    const double runs = saved > 0 ? unit_median / saved : 0;
    std::printf("%10zu %14.2f %14.2f %9.2fx %16.0f %18.2f\n", n, ti * 1e6, tn * 1e6, ti / tn, runs,
                runs * ti);
  }
  std::filesystem::remove_all(cache);
}
