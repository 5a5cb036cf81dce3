#pragma once
// The MLP block of the runtime benchmarks (bench_jit, bench_pipeline): x[batch, 768] -> dot
// w1[768, 3072] + b1 -> gelu -> dot w2[3072, 768] + b2 -> + x -> layer_norm, as a builder graph,
// as a nax::jit lambda, hand-written on OpenBLAS + OpenMP loops, and as a reference in double.
// Include after harness.hpp and, with OpenBLAS, after <cblas.h> and openblas_set_num_threads.
// (Its functions are [[maybe_unused]]: bench_train uses the typed block alone.)

#include <nax/graph/ops.hpp>
#include <nax/jit/jit.hpp>

namespace {

namespace mlp_g = nax::graph;

const nax::dim D768 = nax::dim::named("d", 768), F3072 = nax::dim::named("f", 3072);

struct mlp_graph {
  mlp_g::builder b;
  mlp_g::value out;
  mlp_graph() {
    auto x = b.parameter("x", nax::shape::make(nax::dtype::f32, {"batch", D768}));
    auto w1 = b.parameter("w1", nax::shape::make(nax::dtype::f32, {D768, F3072}));
    auto b1 = b.parameter("b1", nax::shape::make(nax::dtype::f32, {F3072}));
    auto w2 = b.parameter("w2", nax::shape::make(nax::dtype::f32, {F3072, D768}));
    auto b2 = b.parameter("b2", nax::shape::make(nax::dtype::f32, {D768}));
    auto gamma = b.parameter("gamma", nax::shape::make(nax::dtype::f32, {D768}));
    auto beta = b.parameter("beta", nax::shape::make(nax::dtype::f32, {D768}));
    auto hid = mlp_g::gelu(mlp_g::dot_general(x, w1, {{"d", "d"}}) + b1);
    out = mlp_g::layer_norm(mlp_g::dot_general(hid, w2, {{"f", "f"}}) + b2 + x, gamma, beta, "d");
  }
};

constexpr std::size_t D = 768, F = 3072;
constexpr float ln_eps = 1e-5f;

// erf as Eigen computes it for float (a rational approximation on [-4, 4], a few ulp): plain
// arithmetic, so the loop that calls it vectorizes.
inline float erf_rational(float v) {
  const float x = v < -4.f ? -4.f : (v > 4.f ? 4.f : v);
  const float x2 = x * x;
  float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  p = x * p;
  float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return p / q;
}

struct mlp_data {
  std::size_t m = 0;
  std::vector<nax::dyn_tensor>
      in;  // x, w1, b1, w2, b2, gamma, beta (nax's inputs; the peers read them)
  std::vector<float> w1t, w2t;  // PyTorch's [out, in] weights
  std::vector<float> h, out_hand;
  std::vector<nax::dyn_tensor> out_nax;
  std::vector<double> ref;  // the first rows, in double
  std::size_t ref_rows = 0;
  const float* p(std::size_t k) const { return in[k].data<float>(); }
};

// The hand-written block: cblas_sgemm for the products; bias + gelu fused in one vectorizable
// loop; bias, residual and layer_norm fused per row (the row stays in L1).
[[maybe_unused]] void hand_mlp(mlp_data& d, int threads) {
#if NAX_BENCH_HAVE_OPENBLAS
  const std::size_t m = d.m;
  const float *x = d.p(0), *w1 = d.p(1), *b1 = d.p(2), *w2 = d.p(3), *b2 = d.p(4), *gamma = d.p(5),
              *beta = d.p(6);
  float* h = d.h.data();
  float* out = d.out_hand.data();
  openblas_set_num_threads(threads);
  // One row: a matrix-vector product (OpenBLAS 0.3.21's sgemm packs all of w for m = 1).
  if (m == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, int(D), int(F), 1.0f, w1, int(F), x, 1, 0.0f, h, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(F), int(D), 1.0f, x, int(D),
                w1, int(F), 0.0f, h, int(F));
  // Blocks of 1024 columns (3 per row), so that batch 1 splits over threads too.
  const auto blocks = static_cast<std::ptrdiff_t>(m * (F / 1024));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && blocks > 1)
  for (std::ptrdiff_t blk = 0; blk < blocks; ++blk) {
    float* r = h + blk * 1024;
    const float* bias = b1 + (blk % std::ptrdiff_t(F / 1024)) * 1024;
#pragma omp simd
    for (std::ptrdiff_t j = 0; j < 1024; ++j) {
      const float u = r[j] + bias[j];
      r[j] = 0.5f * u * (1.0f + erf_rational(u * 0.70710678118654752f));
    }
  }
  if (m == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, int(F), int(D), 1.0f, w2, int(D), h, 1, 0.0f, out, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(D), int(F), 1.0f, h, int(F),
                w2, int(D), 0.0f, out, int(D));
  const auto rows = static_cast<std::ptrdiff_t>(m);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && rows > 1)
  for (std::ptrdiff_t i = 0; i < rows; ++i) {
    float* r = out + i * std::ptrdiff_t(D);
    const float* xr = x + i * std::ptrdiff_t(D);
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (std::size_t j = 0; j < D; ++j) {
      r[j] += b2[j] + xr[j];
      sum += r[j];
    }
    const float mean = sum / float(D);
    float var = 0;
#pragma omp simd reduction(+ : var)
    for (std::size_t j = 0; j < D; ++j) var += (r[j] - mean) * (r[j] - mean);
    const float rstd = 1.0f / std::sqrt(var / float(D) + ln_eps);
#pragma omp simd
    for (std::size_t j = 0; j < D; ++j) r[j] = (r[j] - mean) * rstd * gamma[j] + beta[j];
  }
