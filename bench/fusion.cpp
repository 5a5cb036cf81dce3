// Runtime fusion (issue 6): graphs built op by op with nax::graph::builder, compiled with the
// fusion passes (the default) and without ({.fusion = false}), against the same computation
// written as typed nax code (fused at C++ compile time) or as the graph's direct ops.
//
//   chain6     y = tanh((x * 1.5 + z) * 0.5 - 0.25) * x over 16 M floats (6 ops)
//   chain12    chain6 + sigmoid(z) * 0.3 - abs(x) * 0.2 + 0.1 (12 ops)
//              peers: the same expression as one typed nax expression (compile-time fusion)
//   mlp        x[batch, 768] -> dot w1[768, 3072] + b1 -> gelu -> dot w2 + b2 -> + x ->
//              layer_norm from primitives (mean, sub, mul, mean, + eps, rsqrt, mul, * gamma,
//              + beta); batch 64 and 256. Peer: the nax::jit MLP's body run eagerly on typed
//              tensors (nax::dot, fused expressions, nax::layer_norm: the kernels nax::jit runs;
//              nax::jit itself is not on this branch)
//   softmax    x[4096, 1024] -> exp(x - reduce_max) / sum, along the rows; peer: the graph's
//              softmax op (the direct kernel)
//   layernorm  x[4096, 1024] -> layer_norm from primitives; peer: the graph's layer_norm op
//   rmsnorm    x[4096, 1024] -> x * rsqrt(mean(x * x) + eps) * gamma; peer: the graph's
//              layer_norm op (no rms_norm op: the same traffic)
//
//   bench_fusion [--reps N] [--threads 1,2] [--ops chain6,chain12,mlp,softmax,layernorm,rmsnorm]
//
// Warm: each sample is a batch of calls lasting ~0.2 s; the chains' 192 MiB of operands do not
// fit in the 105 MiB L3 anyway. Medians over interleaved samples; the load average is printed
// before and after each table.
#include "harness.hpp"  // first: nax, then the peers (see there)

#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

