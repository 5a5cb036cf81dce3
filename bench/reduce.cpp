// bench_reduce: sums over the inner and over the outer axis of a 4096 x 4096 float tensor, nax
// against Eigen, a hand-written loop and PyTorch, with 1 and 2 threads, next to the in-run read
// bandwidth (a pure streaming read-and-add loop over the same 64 MiB).
//
//   sum_inner: s[r] = sum over c of x[r, c]   (nax::sum<col>(x); the reduced axis is contiguous)
//   sum_outer: s[c] = sum over r of x[r, c]   (nax::sum<row>(x); the kept axis is contiguous)
//
// GB/s counts 4 bytes per element read plus 4 per output element written (64 MiB + 16 KiB per
// call).
//
// Variants (same input, same run, interleaved):
//   nax                auto s = nax::sum<col>(x) / nax::sum<row>(x) (a new 4096-float tensor
//                      each call)
//   Eigen              Map<const Matrix<float, Dynamic, Dynamic, RowMajor>>: rowwise().sum() /
//                      colwise().sum() (Eigen's Matrix has no threading: 1 thread)
//   Eigen Tensor       TensorMap.sum(dims) on DefaultDevice (1 thread) or ThreadPoolDevice
//   hand loop          OpenMP: inner, rows split over threads and `omp simd reduction(+:s)` per
//                      row; outer, columns split over threads, out[c] += x[r, c] row after row
//   PyTorch            torch.sum(x, dim=1) / torch.sum(x, dim=0) (child process)
//   limit              read bandwidth: the whole buffer summed with 8 AVX accumulators per
//                      thread (threads split the buffer), nothing else
//
// Method: as in bench_elementwise: outputs checked against a double-precision reference first
// (abort on mismatch); R rounds (default 15), order rotating; waits for idle thread pools before
// each sample; median and best per call. Cold by default: a sample is one call after the caches
// have been flushed, so every variant, the limit included, reads the 64 MiB from memory (it
// would otherwise stay partly in the 105 MiB L3 between calls, more so for whoever ran last);
// --warm times ~20 ms batches instead.
//
// Usage: bench_reduce [--reps R] [--threads 1,2] [--rows R] [--n N] [--ops sum_inner,sum_outer]
//                     [--warm]
//        bench_reduce --profile <variant> [--op sum_inner] [--threads T] [--calls K] [--rows R]
//                     [--n N] [--cold]

#include "harness.hpp"  // first: nax, then the peers (see there)

namespace {

// ================================================================================================
// The benchmark
// ================================================================================================

using row = nax::axis<"row">;
using col = nax::axis<"col">;

struct data {
  data(std::size_t rows, std::size_t n)
      : rows(rows), n(n), x(row{rows}, col{n}), out(std::max(rows, n)), ref(std::max(rows, n)) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    for (std::size_t i = 0; i < rows * n; ++i) x.data()[i] = uni(rng);
    total = 0;
    for (std::size_t i = 0; i < rows * n; ++i) total += x.data()[i];
  }
  std::size_t rows, n;
  nax::tensor<float, row, col> x;
  buffer out;  // the peers' output
  std::vector<float> ref;
  double total;  // the sum of every element, for the read-bandwidth limit
};

void make_reference(data& d, bool inner) {
  const float* x = d.x.data();
  if (inner) {
    for (std::size_t r = 0; r < d.rows; ++r) {
      double s = 0;
      for (std::size_t c = 0; c < d.n; ++c) s += x[r * d.n + c];
      d.ref[r] = static_cast<float>(s);
    }
  } else {
    std::vector<double> s(d.n, 0.0);
    for (std::size_t r = 0; r < d.rows; ++r)
      for (std::size_t c = 0; c < d.n; ++c) s[c] += x[r * d.n + c];
    for (std::size_t c = 0; c < d.n; ++c) d.ref[c] = static_cast<float>(s[c]);
  }
}

std::string check(const data& d, const float* got, bool inner) {
  // Elements are in [-1, 1]: an error below 1e-5 * 64 is rounding, one element missed is ~0.5.
  return compare(got, d.ref.data(), inner ? d.rows : d.n, 1e-5, 64.0);
}

// --- the hand loops and the limit (OpenMP) ------------------------------------------------------

void hand_sum_inner(const float* x, float* out, std::size_t rows, std::size_t n, int threads) {
  const auto rs = static_cast<std::ptrdiff_t>(rows);
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t r = 0; r < rs; ++r) {
    const float* xr = x + r * m;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (std::ptrdiff_t c = 0; c < m; ++c) s += xr[c];
    out[r] = s;
  }
}

