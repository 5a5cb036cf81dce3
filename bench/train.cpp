// Training with nax: one step (forward, backward, AdamW update of every weight) against PyTorch
// eager (loss.backward(), torch.optim.AdamW) and against nax's forward alone, on 1 and 2 threads:
//
//   mlp          the MLP block of bench/mlp_block.hpp (768 -> 3072 -> 768, layer_norm), a squared
//                error against a target, batch 32 and 256
//   transformer  the encoder block of examples/transformer_block.hpp, batch 8 x seq 128, the
//                mean of sum(y^2)
//   build        grad and compile of a 1000-node forward graph; the specialization of the
//                combined graph on a cache miss
//
// Before timing, nax's gradients are compared with PyTorch's on the same weights and data.
//
//   bench_train [--reps N] [--threads 1,2] [--ops mlp,transformer,build] [--trace PATH]
//
//   --trace: one step of the MLP at batch 32 on 1 thread recorded by nax::trace (Chrome JSON)

#include "harness.hpp"  // first: nax, then the peers (see there)

#include <chrono>
#include <tuple>

#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/jit/value_and_grad.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/trace.hpp>
#include <nax/typed/optim.hpp>

#include "../examples/transformer_block.hpp"
#include "mlp_block.hpp"

namespace {

bool wanted(const options& o, const char* section) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), section) != o.ops.end();
}

std::string ms(double s) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f", s * 1e3);
  return s > 0 ? t : "-";
}
std::string ratio(double a, double b, double target = 0, bool at_most = false) {
  if (a <= 0 || b <= 0) return "-";
  char t[48];
  const double r = a / b;
  const bool missed = target > 0 && (at_most ? r > target : r < target);
  std::snprintf(t, sizeof t, "%.2fx%s", r, missed ? " MISSED" : "");
  return t;
}

// The largest |a - b| / (1e-3 + max |b|) over a gradient (relative to its own scale).
double grad_error(const float* a, const float* b, std::size_t n) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) scale = std::max(scale, double(std::abs(b[i])));
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  return worst / (1e-3 + scale);
}

// Applies opt to every (weight, gradient, state) of the tuples.
template <class Opt, class W, class G, class S>
void update_all(const Opt& opt, W& weights, const G& grads, S& states) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (opt.step(std::get<I>(weights), std::get<I>(grads), std::get<I>(states)), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<G>>{});
}

template <class Opt, class W>
auto init_all(const Opt& opt, const W& weights) {
  return std::apply([&](const auto&... w) { return std::tuple(opt.init(w)...); }, weights);
}

std::string sci(double v) {
  char t[32];
  std::snprintf(t, sizeof t, "%.1e", v);
  return t;
}

std::string loss_ok(double v) { return std::isfinite(v) ? "" : "the loss is not finite"; }

// --- mlp -------------------------------------------------------------------------------------

const auto mlp_loss = [](auto x, auto target, auto w1, auto b1, auto w2, auto b2, auto gamma,
                         auto beta) {
  auto e = jit_mlp_block(x, w1, b1, w2, b2, gamma, beta) - target;
  return nax::mean<jit_batch>(nax::sum<jit_d>(e * e));
};

std::string trace_path;  // --trace PATH: one traced step of the MLP at batch 32 on 1 thread

