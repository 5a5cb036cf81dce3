// bench_elementwise: a fused elementwise chain over 16M floats, nax against its peers and the
// machine's memory bandwidth, with 1 and 2 threads, in one run.
//
//   chain_plain: out = (x * a + b) * c + x
//   chain_tanh:  out = tanh(x * a + b) * c + x
//
// x and out are [n] float tensors, a, b, c float scalars: one read stream and one write stream.
// GB/s counts the bytes the computation must move, 4 per element read plus 4 per element written
// (8 bytes per element here), not the write-allocate reads a cached store adds, nor the
// temporaries of the unfused variants: every variant of a table is credited the same bytes, so
// GB/s is the inverse of time on a common scale.
//
// Variants (same buffers, same run, interleaved):
//   nax                 out = expression (one fused loop, nax's thread pool)
//   nax unfused         op by op through temporaries (t1 = x * a; t2 = t1 + b; ...), as an eager
//                       framework runs it; the temporaries are allocated once, outside the timing
//   hand loop (OpenMP)  the fused loop written in plain C++, auto-vectorized by the compiler,
//                       split over threads by `omp parallel for schedule(static)`; std::tanh
//   Eigen Array         Map<ArrayXf> = array expression (Eigen's Array has no threading)
//   Eigen Tensor        TensorMap.device(d) = ..., DefaultDevice (1 thread) or ThreadPoolDevice
//   xtensor             xt::noalias(adapt(out)) = expression (xsimd), 1 thread
//   xtensor + OpenMP    the same built with XTENSOR_USE_OPENMP (a second translation unit)
//   PyTorch             torch eager in a child process (bench/peers/torch_peer.py)
//   limits              STREAM triad a = b + s * c (12 bytes per element) and scale a = s * b
//                       (8 bytes per element, the chain's pattern), each with ordinary and with
//                       non-temporal (streaming) stores; and the chain itself as an OpenMP loop on
//                       nax's AVX2 vectors and nax::simd::tanh with streaming stores (what it
//                       costs moving only its 8 bytes per element)
//
// Method: every variant's output is checked against a scalar reference (double precision) before
// timing, and the bench aborts on a mismatch. Then R rounds (default 15) time each variant once,
// the order rotating each round (A B C, B C A, ...). Cold (the default): a sample is one call
// after every cache has been flushed (a 256 MiB read), so x comes from memory whatever ran
// before; x and out (128 MiB) do not fit this machine's 105 MiB L3 but would partly stay there
// from call to call, which favours whichever variant ran last. --warm: a sample is a ~20 ms batch
// of calls. Before each sample the bench waits until no thread pool (OpenMP's, Eigen's, nax's,
// the child's) is still spinning. Median and best of the R samples, per call.
//
// Usage: bench_elementwise [--reps R] [--threads 1,2] [--n N] [--ops chain_plain,chain_tanh]
//                          [--warm]
//        bench_elementwise --profile <variant> [--op chain_plain] [--threads T] [--calls K]
//                          [--n N] [--cold]
//          (runs just one variant K times, back to back or each after a cache flush, for perf or
//          callgrind)

#if defined(NAX_BENCH_XTENSOR_OPENMP_PART)
// ================================================================================================
// The xtensor + OpenMP variant. xtensor makes its assignment loop an OpenMP loop when
// XTENSOR_USE_OPENMP is defined, at compile time, so this variant is this file compiled a second
// time (bench/CMakeLists.txt: -DNAX_BENCH_XTENSOR_OPENMP_PART -DXTENSOR_USE_OPENMP, linked into
// bench_elementwise) and only this part is compiled then. Its adaptors use an allocator type of
// this translation unit (internal linkage), so none of its xtensor instantiations is the same
// entity as one of the main part's, which xtensor compiles without OpenMP.
// ================================================================================================

#include <array>
#include <cstddef>
#include <memory>

#include <omp.h>

// g++ 12 reports its own AVX-512 intrinsics' placeholders as uninitialized (GCC PR 105593) once
// inlined; diagnostic state goes by source location, so silence them where they are included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop
#endif
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

namespace {
template <class T>
struct openmp_part_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = openmp_part_allocator<U>;
  };
};
}  // namespace