void hand_sum_outer(const float* x, float* out, std::size_t rows, std::size_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    // Columns split over threads in whole 64-byte lines.
    const nax::index_range part =
        nax::split_range(0, (n + 15) / 16, static_cast<std::size_t>(omp_get_thread_num()),
                         static_cast<std::size_t>(omp_get_num_threads()));
    const auto lo = static_cast<std::ptrdiff_t>(part.begin * 16);
    const auto hi = static_cast<std::ptrdiff_t>(std::min(n, part.end * 16));
    float* __restrict o = out;
    for (std::ptrdiff_t c = lo; c < hi; ++c) o[c] = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const float* __restrict xr = x + r * n;
#pragma omp simd
      for (std::ptrdiff_t c = lo; c < hi; ++c) o[c] += xr[c];
    }
  }
}

// The read-bandwidth limit: every element loaded once and added, 8 independent accumulators.
double read_sum(const float* x, std::size_t count, int threads) {
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const nax::index_range part =
        nax::split_range(0, count / 64, static_cast<std::size_t>(omp_get_thread_num()),
                         static_cast<std::size_t>(omp_get_num_threads()));
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (std::size_t i = part.begin * 64; i < part.end * 64; i += 64) {
      a0 = _mm256_add_ps(a0, _mm256_load_ps(x + i));
      a1 = _mm256_add_ps(a1, _mm256_load_ps(x + i + 8));
      a2 = _mm256_add_ps(a2, _mm256_load_ps(x + i + 16));
      a3 = _mm256_add_ps(a3, _mm256_load_ps(x + i + 24));
      a4 = _mm256_add_ps(a4, _mm256_load_ps(x + i + 32));
      a5 = _mm256_add_ps(a5, _mm256_load_ps(x + i + 40));
      a6 = _mm256_add_ps(a6, _mm256_load_ps(x + i + 48));
      a7 = _mm256_add_ps(a7, _mm256_load_ps(x + i + 56));
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                   _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, s);
    for (float v : lanes) total += v;
  }
  for (std::size_t i = count / 64 * 64; i < count; ++i) total += x[i];
  return total;
}

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

#if NAX_BENCH_HAVE_EIGEN
Eigen::ThreadPool& eigen_pool() {
  static Eigen::ThreadPool pool(2);
  return pool;
}
#endif