void section_mlp(const options& o, torch_process& torch) {
  std::printf(
      "\n## 1. MLP block: one training step (loss = mean over batch of sum (y - target)^2)\n\n"
      "step: nax::value_and_grad + nax::optim::adamw on the 6 weights; forward: the loss alone "
      "under nax::jit; PyTorch: zero_grad, forward, backward, AdamW step (torch.optim.AdamW).\n");
  auto inputs = std::tuple(nax::data<float, jit_batch, jit_d>("x"),
                           nax::data<float, jit_batch, jit_d>("target"),
                           nax::input<float, jit_d, jit_f>("w1"), nax::input<float, jit_f>("b1"),
                           nax::input<float, jit_f, jit_d>("w2"), nax::input<float, jit_d>("b2"),
                           nax::input<float, jit_d>("gamma"), nax::input<float, jit_d>("beta"));
  auto step =
      std::apply([](const auto&... in) { return nax::value_and_grad(mlp_loss, in...); }, inputs);
  auto forward = std::apply([](const auto&... in) { return nax::jit(mlp_loss, in...); }, inputs);
  const nax::optim::adamw opt{.lr = 1e-3};
  if (torch.ok()) torch.must("param lr 0.001"), torch.must("param weight_decay 0.01");

  struct row {
    std::size_t m;
    int threads;
    double step, forward, torch, error, update, copy;
    std::size_t saved, arena;
  };
  // The update reads w, g, m, v and writes w, m, v: 7 floats per parameter.
  constexpr std::size_t params = 2 * D * F + F + 3 * D, update_bytes = 7 * params * sizeof(float);
  using n_ax = nax::axis<"n">;
  const std::size_t copy_floats = update_bytes / (2 * sizeof(float));  // read + write: same bytes
  nax::tensor<float, n_ax> copy_from = nax::full<float, n_ax>(0.5f, n_ax(copy_floats));
  nax::tensor<float, n_ax> copy_to{n_ax(copy_floats)};
  std::vector<row> rows;
  for (std::size_t m : {32u, 256u}) {
    auto w = std::tuple(nax::uniform<float, jit_d, jit_f>(nax::rng{3, 1}, -0.036, 0.036),
                        nax::uniform<float, jit_f>(nax::rng{3, 2}, -0.1, 0.1),
                        nax::uniform<float, jit_f, jit_d>(nax::rng{3, 3}, -0.018, 0.018),
                        nax::uniform<float, jit_d>(nax::rng{3, 4}, -0.1, 0.1),
                        nax::uniform<float, jit_d>(nax::rng{3, 5}, 0.9, 1.1),
                        nax::uniform<float, jit_d>(nax::rng{3, 6}, -0.1, 0.1));
    auto& w1 = std::get<0>(w);
    auto& b1 = std::get<1>(w);
    auto& w2 = std::get<2>(w);
    auto& b2 = std::get<3>(w);
    auto& gamma = std::get<4>(w);
    auto& beta = std::get<5>(w);
    const auto x = nax::uniform<float, jit_batch, jit_d>(nax::rng{3, 7}, -1, 1, jit_batch(m));
    const auto target = nax::uniform<float, jit_batch, jit_d>(nax::rng{3, 8}, -1, 1, jit_batch(m));
    double error = -1;
    if (torch.ok()) {  // the gradients, on the same weights and data
      std::vector<float> w1t(D * F), w2t(F * D);
      for (std::size_t i = 0; i < D; ++i)
        for (std::size_t j = 0; j < F; ++j) {
          w1t[j * D + i] = w1(i, j);
          w2t[i * F + j] = w2(j, i);
        }
      torch.load("w1t", w1t.data(), {F, D});
      torch.load("b1", b1.data(), {F});
      torch.load("w2t", w2t.data(), {D, F});
      torch.load("b2", b2.data(), {D});
      torch.load("gamma", gamma.data(), {D});
      torch.load("beta", beta.data(), {D});
      torch.load("x", x.data(), {m, D});
      torch.load("target", target.data(), {m, D});
      torch.must(cat("param eps ", std::to_string(ln_eps)));
      torch.must("threads 1");
      const std::vector<float> theirs = torch.result("mlp_grads", 2 * D * F + F + 3 * D);
      auto [loss, g] = step(x, target, w1, b1, w2, b2, gamma, beta);
      std::vector<float> ours;
      const auto& g1 = std::get<0>(g);
      const auto& gb1 = std::get<1>(g);
      const auto& g2 = std::get<2>(g);
      const auto& gb2 = std::get<3>(g);
      const auto& gg = std::get<4>(g);
      const auto& gbe = std::get<5>(g);
      for (std::size_t j = 0; j < F; ++j)  // torch's [out, in] layout
        for (std::size_t i = 0; i < D; ++i) ours.push_back(g1(i, j));
      ours.insert(ours.end(), gb1.data(), gb1.data() + F);
      for (std::size_t i = 0; i < D; ++i)
        for (std::size_t j = 0; j < F; ++j) ours.push_back(g2(j, i));
      for (const auto* t : {&gb2, &gg, &gbe}) ours.insert(ours.end(), t->data(), t->data() + D);
      error = grad_error(ours.data(), theirs.data(), ours.size());
      std::printf(
          "\nbatch %zu: gradients, nax against PyTorch: largest difference %.2e of the "
          "largest gradient\n",
          m, error);
    }
    auto states = init_all(opt, w);
    if (!trace_path.empty() && m == 32) {
      nax::set_num_threads(1);
      (void)step(x, target, w1, b1, w2, b2, gamma, beta);  // specialized before the trace
      nax::trace tr;
      (void)step(x, target, w1, b1, w2, b2, gamma, beta);
      tr.stop();
      tr.write_chrome_json(trace_path);
      std::printf("trace of one step (batch 32, 1 thread, %zu steps) in %s\n",
                  step.executable().program().steps.size(), trace_path.c_str());
    }
    auto fixed = step(x, target, w1, b1, w2, b2, gamma, beta).grads;  // for "update"
    for (int t : o.threads) {
      nax::set_num_threads(t);
      double last = 0;
      std::vector<variant> vs;
      vs.push_back(timed(
          "nax step", kind::nax, t,
          [&] {
            auto [loss, g] = step(x, target, w1, b1, w2, b2, gamma, beta);
            update_all(opt, w, g, states);
            last = loss.data()[0];
          },
          [&] {
            auto [loss, g] = step(x, target, w1, b1, w2, b2, gamma, beta);
            return loss_ok(loss.data()[0]);
          }));
      vs.push_back(timed(
          "nax forward", kind::baseline, t,
          [&] { do_not_optimize(forward(x, target, w1, b1, w2, b2, gamma, beta)); },
          [&] { return loss_ok(forward(x, target, w1, b1, w2, b2, gamma, beta).data()[0]); }));
      if (torch.ok()) {
        variant v = torch_variant(torch, "PyTorch step", "mlp_train", t, 0, 1,
                                  [](const std::vector<float>& l) { return loss_ok(l[0]); });
        vs.push_back(std::move(v));
      }
      vs.push_back(timed(
          "nax update", kind::baseline, t, [&] { update_all(opt, w, fixed, states); },
          [] { return std::string(); }));
      vs.push_back(timed(
          "copy of the update's bytes", kind::baseline, t,
          [&] {
            copy_to = copy_from;
            do_not_optimize(copy_to.data()[copy_floats - 1]);
          },
          [&] { return copy_to = copy_from, copy_to.data()[0] == 0.5f ? "" : "copy differs"; }));
      measure(vs, o.reps, 0.2, false);
      const nax::bindings bind{{"batch", m}};
      const auto spec = step.executable().cached(bind);
      const auto median_of = [&](const char* name) {
        for (const variant& v : vs)
          if (v.name == name) return v.median;
        return 0.0;
      };
      rows.push_back({m, t, median_of("nax step"), median_of("nax forward"),
                      median_of("PyTorch step"), error, median_of("nax update"),
                      median_of("copy of the update's bytes"), spec ? spec->saved_bytes : 0,
                      spec ? spec->arena_bytes : 0});
      std::printf("batch %zu, %d thread%s:", m, t, t > 1 ? "s" : "");
      for (const auto& v : vs)
        std::printf(" %s %.3f ms (best %.3f);", v.name.c_str(), v.median * 1e3, v.best * 1e3);
      std::printf(" loss %.4f\n", last);
      std::fflush(stdout);
    }
  }
  std::printf(
      "\n| batch | threads | nax step ms | nax forward ms | PyTorch step ms | PyTorch / nax "
      "(target >= 1.3) | backward + update / forward (target <= 2.5) | "
      "backward / forward | update / forward | update ms | copy of its bytes ms | copy / update "
      "(1 = bandwidth) | activations kept MiB | arena MiB | gradient difference from PyTorch |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
      "| ---: | ---: | ---: |\n");
  for (const row& r : rows)
    std::printf(
        "| %zu | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n", r.m,
        r.threads, ms(r.step).c_str(), ms(r.forward).c_str(), ms(r.torch).c_str(),
        ratio(r.torch, r.step, 1.3).c_str(),
        ratio(r.step - r.forward, r.forward, 2.5, true).c_str(),
        ratio(r.step - r.forward - r.update, r.forward).c_str(), ratio(r.update, r.forward).c_str(),
        ms(r.update).c_str(), ms(r.copy).c_str(), ratio(r.copy, r.update).c_str(),
        double(r.saved) / (1 << 20), double(r.arena) / (1 << 20),
        r.error >= 0 ? sci(r.error).c_str() : "-");
  std::printf(
      "\nupdate: AdamW over the %zu parameters, %.1f MiB moved per step (w, g, m, v read; w, "
      "m, v written); copy: a nax assignment of a tensor of the same bytes\n",
      params, double(update_bytes) / (1 << 20));
}