void xtensor_openmp_chain(bool tanh, const float* x, float* out, std::size_t n, float a, float b,
                          float c, int threads) {
  omp_set_num_threads(threads);
  const std::array<std::size_t, 1> shape{n};
  const auto X = xt::adapt(x, n, xt::no_ownership(), shape, xt::layout_type::row_major,
                           openmp_part_allocator<float>());
  auto O = xt::adapt(out, n, xt::no_ownership(), shape, xt::layout_type::row_major,
                     openmp_part_allocator<float>());
  if (tanh)
    xt::noalias(O) = xt::tanh(X * a + b) * c + X;
  else
    xt::noalias(O) = (X * a + b) * c + X;
}

#else  // the benchmark

#ifndef NAX_BENCH_HAVE_XTENSOR
#define NAX_BENCH_HAVE_XTENSOR 0
#endif
#ifndef NAX_BENCH_HAVE_XTENSOR_OPENMP
#define NAX_BENCH_HAVE_XTENSOR_OPENMP 0
#endif

#include "harness.hpp"  // first: nax, then the peers (see there)

// The xtensor + OpenMP variant: the NAX_BENCH_XTENSOR_OPENMP_PART build of this file (above).
#if NAX_BENCH_HAVE_XTENSOR_OPENMP
void xtensor_openmp_chain(bool tanh, const float* x, float* out, std::size_t n, float a, float b,
                          float c, int threads);
#endif

namespace {

// ================================================================================================
// The benchmark
// ================================================================================================

using I = nax::axis<"i">;
constexpr float ka = 0.75f, kb = 0.25f, kc = 1.25f;

// --- the hand-written loops and the limits (OpenMP, static schedule) ----------------------------

void hand_chain_plain(const float* __restrict x, float* __restrict out, std::size_t n, float a,
                      float b, float c, int threads) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) out[i] = (x[i] * a + b) * c + x[i];
}

void hand_chain_tanh(const float* __restrict x, float* __restrict out, std::size_t n, float a,
                     float b, float c, int threads) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) out[i] = std::tanh(x[i] * a + b) * c + x[i];
}

// [lo, hi) of thread t of `count`, in whole 64-byte lines (n is a multiple of 16 here).
std::pair<std::ptrdiff_t, std::ptrdiff_t> thread_range(std::size_t n, int t, int count) {
  const nax::index_range r =
      nax::split_range(0, n / 16, static_cast<std::size_t>(t), static_cast<std::size_t>(count));
  return {static_cast<std::ptrdiff_t>(r.begin * 16), static_cast<std::ptrdiff_t>(r.end * 16)};
}

// The fused loop with non-temporal stores, on nax's own vectors (AVX2) and nax::simd::tanh, each
// thread a contiguous range: what the chain costs when it moves only its 8 counted bytes per
// element (no write-allocate read of the output). A limit for this kernel, not a peer.
template <bool Tanh>
void hand_chain_nt(const float* x, float* out, std::size_t n, float a, float b, float c,
                   int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [lo, hi] = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
    using vec = nax::simd::vec<float>;
    const vec va(a), vb(b), vc(c);
    for (std::ptrdiff_t i = lo; i < hi; i += 8) {
      const vec v = vec::load_aligned(x + i);
      vec u = nax::simd::fma(v, va, vb);
      if constexpr (Tanh) u = nax::simd::tanh(u);
      _mm256_stream_ps(out + i, nax::simd::fma(u, vc, v));
    }
    _mm_sfence();
  }
}

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float s,
           std::size_t n, int threads) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) a[i] = b[i] + s * c[i];
}

void triad_nt(float* a, const float* b, const float* c, float s, std::size_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [lo, hi] = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
    const __m256 vs = _mm256_set1_ps(s);
    for (std::ptrdiff_t i = lo; i < hi; i += 8)
      _mm256_stream_ps(
          a + i, _mm256_add_ps(_mm256_load_ps(b + i), _mm256_mul_ps(vs, _mm256_load_ps(c + i))));
    _mm_sfence();
  }
}

void scale(float* __restrict a, const float* __restrict b, float s, std::size_t n, int threads) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) a[i] = s * b[i];
}

void scale_nt(float* a, const float* b, float s, std::size_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [lo, hi] = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
    const __m256 vs = _mm256_set1_ps(s);
    for (std::ptrdiff_t i = lo; i < hi; i += 8)
      _mm256_stream_ps(a + i, _mm256_mul_ps(vs, _mm256_load_ps(b + i)));
    _mm_sfence();
  }
}