std::vector<variant> variants(data& d, bool inner, int t, torch_process& torch) {
  const std::size_t rows = d.rows, n = d.n, count = rows * n, outs = inner ? rows : n;
  const double bytes = 4.0 * static_cast<double>(count + outs);
  const std::string ts = std::to_string(t);
  const auto& x = d.x;
  const float* xp = d.x.data();
  float* op = d.out.data;
  std::vector<variant> vs;
  // A peer writing d.out: NaN first, run, check.
  auto checked = [&d, op, outs, inner](auto run) {
    return [&d, op, outs, inner, run]() mutable {
      std::fill(op, op + outs, std::numeric_limits<float>::quiet_NaN());
      run();
      return check(d, op, inner);
    };
  };

  if (inner)
    vs.push_back(local_variant(
        "nax", ts, kind::nax, bytes,
        [&x] {
          auto s = nax::sum<col>(x);
          do_not_optimize(s.data()[0]);
        },
        [&x, &d] { return check(d, nax::sum<col>(x).data(), true); }));
  else
    vs.push_back(local_variant(
        "nax", ts, kind::nax, bytes,
        [&x] {
          auto s = nax::sum<row>(x);
          do_not_optimize(s.data()[0]);
        },
        [&x, &d] { return check(d, nax::sum<row>(x).data(), false); }));
#if NAX_BENCH_HAVE_EIGEN
  {
    const auto R = static_cast<Eigen::Index>(rows), C = static_cast<Eigen::Index>(n);
    using matrix =
        Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                   Eigen::Aligned64>;
    if (inner) {
      auto run = [=] { Eigen::Map<Eigen::VectorXf>(op, R) = matrix(xp, R, C).rowwise().sum(); };
      vs.push_back(
          local_variant("Eigen rowwise().sum()", "1", kind::peer, bytes, run, checked(run)));
    } else {
      auto run = [=] { Eigen::Map<Eigen::RowVectorXf>(op, C) = matrix(xp, R, C).colwise().sum(); };
      vs.push_back(
          local_variant("Eigen colwise().sum()", "1", kind::peer, bytes, run, checked(run)));
    }
    using tin = Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor, Eigen::Index>,
                                 Eigen::Aligned64>;
    using tout = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor, Eigen::Index>>;
    const Eigen::array<Eigen::Index, 1> dims{inner ? 1 : 0};
    auto tensor_variant = [&](auto device, std::string name) {
      auto run = [=] {
        const tin X(xp, R, C);
        tout O(op, inner ? R : C);
        O.device(*device) = X.sum(dims);
      };
      vs.push_back(local_variant(std::move(name), ts, kind::peer, bytes, run, checked(run)));
    };
    if (t == 1) {
      static Eigen::DefaultDevice device;
      tensor_variant(&device, "Eigen Tensor sum (DefaultDevice)");
    } else {
      static std::vector<std::unique_ptr<Eigen::ThreadPoolDevice>> devices;
      devices.push_back(std::make_unique<Eigen::ThreadPoolDevice>(&eigen_pool(), t));
      tensor_variant(devices.back().get(), "Eigen Tensor sum (ThreadPoolDevice)");
    }
  }
#endif
  {
    auto run = [=] {
      if (inner)
        hand_sum_inner(xp, op, rows, n, t);
      else
        hand_sum_outer(xp, op, rows, n, t);
    };
    vs.push_back(local_variant("hand loop (OpenMP)", ts, kind::peer, bytes, run, checked(run)));
  }
  if (torch.ok()) {
    vs.push_back(torch_variant(
        torch, inner ? "PyTorch torch.sum(x, 1)" : "PyTorch torch.sum(x, 0)",
        inner ? "sum_inner" : "sum_outer", t, bytes, outs,
        [&d, inner](const std::vector<float>& got) { return check(d, got.data(), inner); }));
  }
  {
    const double total = d.total;
    vs.push_back(local_variant(
        "read bandwidth (streaming sum)", ts, kind::limit, 4.0 * static_cast<double>(count),
        [=] {
          const double s = read_sum(xp, count, t);
          do_not_optimize(s);
        },
        [=]() -> std::string {
          const double s = read_sum(xp, count, t);
          return std::fabs(s - total) <= 1.0
                     ? ""
                     : cat("sum ", std::to_string(s), ", reference ", std::to_string(total));
        }));
  }
  return vs;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  options o = parse(argc, argv);
  const std::size_t rows = o.rows ? o.rows : 4096;
  const std::size_t n = o.n ? o.n : 4096;
  if (o.ops.empty()) o.ops = {"sum_inner", "sum_outer"};
  for (const auto& op : o.ops)
    if (op != "sum_inner" && op != "sum_outer") fail("unknown op " + op);

  const bool cold = o.cold != 0;
  torch_process torch;
  const std::string torch_info = o.profile.empty() ? start_torch(torch) : "not started (--profile)";
  data d(rows, n);

  if (!o.profile.empty()) {
    const int t = o.threads.front();
    nax::set_num_threads(t);
    auto vs = variants(d, o.ops.front() == "sum_inner", t, torch);
    const variant* v = find(vs, o.profile);
    if (!v) fail("no variant named '" + o.profile + "'");
    std::printf("%s, %s, %d threads, %zu x %zu, %zu calls: %s\n", v->name.c_str(),
                o.ops.front().c_str(), t, rows, n, o.calls,
                profile_run(*v, o.calls, o.cold == 1).c_str());
    return 0;
  }

  print_header("bench_reduce: sums over the inner and the outer axis of a rows x n float tensor",
               torch_info);
  std::printf(
      "shape:      %zu x %zu floats (%.0f MiB); counted bytes: 4 per element read + 4 per result\n",
      rows, n, static_cast<double>(rows * n) * 4 / (1 << 20));
  std::printf(
      "method:     outputs checked vs a double reference; %s; %d rounds, order rotating; median, "
      "best\n",
      cold ? "cold: one call per sample, caches flushed before it"
           : "warm: ~20 ms batches of calls",
      o.reps);
  if (torch.ok()) torch.load("x", d.x.data(), {rows, n});
  for (const auto& op : o.ops) {
    const bool inner = op == "sum_inner";
    make_reference(d, inner);
    for (int t : o.threads) {
      nax::set_num_threads(t);
      auto vs = variants(d, inner, t, torch);
      measure(vs, o.reps, 0.020, cold);
      std::printf("\n### %s, %d thread%s\n\n", op.c_str(), t, t == 1 ? "" : "s");
      print_table(vs, 0, {{"read bandwidth (streaming sum)", 0.85}});
      std::fflush(stdout);
    }
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
  return 0;
}