// --- transformer -------------------------------------------------------------------------------

const auto encoder_loss = [](auto x, auto g1, auto be1, auto wq, auto wk, auto wv, auto wo, auto g2,
                             auto be2, auto w1, auto b1, auto w2, auto b2) {
  auto y = encoder::block(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2);
  return nax::mean<encoder::batch, encoder::seq>(nax::sum<encoder::model>(y * y));
};

void section_transformer(const options& o, torch_process& torch) {
  using namespace encoder;
  std::printf(
      "\n## 2. Transformer encoder block: one training step (loss = mean over batch and seq of "
      "sum y^2), batch 8 x seq 128\n");
  auto inputs =
      std::tuple(nax::data<float, batch, seq, model>("x"), nax::input<float, model>("ln1.gamma"),
                 nax::input<float, model>("ln1.beta"), nax::input<float, model, attn>("wq"),
                 nax::input<float, model, attn>("wk"), nax::input<float, model, attn>("wv"),
                 nax::input<float, attn, model>("wo"), nax::input<float, model>("ln2.gamma"),
                 nax::input<float, model>("ln2.beta"), nax::input<float, model, ff>("w1"),
                 nax::input<float, ff>("b1"), nax::input<float, ff, model>("w2"),
                 nax::input<float, model>("b2"));
  auto step = std::apply([](const auto&... in) { return nax::value_and_grad(encoder_loss, in...); },
                         inputs);
  auto forward =
      std::apply([](const auto&... in) { return nax::jit(encoder_loss, in...); }, inputs);
  weights w(2026);
  auto ws = std::tie(w.g1, w.be1, w.wq, w.wk, w.wv, w.wo, w.g2, w.be2, w.w1, w.b1, w.w2, w.b2);
  const auto x =
      nax::normal<float, batch, seq, model>(nax::rng{7, 1}, 0.0f, 1.0f, batch(8), seq(128));
  const nax::optim::adamw opt{.lr = 1e-3};
  double error = -1;
  if (torch.ok()) {
    const std::size_t M = model::static_extent, A = attn::static_extent, F = ff::static_extent;
    torch.load("ln1_g", w.g1.data(), {M});
    torch.load("ln1_b", w.be1.data(), {M});
    torch.load("wq", w.wq.data(), {M, A});
    torch.load("wk", w.wk.data(), {M, A});
    torch.load("wv", w.wv.data(), {M, A});
    torch.load("wo", w.wo.data(), {A, M});
    torch.load("ln2_g", w.g2.data(), {M});
    torch.load("ln2_b", w.be2.data(), {M});
    torch.load("w1", w.w1.data(), {M, F});
    torch.load("b1", w.b1.data(), {F});
    torch.load("w2", w.w2.data(), {F, M});
    torch.load("b2", w.b2.data(), {M});
    torch.load("x", x.data(), {8, 128, M});
    torch.must(cat("param heads ", std::to_string(heads::static_extent)));
    torch.must(cat("param eps ", std::to_string(epsilon)));
    torch.must(cat("param scale ", std::to_string(scale)));
    torch.must("param lr 0.001");
    torch.must("param weight_decay 0.01");
    torch.must("threads 1");
    std::size_t total = 0;
    std::apply([&](const auto&... t) { ((total += t.size()), ...); }, ws);
    const std::vector<float> theirs = torch.result("encoder_grads", total);
    auto [loss, g] = std::apply([&](const auto&... t) { return step(x, t...); }, ws);
    std::vector<float> ours;
    std::apply(
        [&](const auto&... t) { ((ours.insert(ours.end(), t.data(), t.data() + t.size())), ...); },
        g);
    error = grad_error(ours.data(), theirs.data(), ours.size());
    std::printf(
        "\ngradients, nax against PyTorch: largest difference %.2e of the largest gradient\n",
        error);
  }
  auto states = init_all(opt, ws);
  std::printf(
      "\n| threads | nax step ms | nax forward ms | PyTorch step ms | PyTorch / nax (target >= "
      "1.3) | backward + update / forward | activations kept MiB |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int t : o.threads) {
    nax::set_num_threads(t);
    std::vector<variant> vs;
    vs.push_back(timed(
        "nax step", kind::nax, t,
        [&] {
          auto [loss, g] = std::apply([&](const auto&... p) { return step(x, p...); }, ws);
          update_all(opt, ws, g, states);
        },
        [&] {
          auto [loss, g] = std::apply([&](const auto&... p) { return step(x, p...); }, ws);
          return loss_ok(loss.data()[0]);
        }));
    vs.push_back(timed(
        "nax forward", kind::baseline, t,
        [&] {
          do_not_optimize(std::apply([&](const auto&... p) { return forward(x, p...); }, ws));
        },
        [&] {
          return loss_ok(
              std::apply([&](const auto&... p) { return forward(x, p...); }, ws).data()[0]);
        }));
    if (torch.ok())
      vs.push_back(torch_variant(torch, "PyTorch step", "encoder_train", t, 0, 1,
                                 [](const std::vector<float>& l) { return loss_ok(l[0]); }));
    measure(vs, o.reps, 0.2, false);
    const auto spec = step.executable().cached({{"batch", 8}, {"seq", 128}});
    const double torch_ms = vs.size() > 2 ? vs[2].median : 0;
    std::printf("| %d | %s | %s | %s | %s | %s | %.2f |\n", t, ms(vs[0].median).c_str(),
                ms(vs[1].median).c_str(), ms(torch_ms).c_str(),
                ratio(torch_ms, vs[0].median, 1.3).c_str(),
                ratio(vs[0].median - vs[1].median, vs[1].median).c_str(),
                spec ? double(spec->saved_bytes) / (1 << 20) : 0.0);
    std::fflush(stdout);
  }
  (void)error;
}