struct data {
  explicit data(std::size_t n)
      : n(n), x(I{n}), out(I{n}), t1(I{n}), t2(I{n}), t3(I{n}), ta(n), tb(n), tc(n), ref(n) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> uni(-4.f, 4.f);
    for (std::size_t i = 0; i < n; ++i) x.data()[i] = uni(rng);
    for (auto* t : {&out, &t1, &t2, &t3}) t->fill(0.f);  // touch every page before timing
    for (std::size_t i = 0; i < n; ++i) {
      tb.data[i] = uni(rng);
      tc.data[i] = uni(rng);
    }
  }
  std::size_t n;
  nax::tensor<float, I> x, out, t1, t2, t3;  // input, output, the unfused variant's temporaries
  buffer ta, tb, tc;                         // the STREAM arrays
  std::vector<float> ref;                    // the current op's reference
};

void make_reference(data& d, bool tanh_op) {
  const float* x = d.x.data();
  for (std::size_t i = 0; i < d.n; ++i) {
    const double u = static_cast<double>(x[i]) * ka + kb;
    d.ref[i] = static_cast<float>((tanh_op ? std::tanh(u) : u) * kc + x[i]);
  }
}

// Checks d.out after `run` (d.out is filled with NaN first, so a variant that writes nothing
// fails).
std::string check_out(data& d, const std::function<void()>& run) {
  d.out.fill(std::numeric_limits<float>::quiet_NaN());
  run();
  return compare(d.out.data(), d.ref.data(), d.n, 1e-5, 1.0);
}

template <class F>
variant local_variant(std::string name, std::string threads, kind role, double bytes, data& d, F f,
                      std::function<std::string()> verify = {}) {
  variant v;
  v.name = std::move(name);
  v.threads = std::move(threads);
  v.role = role;
  v.bytes = bytes;
  v.time_calls = [f](std::size_t calls) mutable {
    const double s = time_local(f, calls);
    return s;
  };
  v.verify = verify ? std::move(verify) : std::function<std::string()>([&d, f]() mutable {
    return check_out(d, [&] { f(); });
  });
  return v;
}

#if NAX_BENCH_HAVE_EIGEN
Eigen::ThreadPool& eigen_pool() {
  static Eigen::ThreadPool pool(2);
  return pool;
}
#endif