#else
  (void)d;
  (void)threads;
#endif
}

[[maybe_unused]] void mlp_reference(mlp_data& d) {
  d.ref_rows = std::min<std::size_t>(d.m, 4);
  d.ref.assign(d.ref_rows * D, 0);
  const float *x = d.p(0), *w1 = d.p(1), *b1 = d.p(2), *w2 = d.p(3), *b2 = d.p(4), *gamma = d.p(5),
              *beta = d.p(6);
  std::vector<double> h(F);
  for (std::size_t i = 0; i < d.ref_rows; ++i) {
    for (std::size_t j = 0; j < F; ++j) h[j] = b1[j];
    for (std::size_t k = 0; k < D; ++k)
      for (std::size_t j = 0; j < F; ++j) h[j] += double(x[i * D + k]) * w1[k * F + j];
    for (auto& v : h) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    double* r = d.ref.data() + i * D;
    for (std::size_t j = 0; j < D; ++j) r[j] = double(b2[j]) + x[i * D + j];
    for (std::size_t k = 0; k < F; ++k)
      for (std::size_t j = 0; j < D; ++j) r[j] += h[k] * w2[k * D + j];
    double mean = 0, var = 0;
    for (std::size_t j = 0; j < D; ++j) mean += r[j];
    mean /= D;
    for (std::size_t j = 0; j < D; ++j) var += (r[j] - mean) * (r[j] - mean);
    const double rstd = 1 / std::sqrt(var / D + ln_eps);
    for (std::size_t j = 0; j < D; ++j) r[j] = (r[j] - mean) * rstd * gamma[j] + beta[j];
  }
}

using jit_batch = nax::axis<"batch">;
using jit_d = nax::axis<"d", 768>;
using jit_f = nax::axis<"f", 3072>;
const auto jit_mlp_block = [](auto x, auto w1, auto b1, auto w2, auto b2, auto gamma, auto beta) {
  auto h = nax::gelu(nax::dot<jit_d>(x, w1) + b1);
  return nax::layer_norm<jit_d>(nax::dot<jit_f>(h, w2) + b2 + x, gamma, beta, 1e-5f);
};
[[maybe_unused]] auto make_jit_mlp() {
  return nax::jit(jit_mlp_block, nax::input<float, jit_batch, jit_d>("x"),
                  nax::input<float, jit_d, jit_f>("w1"), nax::input<float, jit_f>("b1"),
                  nax::input<float, jit_f, jit_d>("w2"), nax::input<float, jit_d>("b2"),
                  nax::input<float, jit_d>("gamma"), nax::input<float, jit_d>("beta"));
}
struct jit_weights {
  nax::tensor<float, jit_d, jit_f> w1;
  nax::tensor<float, jit_f> b1;
  nax::tensor<float, jit_f, jit_d> w2;
  nax::tensor<float, jit_d> b2, gamma, beta;
};
template <class T>
void copy_into(T& t, const nax::dyn_tensor& from);