// --- build: grad and compile of a 1000-node graph; a miss ---------------------------------------

void section_build(const options& o) {
  namespace g = nax::graph;
  std::printf(
      "\n## 3. Building and compiling gradients, specializing on a miss\n\n"
      "A forward graph of 100 layers x[batch, 64] -> tanh(x . w_i + b_i) * 0.5 + x (1000 nodes "
      "with the parameters); grad by every w_i and b_i, then compile of loss + gradients; then "
      "the first run of a new binding (level 2).\n\n");
  const auto t0 = clock_type::now();
  g::builder b;
  const nax::dim d = nax::dim::named("d", 64), e = nax::dim::named("e", 64);
  g::value h = b.parameter("x", nax::shape::make(nax::dtype::f32, {"batch", d}));
  std::vector<g::value> params;
  for (int i = 0; i < 100; ++i) {
    const g::value w =
        b.parameter(cat("w", std::to_string(i)), nax::shape::make(nax::dtype::f32, {d, e}));
    const g::value bias =
        b.parameter(cat("b", std::to_string(i)), nax::shape::make(nax::dtype::f32, {e}));
    params.push_back(w);
    params.push_back(bias);
    const g::value y = g::tanh(g::dot_general(h, w, {{"d", "d"}}) + bias) * 0.5;
    h = g::rename(y, "e", "d") + h;
  }
  const g::value loss = g::mean(g::sum(h * h, {"d"}), {"batch"});
  const std::size_t forward_nodes = b.size();
  const auto t1 = clock_type::now();
  const std::vector<g::value> grads = g::grad(loss, params);
  const auto t2 = clock_type::now();
  std::vector<g::value> outs{loss};
  outs.insert(outs.end(), grads.begin(), grads.end());
  nax::executable ex = g::compile(b, outs);
  const auto t3 = clock_type::now();
  // Misses: the first run of each of reps new batch sizes; the median (the first one, with cold
  // caches and the allocator's first requests, printed apart).
  std::vector<double> misses;
  std::mt19937 rng(3);
  for (std::size_t k = 0; k < std::max<std::size_t>(o.reps, 3); ++k) {
    std::vector<nax::dyn_tensor> in;
    for (g::node_id i = 0; i < forward_nodes; ++i)
      if (b.at(i).kind() == g::op_kind::parameter) {
        nax::shape s = b.at(i).shape.resolve({{"batch", 16 + k}});
        in.emplace_back(s);
        std::uniform_real_distribution<float> u(-0.1f, 0.1f);
        for (std::size_t e = 0; e < in.back().size(); ++e) in.back().data<float>()[e] = u(rng);
      }
    (void)ex.run(in);
    misses.push_back(double(ex.stats().last_specialization_time.count()) * 1e-6);
  }
  const double first_miss_ms = misses.front();
  std::sort(misses.begin(), misses.end());
  const double miss_ms = misses[misses.size() / 2];
  auto msec = [](auto a, auto b2) {
    return std::chrono::duration<double, std::milli>(b2 - a).count();
  };
  std::printf(
      "| forward nodes | gradient nodes | steps compiled | building the forward ms | grad ms | "
      "compile ms | grad + compile (target < 50 ms) | specialization on a miss, median (target < 2 "
      "ms) "
      "| the first miss |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
      "| %zu | %zu | %zu | %.2f | %.2f | %.2f | %.2f ms%s | %.3f ms%s | %.3f ms |\n",
      forward_nodes, b.size() - forward_nodes, ex.program().steps.size(), msec(t0, t1),
      msec(t1, t2), msec(t2, t3), msec(t1, t3), msec(t1, t3) < 50 ? "" : " MISSED", miss_ms,
      miss_ms < 2 ? "" : " MISSED", first_miss_ms);
}

}  // namespace

int main(int argc, char** argv) {
  run_with_passive_omp_wait(argv);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--trace" && i + 1 < argc) {
      trace_path = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  options o = parse(static_cast<int>(args.size()), args.data());
  if (o.reps == 15) o.reps = 9;
  torch_process torch;
  const bool need_torch = wanted(o, "mlp") || wanted(o, "transformer");
  const std::string torch_info = need_torch ? start_torch(torch) : "not started";
  print_header("# train: one training step, nax against PyTorch eager", torch_info);
  if (wanted(o, "mlp")) section_mlp(o, torch);
  if (wanted(o, "transformer")) section_transformer(o, torch);
  if (wanted(o, "build")) section_build(o);
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