std::vector<variant> variants(data& d, bool tanh_op, int t, torch_process& torch) {
  const std::size_t n = d.n;
  const double bytes = 8.0 * static_cast<double>(n);
  const std::string ts = std::to_string(t);
  auto& x = d.x;
  auto& out = d.out;
  const float* xp = d.x.data();
  float* op = d.out.data();
  std::vector<variant> vs;

  // nax
  if (tanh_op)
    vs.push_back(local_variant("nax", ts, kind::nax, bytes, d,
                               [&x, &out] { out = nax::tanh(x * ka + kb) * kc + x; }));
  else
    vs.push_back(local_variant("nax", ts, kind::nax, bytes, d,
                               [&x, &out] { out = (x * ka + kb) * kc + x; }));
  // nax op by op, through temporaries
  auto& t1 = d.t1;
  auto& t2 = d.t2;
  auto& t3 = d.t3;
  if (tanh_op)
    vs.push_back(
        local_variant("nax unfused (eager-style, 5 ops)", ts, kind::baseline, bytes, d, [&] {
          t1 = x * ka;
          t2 = t1 + kb;
          t3 = nax::tanh(t2);
          t1 = t3 * kc;
          out = t1 + x;
        }));
  else
    vs.push_back(
        local_variant("nax unfused (eager-style, 4 ops)", ts, kind::baseline, bytes, d, [&] {
          t1 = x * ka;
          t2 = t1 + kb;
          t3 = t2 * kc;
          out = t3 + x;
        }));
  // hand loop
  if (tanh_op)
    vs.push_back(local_variant("hand loop (OpenMP, std::tanh)", ts, kind::peer, bytes, d,
                               [=] { hand_chain_tanh(xp, op, n, ka, kb, kc, t); }));
  else
    vs.push_back(local_variant("hand loop (OpenMP)", ts, kind::peer, bytes, d,
                               [=] { hand_chain_plain(xp, op, n, ka, kb, kc, t); }));
#if NAX_BENCH_HAVE_EIGEN
  {
    const auto m = static_cast<Eigen::Index>(n);
    using map_in = Eigen::Map<const Eigen::ArrayXf, Eigen::Aligned64>;
    using map_out = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;
    if (tanh_op)
      vs.push_back(local_variant("Eigen Array", "1", kind::peer, bytes, d, [=] {
        const map_in X(xp, m);
        map_out(op, m) = (X * ka + kb).tanh() * kc + X;
      }));
    else
      vs.push_back(local_variant("Eigen Array", "1", kind::peer, bytes, d, [=] {
        const map_in X(xp, m);
        map_out(op, m) = (X * ka + kb) * kc + X;
      }));
    using tin = Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor, Eigen::Index>,
                                 Eigen::Aligned64>;
    using tout =
        Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor, Eigen::Index>, Eigen::Aligned64>;
    auto tensor_variant = [&](auto device, std::string name) {
      if (tanh_op)
        vs.push_back(local_variant(std::move(name), ts, kind::peer, bytes, d, [=] {
          const tin X(xp, m);
          tout O(op, m);
          O.device(*device) = (X * ka + kb).tanh() * kc + X;
        }));
      else
        vs.push_back(local_variant(std::move(name), ts, kind::peer, bytes, d, [=] {
          const tin X(xp, m);
          tout O(op, m);
          O.device(*device) = (X * ka + kb) * kc + X;
        }));
    };
    if (t == 1) {
      static Eigen::DefaultDevice device;
      tensor_variant(&device, "Eigen Tensor (DefaultDevice)");
    } else {
      static std::vector<std::unique_ptr<Eigen::ThreadPoolDevice>> devices;
      devices.push_back(std::make_unique<Eigen::ThreadPoolDevice>(&eigen_pool(), t));
      tensor_variant(devices.back().get(), "Eigen Tensor (ThreadPoolDevice)");
    }
  }
#endif
#if NAX_BENCH_HAVE_XTENSOR
  {
    const std::array<std::size_t, 1> shape{n};
    if (tanh_op)
      vs.push_back(local_variant("xtensor (xsimd)", "1", kind::peer, bytes, d, [=] {
        const auto X = xt::adapt(xp, n, xt::no_ownership(), shape);
        auto O = xt::adapt(op, n, xt::no_ownership(), shape);
        xt::noalias(O) = xt::tanh(X * ka + kb) * kc + X;
      }));
    else
      vs.push_back(local_variant("xtensor (xsimd)", "1", kind::peer, bytes, d, [=] {
        const auto X = xt::adapt(xp, n, xt::no_ownership(), shape);
        auto O = xt::adapt(op, n, xt::no_ownership(), shape);
        xt::noalias(O) = (X * ka + kb) * kc + X;
      }));
  }
#endif
#if NAX_BENCH_HAVE_XTENSOR_OPENMP
  vs.push_back(local_variant("xtensor (xsimd) + OpenMP", ts, kind::peer, bytes, d,
                             [=] { xtensor_openmp_chain(tanh_op, xp, op, n, ka, kb, kc, t); }));
#endif
  if (torch.ok()) {
    vs.push_back(torch_variant(torch, "PyTorch eager", tanh_op ? "chain_tanh" : "chain_plain", t,
                               bytes, d.n, [&d](const std::vector<float>& got) {
                                 return compare(got.data(), d.ref.data(), d.n, 1e-5, 1.0);
                               }));
  }
  // limits
  if (tanh_op)
    vs.push_back(local_variant("fused loop, NT stores (nax::simd::tanh)", ts, kind::limit, bytes, d,
                               [=] { hand_chain_nt<true>(xp, op, n, ka, kb, kc, t); }));
  else
    vs.push_back(local_variant("fused loop, NT stores", ts, kind::limit, bytes, d,
                               [=] { hand_chain_nt<false>(xp, op, n, ka, kb, kc, t); }));
  float* a = d.ta.data;
  const float* b = d.tb.data;
  const float* c = d.tc.data;
  constexpr float s = 1.5f;
  auto check_triad = [=] {
    std::vector<float> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = b[i] + s * c[i];
    return compare(a, r.data(), n, 1e-6, 1.0);
  };
  auto check_scale = [=] {
    std::vector<float> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = s * b[i];
    return compare(a, r.data(), n, 1e-6, 1.0);
  };
  auto with_check = [=](auto f, auto check) {
    return [=]() mutable {
      std::fill(a, a + n, std::numeric_limits<float>::quiet_NaN());
      f();
      return check();
    };
  };
  auto f_triad = [=] { triad(a, b, c, s, n, t); };
  auto f_triad_nt = [=] { triad_nt(a, b, c, s, n, t); };
  auto f_scale = [=] { scale(a, b, s, n, t); };
  auto f_scale_nt = [=] { scale_nt(a, b, s, n, t); };
  const double nn = static_cast<double>(n);
  vs.push_back(local_variant("STREAM triad", ts, kind::limit, 12 * nn, d, f_triad,
                             with_check(f_triad, check_triad)));
  vs.push_back(local_variant("STREAM triad, NT stores", ts, kind::limit, 12 * nn, d, f_triad_nt,
                             with_check(f_triad_nt, check_triad)));
  vs.push_back(local_variant("STREAM scale", ts, kind::limit, 8 * nn, d, f_scale,
                             with_check(f_scale, check_scale)));
  vs.push_back(local_variant("STREAM scale, NT stores", ts, kind::limit, 8 * nn, d, f_scale_nt,
                             with_check(f_scale_nt, check_scale)));
  return vs;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  options o = parse(argc, argv);
  const std::size_t n = std::max<std::size_t>(o.n ? o.n / 16 * 16 : std::size_t{1} << 24, 16);
  if (o.ops.empty()) o.ops = {"chain_plain", "chain_tanh"};
  for (const auto& op : o.ops)
    if (op != "chain_plain" && op != "chain_tanh") fail("unknown op " + op);

  torch_process torch;
  const std::string torch_info = o.profile.empty() ? start_torch(torch) : "not started (--profile)";
  data d(n);

  if (!o.profile.empty()) {
    // Just one variant, for a profiler: no harness, no child process.
    const int t = o.threads.front();
    nax::set_num_threads(t);
    auto vs = variants(d, o.ops.front() == "chain_tanh", t, torch);
    const variant* v = find(vs, o.profile);
    if (!v) fail("no variant named '" + o.profile + "'");
    std::printf("%s, %s, %d threads, n %zu, %zu calls: %s\n", v->name.c_str(),
                o.ops.front().c_str(), t, n, o.calls,
                profile_run(*v, o.calls, o.cold == 1).c_str());
    return 0;
  }

  const bool cold = o.cold != 0;  // default: cold
  print_header(
      "bench_elementwise: out = (x * a + b) * c + x and out = tanh(x * a + b) * c + x over n "
      "floats",
      torch_info);
  std::printf(
      "n:          %zu floats (%.0f MiB per array); counted bytes: 8 per element (read x, write "
      "out)\n",
      n, static_cast<double>(n) * 4 / (1 << 20));
  std::printf(
      "method:     outputs checked vs a double reference; %s; %d rounds, order rotating; median, "
      "best\n",
      cold ? "cold: one call per sample, caches flushed before it"
           : "warm: ~20 ms batches of calls",
      o.reps);

  if (torch.ok()) {
    torch.load("x", d.x.data(), {n});
    torch.must(cat("param a ", std::to_string(ka)));
    torch.must(cat("param b ", std::to_string(kb)));
    torch.must(cat("param c ", std::to_string(kc)));
  }
  for (const auto& op : o.ops) {
    const bool tanh_op = op == "chain_tanh";
    make_reference(d, tanh_op);
    for (int t : o.threads) {
      nax::set_num_threads(t);
      auto vs = variants(d, tanh_op, t, torch);
      measure(vs, o.reps, 0.020, cold);
      std::printf("\n### %s, %d thread%s\n\n", op.c_str(), t, t == 1 ? "" : "s");
      print_table(
          vs, t == 2 ? 1.15 : 0,
          {{"STREAM triad", t == 2 ? 0.85 : 0},
           {"STREAM triad, NT stores", 0},
           {"STREAM scale", 0},
           {"STREAM scale, NT stores", 0},
           {tanh_op ? "fused loop, NT stores (nax::simd::tanh)" : "fused loop, NT stores", 0}});
      std::fflush(stdout);
    }
  }
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
  return 0;
}

#endif  // NAX_BENCH_XTENSOR_OPENMP_PART
