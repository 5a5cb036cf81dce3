// GEMM: nax::kernels::gemm against OpenBLAS (cblas_sgemm), BLIS (bli_sgemm), Eigen and PyTorch
// (torch.mm / torch.bmm in a child process), with 1 and 2 threads, interleaved, beside the
// in-run FMA peak of each thread count. `decode`: the matrix-vector products of a batch-1
// decode step (x[1, k] times row-major weights, 12 layers of GPT-2-small's, 340 MB: read from
// memory) against OpenBLAS's cblas_sgemv and Eigen, beside a streaming read of the same bytes.
//
//   bench_gemm [--reps N] [--threads 1,2] [--ops 64,512,mlp1,...,decode]
#include "harness.hpp"  // first: nax, then the peers (see there)

#include <sstream>

#include <nax/kernels/gemm.hpp>

#if NAX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif
#if NAX_BENCH_HAVE_BLIS
#include <blis.h>
#endif

namespace {

struct gemm_case {
  std::string name;
  std::size_t m, n, k, batch;
};

std::string compare_gemm(const std::vector<float>& got, const std::vector<double>& ref,
                         std::size_t k) {
  const double tol = 4 * double(k + 4) * 1.2e-7;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double(got[i]) - ref[i]) <= tol * (1 + std::abs(ref[i]))))
      return cat("element ", std::to_string(i), ": ", std::to_string(got[i]), " vs ",
                 std::to_string(ref[i]));
  return "";
}

// A variant timing back-to-back calls of `call`, verified by `check` after one call into `out`
// (filled with NaN first, so that a variant that writes nothing fails).
variant variant_of(std::string name, kind role, int threads, double bytes,
                   std::function<void()> call, std::vector<float>& out,
                   std::function<std::string()> check) {
  variant v;
  v.name = std::move(name);
  v.threads = std::to_string(threads);
  v.role = role;
  v.bytes = bytes;
  v.time_calls = [call](std::size_t calls) {
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < calls; ++i) call();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
  };
  v.verify = [call, &out, check]() {
    std::fill(out.begin(), out.end(), std::nanf(""));
    call();
    return check();
  };
  return v;
}

void run_case(const gemm_case& g, int threads, int reps, torch_process& torch) {
  const std::size_t m = g.m, n = g.n, k = g.k, nb = g.batch;
  std::vector<float> a(nb * m * k), b(nb * k * n), c(nb * m * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  // Reference in double (the first batch only, on a sample of rows for the big ones).
  const std::size_t check_rows = std::min<std::size_t>(m, 64);
  std::vector<double> ref(check_rows * n, 0.0);
  for (std::size_t i = 0; i < check_rows; ++i)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n; ++j)
        ref[i * n + j] += double(a[i * k + p]) * double(b[p * n + j]);
  auto verify = [&]() {
    return compare_gemm(std::vector<float>(c.begin(), c.begin() + std::ptrdiff_t(check_rows * n)),
                        ref, k);
  };
  const double flops = 2.0 * double(m) * double(n) * double(k) * double(nb);
  std::vector<variant> vs;
  auto add = [&](std::string name, kind role, std::function<void()> call) {
    // "bytes" holds the flops: the table prints GFLOP/s
    vs.push_back(variant_of(std::move(name), role, threads, flops, std::move(call), c, verify));
  };
  nax::set_num_threads(threads);
  const auto plan = nax::kernels::plan_gemm<float>(m, n, k, nb);
  const auto sm = static_cast<std::ptrdiff_t>(m * k), sn = static_cast<std::ptrdiff_t>(k * n),
             sc = static_cast<std::ptrdiff_t>(m * n);
  add("nax", kind::nax, [&, plan]() {
    nax::kernels::gemm<float>(plan, {a.data(), std::ptrdiff_t(k), 1, sm},
                              {b.data(), std::ptrdiff_t(n), 1, sn},
                              {c.data(), std::ptrdiff_t(n), 1, sc});
  });
#if NAX_BENCH_HAVE_OPENBLAS
  add("OpenBLAS cblas_sgemm", kind::peer, [&, threads]() {
    openblas_set_num_threads(threads);
    for (std::size_t bi = 0; bi < nb; ++bi)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f,
                  a.data() + bi * m * k, int(k), b.data() + bi * k * n, int(n), 0.0f,
                  c.data() + bi * m * n, int(n));
  });
#endif
#if NAX_BENCH_HAVE_BLIS
  add("BLIS bli_sgemm", kind::peer, [&, threads]() {
    bli_thread_set_num_threads(threads);
    float one = 1, zero = 0;
    for (std::size_t bi = 0; bi < nb; ++bi)
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, dim_t(m), dim_t(n), dim_t(k), &one,
                a.data() + bi * m * k, inc_t(k), 1, b.data() + bi * k * n, inc_t(n), 1, &zero,
                c.data() + bi * m * n, inc_t(n), 1);
  });