// One measured (batch, threads) cell of the block: every variant's median and best.
[[maybe_unused]] void print_mlp_line(std::size_t m, int threads, const std::vector<variant>& vs) {
  std::printf("\nbatch %zu, %d thread%s: ", m, threads, threads > 1 ? "s" : "");
  for (const auto& v : vs)
    std::printf("%s %.3f ms (best %.3f); ", v.name.c_str(), v.median * 1e3, v.best * 1e3);
  std::printf("\n");
  std::fflush(stdout);
}

// The typed weights of the jit block, copied from the builder graph's (mlp_weights).
[[maybe_unused]] jit_weights make_jit_weights(const std::vector<nax::dyn_tensor>& weights) {
  jit_weights jw;
  copy_into(jw.w1, weights[0]);
  copy_into(jw.b1, weights[1]);
  copy_into(jw.w2, weights[2]);
  copy_into(jw.b2, weights[3]);
  copy_into(jw.gamma, weights[4]);
  copy_into(jw.beta, weights[5]);
  return jw;
}

template <class T>
void copy_into(T& t, const nax::dyn_tensor& from) {
  if (t.size() != from.size()) fail("jit: size mismatch");
  std::memcpy(t.data(), from.data(), from.bytes());
}

[[maybe_unused]] std::string check_mlp(const mlp_data& d, const float* got) {
  std::vector<float> ref(d.ref.begin(), d.ref.end());
  return compare(got, ref.data(), ref.size(), 2e-4, 1.0);
}

// The block's weights, parameters 1 to 6 of the graph (w1, b1, w2, b2, gamma, beta), uniform
// and scaled as an initializer would scale them.
[[maybe_unused]] std::vector<nax::dyn_tensor> mlp_weights(const mlp_g::program& p,
                                                          std::mt19937& rng) {
  std::vector<nax::dyn_tensor> weights;
  const float scales[] = {1.0f, 1.0f / 27.7f, 0.1f, 1.0f / 55.4f, 0.1f, 1.0f, 0.1f};
  for (std::size_t k = 1; k < p.num_inputs(); ++k) {
    weights.emplace_back(p.values[k].shape.resolve({}));
    std::uniform_real_distribution<float> dist(-scales[k], scales[k]);
    float* w = weights.back().data<float>();
    for (std::size_t i = 0; i < weights.back().size(); ++i) w[i] = dist(rng);
    if (k == 5)
      for (std::size_t i = 0; i < weights.back().size(); ++i) w[i] += 1.0f;  // gamma ~ 1
  }
  return weights;
}

// PyTorch's copies of the weights, in its [out, in] layout, and the epsilon.
[[maybe_unused]] void load_mlp_into_torch(torch_process& torch,
                                          const std::vector<nax::dyn_tensor>& weights) {
  std::vector<float> w1t(D * F), w2t(F * D);
  for (std::size_t i = 0; i < D; ++i)
    for (std::size_t j = 0; j < F; ++j) {
      w1t[j * D + i] = weights[0].data<float>()[i * F + j];
      w2t[i * F + j] = weights[2].data<float>()[j * D + i];
    }
  torch.load("w1t", w1t.data(), {F, D});
  torch.load("b1", weights[1].data<float>(), {F});
  torch.load("w2t", w2t.data(), {D, F});
  torch.load("b2", weights[3].data<float>(), {D});
  torch.load("gamma", weights[4].data<float>(), {D});
  torch.load("beta", weights[5].data<float>(), {D});
  torch.must(cat("param eps ", std::to_string(ln_eps)));
}

// The inputs of batch m (x random, the weights shared), the peers' buffers, nax's result tensor
// and the reference of the first rows.
[[maybe_unused]] mlp_data make_mlp_data(nax::executable& ex,
                                        const std::vector<nax::dyn_tensor>& weights, std::size_t m,
                                        std::mt19937& rng) {
  mlp_data d;
  d.m = m;
  const nax::bindings bind{{"batch", m}};
  d.in.emplace_back(ex.program().values[0].shape.resolve(bind));
  std::uniform_real_distribution<float> dist(-1, 1);
  float* x = d.in[0].data<float>();
  for (std::size_t i = 0; i < d.in[0].size(); ++i) x[i] = dist(rng);
  for (const auto& w : weights) d.in.push_back(w);  // shares the weights' memory
  d.h.assign(m * F, 0);
  d.out_hand.assign(m * D, 0);
  d.out_nax.emplace_back(nax::shape::make(nax::dtype::f32, {nax::dim::named("batch", m), D768}));
  mlp_reference(d);
  return d;
}

}  // namespace
