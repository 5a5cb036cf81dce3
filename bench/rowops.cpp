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

#include "harness.hpp"  // first: nax, then the peers (see there)

namespace {

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
    float* yp = d.out.data;
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
    vs.push_back(torch_variant(torch, softmax_op ? "PyTorch torch.softmax" : "PyTorch layer_norm",
                               softmax_op ? "softmax" : "layer_norm", t, bytes, d.rows * d.n,
                               [&d, softmax_op](const std::vector<float>& got) {
                                 return check(d, got.data(), softmax_op);
                               }));
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