#endif
#if NAX_BENCH_HAVE_EIGEN
  add("Eigen (OpenMP)", kind::peer, [&, threads]() {
    Eigen::setNbThreads(threads);
    using mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (std::size_t bi = 0; bi < nb; ++bi) {
      Eigen::Map<const mat> am(a.data() + bi * m * k, Eigen::Index(m), Eigen::Index(k));
      Eigen::Map<const mat> bm(b.data() + bi * k * n, Eigen::Index(k), Eigen::Index(n));
      Eigen::Map<mat> cm(c.data() + bi * m * n, Eigen::Index(m), Eigen::Index(n));
      cm.noalias() = am * bm;
    }
  });
#endif
  if (torch.ok()) {
    torch.load("a", a.data(), nb > 1 ? std::vector<std::size_t>{nb, m, k} : std::vector{m, k});
    torch.load("b", b.data(), nb > 1 ? std::vector<std::size_t>{nb, k, n} : std::vector{k, n});
    vs.push_back(torch_variant(torch, nb > 1 ? "PyTorch torch.bmm" : "PyTorch torch.mm", "mm",
                               threads, flops, c.size(),
                               [&c, verify](const std::vector<float>& got) {
                                 std::copy(got.begin(), got.end(), c.begin());
                                 return verify();
                               }));
  }
  measure(vs, reps, 0.05, false);
  const double peak = fma_peak_gflops(threads);
  std::printf("\n### %s: %zu x (%zu x %zu x %zu), %d thread%s\n\n", g.name.c_str(), nb, m, k, n,
              threads, threads > 1 ? "s" : "");
  std::printf("%s\n\n", cat("nax plan: ",
                            [&] {
                              std::ostringstream os;
                              os << plan;
                              return os.str();
                            }())
                            .c_str());
  std::printf(
      "| variant | ms/call median | ms/call best | GFLOP/s median | GFLOP/s best | of peak | "
      "nax/variant |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  const double nax_median = vs[0].median;
  double best_blas = 0;
  for (const auto& v : vs) {
    const double gf = flops / v.median * 1e-9;
    std::printf("| %s | %.3f | %.3f | %.1f | %.1f | %.2f | %.2fx |\n", v.name.c_str(),
                v.median * 1e3, v.best * 1e3, gf, flops / v.best * 1e-9, gf / peak,
                v.median / nax_median);
    if (v.name.rfind("OpenBLAS", 0) == 0 || v.name.rfind("BLIS", 0) == 0)
      best_blas = std::max(best_blas, gf);
  }
  std::printf("| FMA peak (registers only) | | | %.1f | | 1.00 | |\n", peak);
  const double nax_gf = flops / nax_median * 1e-9;
  if (best_blas > 0)
    std::printf("\nnax / better of OpenBLAS and BLIS: %.2fx by median\n", nax_gf / best_blas);
  for (const auto& v : vs)
    if (v.name.rfind("Eigen", 0) == 0 || v.name.rfind("PyTorch", 0) == 0)
      std::printf("nax / %s: %.2fx by median\n", v.name.c_str(),
                  nax_gf / (flops / v.median * 1e-9));
}