namespace {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

template <class F, class V>
variant local(std::string name, kind role, double bytes, F f, V verify) {
  variant v;
  v.name = std::move(name);
  v.role = role;
  v.bytes = bytes;
  v.time_calls = [f](std::size_t calls) mutable { return time_local(f, calls); };
  v.verify = std::move(verify);
  return v;
}

std::vector<dyn_tensor> make_outputs(nax::executable& ex, std::span<const dyn_tensor> in) {
  std::vector<dyn_tensor> out = ex.run(in);
  return out;
}

std::string steps_of(const nax::executable& ex) {
  std::string r;
  for (const g::program_step& s : ex.program().steps) {
    if (!r.empty()) r += ", ";
    r += s.fused ? std::string(g::name(s.fused->kind)) : std::string(g::name(s.kind()));
  }
  return r;
}

void table(const char* title, std::vector<variant>& vs, int reps) {
  measure(vs, reps, 0.2, false);
  std::printf("\n### %s\n\n", title);
  print_table(vs, 0, {});
  std::printf("load avg:   %s (after)\n", load_average().c_str());
}

// --- chains -------------------------------------------------------------------------------------

using N = nax::axis<"n">;

template <class X>
auto chain6(const X& x, const X& z) {
  return tanh((x * 1.5f + z) * 0.5f - 0.25f) * x;
}
template <class X>
auto chain12(const X& x, const X& z) {
  return chain6(x, z) + sigmoid(z) * 0.3f - abs(x) * 0.2f + 0.1f;
}

double ref6(double x, double z) { return std::tanh((x * 1.5 + z) * 0.5 - 0.25) * x; }
double ref12(double x, double z) {
  return ref6(x, z) + 1 / (1 + std::exp(-z)) * 0.3 - std::abs(x) * 0.2 + 0.1;
}

void section_chains(const options& o, bool twelve) {
  const std::size_t n = o.n ? o.n : std::size_t{16} << 20;
  std::printf("\n## %s: %s over %zu floats\n", twelve ? "chain12" : "chain6",
              twelve ? "chain6 + sigmoid(z) * 0.3 - abs(x) * 0.2 + 0.1 (12 ops)"
                     : "tanh((x * 1.5 + z) * 0.5 - 0.25) * x (6 ops)",
              n);
  nax::tensor<float, N> x{N(n)}, z{N(n)}, out{N(n)};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uni(-2.f, 2.f);
  for (std::size_t i = 0; i < n; ++i) {
    x.data()[i] = uni(rng);
    z.data()[i] = uni(rng);
  }
  std::vector<float> ref(n);
  for (std::size_t i = 0; i < n; ++i)
    ref[i] = static_cast<float>(twelve ? ref12(x.data()[i], z.data()[i])
                                       : ref6(x.data()[i], z.data()[i]));

  g::builder b;
  auto gx = b.parameter("x", shape::make(dtype::f32, {"n"}));
  auto gz = b.parameter("z", shape::make(dtype::f32, {"n"}));
  const g::value y = twelve ? chain12(gx, gz) : chain6(gx, gz);
  g::compile_options interpreted, native;
  interpreted.native.policy = g::native_policy::off;
  native.native.policy = g::native_policy::eager;
  auto fused = g::compile(b, {y}, interpreted);
  auto compiled = g::compile(b, {y}, native);
  g::compile_options unfused = interpreted;
  unfused.fusion = false;
  auto plain = g::compile(b, {y}, unfused);
  std::printf("fused steps: %s; unfused: %zu steps\n", steps_of(fused).c_str(),
              plain.program().steps.size());
  const std::vector<dyn_tensor> in = {nax::to_dyn(x), nax::to_dyn(z)};
  std::vector<dyn_tensor> out_f = make_outputs(fused, in), out_p = make_outputs(plain, in);
  std::vector<dyn_tensor> out_n = make_outputs(compiled, in);
  std::printf("native tier: %zu group(s) native, %zu failed\n", compiled.stats().native_ready,
              compiled.stats().native_failed);
  const double bytes = 3.0 * n * sizeof(float);
  auto check = [&](const float* got) { return compare(got, ref.data(), n, 2e-5, 1.0); };
  auto typed = [&] {
    if (twelve)
      out = chain12(x, z);
    else
      out = chain6(x, z);
  };
  for (int t : o.threads) {
    nax::set_num_threads(t);
    std::vector<variant> vs;
    vs.push_back(local(
        "runtime graph, fused, native tier", kind::nax, bytes, [&] { compiled.run(in, out_n); },
        [&] {
          typed();
          compiled.run(in, out_n);
          if (std::memcmp(out_n[0].data(), out.data(), n * sizeof(float)) != 0)
            return std::string("not the typed expression's bits");
          return check(out_n[0].data<float>());
        }));
    vs.push_back(local(
        "runtime graph, fused, interpreter", kind::nax, bytes, [&] { fused.run(in, out_f); },
        [&] {
          fused.run(in, out_f);
          return check(out_f[0].data<float>());
        }));
    vs.push_back(local("typed expression (compile-time fusion)", kind::peer, bytes, typed, [&] {
      typed();
      return check(out.data());
    }));
    vs.push_back(local(
        "runtime graph, unfused", kind::baseline, bytes, [&] { plain.run(in, out_p); },
        [&] {
          plain.run(in, out_p);
          return check(out_p[0].data<float>());
        }));
    for (auto& v : vs) v.threads = std::to_string(t);
    table(cat(twelve ? "chain12" : "chain6", ", ", std::to_string(t), " thread(s)").c_str(), vs,
          o.reps);
  }
}

// --- MLP ----------------------------------------------------------------------------------------

using B = nax::axis<"batch">;
using D = nax::axis<"d", 768>;
using F = nax::axis<"f", 3072>;

g::value layer_norm_primitives(g::builder& b, g::value x, g::value gamma, g::value beta,
                               const char* axis) {
  auto mu = g::mean(x, {axis});
  auto d = x - mu;
  auto var = g::mean(d * d, {axis});
  return d * g::rsqrt(var + b.constant(1e-5)) * gamma + beta;
}

void section_mlp(const options& o) {
  std::printf(
      "\n## mlp: x[batch, 768] -> dot w1[768, 3072] + b1 -> gelu -> dot w2 + b2 -> + x -> "
      "layer_norm (from primitives)\n");
  g::builder b;
  const dim d = dim::named("d", 768), f = dim::named("f", 3072);
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", d}));
  auto w1 = b.parameter("w1", shape::make(dtype::f32, {d, f}));
  auto b1 = b.parameter("b1", shape::make(dtype::f32, {f}));
  auto w2 = b.parameter("w2", shape::make(dtype::f32, {f, d}));
  auto b2 = b.parameter("b2", shape::make(dtype::f32, {d}));
  auto gamma = b.parameter("gamma", shape::make(dtype::f32, {d}));
  auto beta = b.parameter("beta", shape::make(dtype::f32, {d}));
  auto h = g::gelu(g::dot_general(x, w1, {{1, 0}}) + b1);
  auto r = g::dot_general(h, w2, {{1, 0}}) + b2 + x;
  auto y = layer_norm_primitives(b, r, gamma, beta, "d");
  auto fused = g::compile(b, {y});
  auto plain = g::compile(b, {y}, {.fusion = false});
  std::printf("fused steps: %s; unfused: %zu steps\n", steps_of(fused).c_str(),
              plain.program().steps.size());

  std::mt19937 rng(2);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  auto fill = [&](float* p, std::size_t n, float scale) {
    for (std::size_t i = 0; i < n; ++i) p[i] = uni(rng) * scale;
  };
  nax::tensor<float, D, F> tw1;
  nax::tensor<float, F> tb1;
  nax::tensor<float, F, D> tw2;
  nax::tensor<float, D> tb2, tg, tbe;
  fill(tw1.data(), tw1.size(), 0.05f);
  fill(tb1.data(), tb1.size(), 0.1f);
  fill(tw2.data(), tw2.size(), 0.03f);
  fill(tb2.data(), tb2.size(), 0.1f);
  fill(tg.data(), tg.size(), 1.f);
  fill(tbe.data(), tbe.size(), 0.5f);
  for (std::size_t m : {std::size_t{64}, std::size_t{256}}) {
    nax::tensor<float, B, D> tx{B(m)};
    fill(tx.data(), tx.size(), 1.f);
    const std::vector<dyn_tensor> in = {nax::to_dyn(tx),  nax::to_dyn(tw1), nax::to_dyn(tb1),
                                        nax::to_dyn(tw2), nax::to_dyn(tb2), nax::to_dyn(tg),
                                        nax::to_dyn(tbe)};
    std::vector<dyn_tensor> out_f = make_outputs(fused, in), out_p = make_outputs(plain, in);
    nax::tensor<float, B, D> typed_out{B(m)};
    auto typed = [&] {
      auto th = nax::eval(nax::gelu(nax::dot<D>(tx, tw1) + tb1));
      typed_out = nax::layer_norm<D>(nax::dot<F>(th, tw2) + tb2 + tx, tg, tbe, 1e-5f);
    };
    // The reference: the unfused graph (checked against the double reference in the tests).
    nax::set_num_threads(2);
    plain.run(in, out_p);
    std::vector<float> ref(out_p[0].data<float>(), out_p[0].data<float>() + out_p[0].size());
    auto check = [&](const float* got) { return compare(got, ref.data(), ref.size(), 1e-3, 1.0); };
    const double flops = 2.0 * 2.0 * static_cast<double>(m) * 768 * 3072;
    for (int t : o.threads) {
      nax::set_num_threads(t);
      std::vector<variant> vs;
      vs.push_back(local(
          "runtime graph, fused", kind::nax, 0, [&] { fused.run(in, out_f); },
          [&] {
            fused.run(in, out_f);
            return check(out_f[0].data<float>());
          }));
      vs.push_back(local("typed eager (nax::jit's kernels)", kind::peer, 0, typed, [&] {
        typed();
        return check(typed_out.data());
      }));
      vs.push_back(local(
          "runtime graph, unfused", kind::baseline, 0, [&] { plain.run(in, out_p); },
          [&] {
            plain.run(in, out_p);
            return check(out_p[0].data<float>());
          }));
      for (auto& v : vs) v.threads = std::to_string(t);
      table(cat("mlp, batch ", std::to_string(m), ", ", std::to_string(t), " thread(s)").c_str(),
            vs, o.reps);
      for (const auto& v : vs)
        std::printf("  %s: %.1f GFLOP/s\n", v.name.c_str(), flops / v.median * 1e-9);
    }
  }
}

// --- softmax and layer_norm from primitives -----------------------------------------------------

enum class row_op { softmax, layer_norm, rms_norm };

const char* name(row_op op) {
  return op == row_op::softmax ? "softmax" : op == row_op::layer_norm ? "layer_norm" : "rms_norm";
}

void section_rows(const options& o, row_op op) {
  const bool softmax = op == row_op::softmax;
  const std::size_t rows = o.rows ? o.rows : 4096, cols = o.n ? o.n : 1024;
  std::printf("\n## %s from primitives: x[%zu, %zu] along the rows\n", name(op), rows, cols);
  g::builder b;
  const dim c = dim::named("col", cols);
  auto x = b.parameter("x", shape::make(dtype::f32, {"row", c}));
  auto gamma = b.parameter("gamma", shape::make(dtype::f32, {c}));
  auto beta = b.parameter("beta", shape::make(dtype::f32, {c}));
  g::value prim, direct;
  if (softmax) {
    auto e = g::exp(x - g::reduce_max(x, {"col"}));
    prim = e / g::sum(e, {"col"});
    direct = g::softmax(x, "col");
  } else if (op == row_op::layer_norm) {
    prim = layer_norm_primitives(b, x, gamma, beta, "col");
    direct = g::layer_norm(x, gamma, beta, "col", 1e-5);
  } else {
    // RMSNorm as Llama writes it; the graph has no rms_norm op: the peer is its layer_norm op,
    // which reads and writes as much (and subtracts a mean besides).
    prim = x * g::rsqrt(g::mean(x * x, {"col"}) + b.constant(1e-5)) * gamma;
    direct = g::layer_norm(x, gamma, beta, "col", 1e-5);
  }
  auto fused = g::compile(b, {prim});
  auto plain = g::compile(b, {prim}, {.fusion = false});
  auto kernel = g::compile(b, {direct});
  std::printf("fused steps: %s; unfused: %zu steps; direct: %s\n", steps_of(fused).c_str(),
              plain.program().steps.size(), steps_of(kernel).c_str());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uni(-3.f, 3.f);
  std::vector<dyn_tensor> in = {dyn_tensor(nax::shape(dtype::f32, {dim::named("row", rows), c})),
                                dyn_tensor(nax::shape(dtype::f32, {c})),
                                dyn_tensor(nax::shape(dtype::f32, {c}))};
  for (auto& t : in)
    for (std::size_t i = 0; i < t.size(); ++i) t.data<float>()[i] = uni(rng);
  std::vector<dyn_tensor> out_f = make_outputs(fused, in), out_p = make_outputs(plain, in),
                          out_k = make_outputs(kernel, in);
  nax::set_num_threads(2);
  kernel.run(in, out_k);
  plain.run(in, out_p);
  // The reference: the direct kernel, or for RMSNorm (no such op) the unfused primitives.
  const dyn_tensor& r = op == row_op::rms_norm ? out_p[0] : out_k[0];
  std::vector<float> ref(r.data<float>(), r.data<float>() + r.size());
  // The primitives round differently from the kernel (a float mean of squares): 1e-3 of 1e-2.
  auto check = [&](const float* got) { return compare(got, ref.data(), ref.size(), 1e-3, 1e-2); };
  const double bytes = 2.0 * rows * cols * sizeof(float);
  for (int t : o.threads) {
    nax::set_num_threads(t);
    std::vector<variant> vs;
    vs.push_back(local(
        "runtime graph, fused", kind::nax, bytes, [&] { fused.run(in, out_f); },
        [&] {
          fused.run(in, out_f);
          return check(out_f[0].data<float>());
        }));
    vs.push_back(local(
        op == row_op::rms_norm ? "graph's layer_norm op (peer)" : "direct kernel (graph op)",
        kind::peer, bytes, [&] { kernel.run(in, out_k); },
        [&] {
          kernel.run(in, out_k);
          // (For RMSNorm the peer computes another function: its result is not compared.)
          return op == row_op::rms_norm ? std::string() : check(out_k[0].data<float>());
        }));
    vs.push_back(local(
        "runtime graph, unfused", kind::baseline, bytes, [&] { plain.run(in, out_p); },
        [&] {
          plain.run(in, out_p);
          return check(out_p[0].data<float>());
        }));
    for (auto& v : vs) v.threads = std::to_string(t);
    table(cat(name(op), ", ", std::to_string(t), " thread(s)").c_str(), vs, o.reps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NAX_NATIVE", "off", 0);  // the graphs that do not choose a policy: the interpreter
  options o = parse(argc, argv);
  if (o.reps == 15) o.reps = 7;  // the harness's default is for longer runs
  if (o.ops.empty()) o.ops = {"chain6", "chain12", "mlp", "softmax", "layernorm", "rmsnorm"};
  print_header("# bench_fusion: runtime fusion (issue 6)", "not used");
  auto wants = [&](const char* op) {
    return std::find(o.ops.begin(), o.ops.end(), op) != o.ops.end();
  };
  if (wants("chain6")) section_chains(o, false);
  if (wants("chain12")) section_chains(o, true);
  if (wants("mlp")) section_mlp(o);
  if (wants("softmax")) section_rows(o, row_op::softmax);
  if (wants("layernorm")) section_rows(o, row_op::layer_norm);
  if (wants("rmsnorm")) section_rows(o, row_op::rms_norm);
  return 0;
}