// A decode step's matrix-vector products: y = x W for each layer's q, k, v and output
// projections (768 x 768) and its MLP (768 x 3072, 3072 x 768), W row-major, 12 layers.
void run_decode(int threads, int reps) {
  struct product {
    std::size_t k, n;
    std::vector<float> w;
  };
  std::vector<product> ps;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  double bytes = 0;
  for (int layer = 0; layer < 12; ++layer)
    for (const auto& [k, n] : {std::pair<std::size_t, std::size_t>{768, 768},
                               {768, 768},
                               {768, 768},
                               {768, 768},
                               {768, 3072},
                               {3072, 768}}) {
      product p{k, n, std::vector<float>(k * n)};
      for (auto& x : p.w) x = dist(rng);
      bytes += double(k * n) * sizeof(float);
      ps.push_back(std::move(p));
    }
  std::vector<float> x(3072), y(3072);
  for (auto& v : x) v = dist(rng);
  // The reference: the last product (3072 x 768) in double.
  const product& last = ps.back();
  std::vector<double> ref(last.n, 0.0);
  for (std::size_t p = 0; p < last.k; ++p)
    for (std::size_t j = 0; j < last.n; ++j)
      ref[j] += double(x[p]) * double(last.w[p * last.n + j]);
  const auto verify = [&] {
    return compare_gemm(std::vector<float>(y.begin(), y.begin() + std::ptrdiff_t(last.n)), ref,
                        last.k);
  };
  std::vector<variant> vs;
  const auto add = [&](std::string name, kind role, std::function<void()> call) {
    vs.push_back(variant_of(std::move(name), role, threads, bytes, std::move(call), y, verify));
  };
  nax::set_num_threads(threads);
  std::vector<nax::kernels::gemm_plan> plans;
  for (const auto& p : ps) plans.push_back(nax::kernels::plan_gemm<float>(1, p.n, p.k));
  add("nax", kind::nax, [&] {
    for (std::size_t i = 0; i < ps.size(); ++i)
      nax::kernels::gemm<float>(plans[i], {x.data(), std::ptrdiff_t(ps[i].k), 1},
                                {ps[i].w.data(), std::ptrdiff_t(ps[i].n), 1},
                                {y.data(), std::ptrdiff_t(ps[i].n), 1});
  });
#if NAX_BENCH_HAVE_OPENBLAS
  add("OpenBLAS cblas_sgemv", kind::peer, [&] {
    openblas_set_num_threads(threads);
    for (const auto& p : ps)
      cblas_sgemv(CblasRowMajor, CblasTrans, int(p.k), int(p.n), 1.0f, p.w.data(), int(p.n),
                  x.data(), 1, 0.0f, y.data(), 1);
  });
#endif
#if NAX_BENCH_HAVE_EIGEN
  add("Eigen (OpenMP)", kind::peer, [&] {
    Eigen::setNbThreads(threads);
    using mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using row = Eigen::Matrix<float, 1, Eigen::Dynamic>;
    for (const auto& p : ps) {
      Eigen::Map<const mat> w(p.w.data(), Eigen::Index(p.k), Eigen::Index(p.n));
      Eigen::Map<const row> xv(x.data(), Eigen::Index(p.k));
      Eigen::Map<row> yv(y.data(), Eigen::Index(p.n));
      yv.noalias() = xv * w;
    }
  });
#endif
  // The limit: reading the same bytes once, a sum over each matrix (OpenMP).
  float sink = 0;
  add("read of the weights (limit)", kind::limit, [&] {
    float total = 0;
    for (const auto& p : ps) {
      const float* w = p.w.data();
      const auto m = static_cast<std::ptrdiff_t>(p.w.size());
#pragma omp parallel for simd num_threads(threads) schedule(static) reduction(+ : total)
      for (std::ptrdiff_t i = 0; i < m; ++i) total += w[i];
    }
    sink += total;
  });
  vs.back().verify = [] { return std::string(); };
  measure(vs, reps, 0.2, false);
  do_not_optimize(sink);
  std::printf(
      "\n### decode: 72 products x[1, k] W[k, n] (12 layers of 768x768 x4, 768x3072, "
      "3072x768; %.0f MB), %d thread%s\n\n",
      bytes * 1e-6, threads, threads > 1 ? "s" : "");
  std::printf(
      "| variant | ms/call median | ms/call best | GB/s median | of the read | nax/variant |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  const double read = vs.back().median;
  for (const auto& v : vs)
    std::printf("| %s | %.3f | %.3f | %.1f | %.2f | %.2fx |\n", v.name.c_str(), v.median * 1e3,
                v.best * 1e3, bytes / v.median * 1e-9, read / v.median, v.median / vs[0].median);
}

}  // namespace

int main(int argc, char** argv) {
  options o = parse(argc, argv);
  torch_process torch;
  const std::string torch_info = start_torch(torch);
  print_header("# gemm: C = A B, float, row-major", torch_info);
#if !NAX_BENCH_HAVE_OPENBLAS
  std::printf("OpenBLAS:   not found at configure time; its rows are skipped\n");
#endif
#if !NAX_BENCH_HAVE_BLIS
  std::printf("BLIS:       not found at configure time; its rows are skipped\n");
#endif
  std::printf("nax GEMM:   %s micro-kernel, %zu x %zu register tile\n",
              nax::kernels::gemm_arch::name(), nax::kernels::register_tile<float>::mr,
              nax::kernels::register_tile<float>::nr);
  const std::vector<gemm_case> all = {
      {"64", 64, 64, 64, 1},         {"128", 128, 128, 128, 1},
      {"256", 256, 256, 256, 1},     {"512", 512, 512, 512, 1},
      {"1024", 1024, 1024, 1024, 1}, {"2048", 2048, 2048, 2048, 1},
      {"mlp1", 1, 3072, 768, 1},     {"mlp32", 32, 3072, 768, 1},
      {"mlp256", 256, 768, 3072, 1}, {"mlp4096", 4096, 1024, 1024, 1},
      {"batched", 64, 64, 64, 64}};
  for (const auto& g : all) {
    if (!o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), g.name) == o.ops.end()) continue;
    for (int t : o.threads) run_case(g, t, o.reps, torch);
  }
  if (o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), "decode") != o.ops.end())
    for (int t : o.threads) run_decode(t, o.reps);
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
