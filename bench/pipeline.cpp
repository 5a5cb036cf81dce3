// Level 2's scheduling of an executable's steps, on 1 and 2 threads:
//
//   threads  the MLP block (bench/mlp_block.hpp) first run on 1 thread, then on 2: its
//            specialization follows the thread count of the run (before issue 16 it kept the
//            count it was made with), against one made on 2 threads from the start
//   mlp      the MLP block at batch 1, 64, 256, 4096: pipelined (the default: its chain run tile
//            by tile where that pays) vs unpipelined (level 2's schedule alone) vs steps one at a
//            time, nax::jit, OpenBLAS + OpenMP loops and PyTorch eager; the arena of each nax
//            variant
//   proj     three independent projections x[batch, P] . w[P, P], summed (q, k and v of
//            attention), P 256 and 768, batch 1 and 8: one step at a time vs side by side, against
//            OpenBLAS and PyTorch
//
//   trace    (only with --trace PATH) 20 runs of the projections (P = 256) at batch 64 on 2 threads
//            recorded by nax::trace, written to PATH as Chrome trace JSON (docs/runtime.md's
//            picture: scripts/trace_svg.py PATH out.svg --run 19)
//
//   pipeline (only with --trace-pipeline PATH) 3 runs of the MLP block, pipelined, at batch 4096
//            (or --n) on 2 threads, as Chrome trace JSON (docs/runtime.md's picture of a
//            pipeline: scripts/trace_svg.py PATH out.svg --run 2)
//
//   bench_pipeline [--reps N] [--threads 1,2] [--ops threads,mlp,proj] [--n batch] [--trace PATH]
//                  [--trace-pipeline PATH]
//
//   --n: the MLP at that batch only
#include "harness.hpp"  // first: nax, then the peers (see there)

#include <cerrno>
#include <memory>
#include <string>

#include <nax/graph/ops.hpp>
#include <nax/jit/jit.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/runtime/specialization.hpp>
#include <nax/runtime/trace.hpp>

#if NAX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename();
#endif

#include "mlp_block.hpp"

namespace {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;

bool wanted(const options& o, const char* section) {
  return o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), section) != o.ops.end();
}

template <class F>
variant local(std::string name, kind role, int threads, F body,
              std::function<std::string()> verify) {
  variant v;
  v.name = std::move(name);
  v.threads = std::to_string(threads);
  v.role = role;
  v.time_calls = [body](std::size_t calls) mutable {
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < calls; ++i) body();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
  };
  v.verify = std::move(verify);
  return v;
}

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return seconds > 0 ? text : "-";
}
std::string ratio(double a, double b, double target = 0) {
  if (a <= 0 || b <= 0) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.2fx%s", a / b, target > 0 && a / b < target ? " MISSED" : "");
  return text;
}
// A schedule ("0 1 | 2 | 3") in a Markdown table cell: its bars escaped.
std::string cell(const std::string& schedule) {
  std::string out = "`";
  for (char c : schedule) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out + "`";
}
std::string mib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", double(bytes) / double(1 << 20));
  return text;
}

const g::compile_options one_at_a_time{.parallel_steps = g::step_parallelism::off};

// --- threads: a specialization follows the run's thread count -----------------------------------

void section_threads(const options& o) {
  std::printf(
      "\n## 1. A binding first run on 1 thread, then on 2 (MLP block)\n\n"
      "made on 1: an executable (builder graph, steps one at a time) or a nax::jit function "
      "first called on 1 thread, then on 2. made on 2: a second one only ever called on 2. Both "
      "2-thread figures should match: the call on 2 threads specializes again for 2.\n\n"
      "| front end | batch | 1 thread ms | made on 1, run on 2 ms | made on 2, run on 2 ms | "
      "speed-up of 2 threads | made on 1 / made on 2 (target >= 0.95) |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  mlp_graph graph;
  std::mt19937 rng(11);
  auto first = g::compile(graph.b, {graph.out}, one_at_a_time);
  auto second = g::compile(graph.b, {graph.out}, one_at_a_time);
  auto jit_first = make_jit_mlp();
  auto jit_second = make_jit_mlp();
  const std::vector<dyn_tensor> weights = mlp_weights(first.program(), rng);
  const jit_weights jw = make_jit_weights(weights);
  for (std::size_t m : {1u, 64u, 192u}) {
    mlp_data d = make_mlp_data(first, weights, m, rng);
    const std::span<const dyn_tensor> ins(d.in);
    nax::tensor<float, jit_batch, jit_d> jx{jit_batch(m)};
    copy_into(jx, d.in[0]);
    // One front end: run(executable k) calls the first (k = 0) or the second; check(k) verifies.
    auto row = [&](const char* front, auto run, auto check) {
      nax::set_num_threads(1);
      std::vector<variant> one{local(
          "1 thread", kind::nax, 1, [&] { run(0); }, [&] { return check(0); })};
      measure(one, o.reps, 0.1, false);
      nax::set_num_threads(2);
      std::vector<variant> two{
          local(
              "made on 1", kind::nax, 2, [&] { run(0); }, [&] { return check(0); }),
          local(
              "made on 2", kind::baseline, 2, [&] { run(1); }, [&] { return check(1); })};
      measure(two, o.reps, 0.1, false);
      std::printf("| %s | %zu | %s | %s | %s | %s | %s |\n", front, m, ms(one[0].median).c_str(),
                  ms(two[0].median).c_str(), ms(two[1].median).c_str(),
                  ratio(one[0].median, two[0].median).c_str(),
                  ratio(two[1].median, two[0].median, 0.95).c_str());
      std::fflush(stdout);
    };
    nax::executable* exs[] = {&first, &second};
    row(
        "builder", [&](int k) { exs[k]->run(ins, d.out_nax); },
        [&](int k) {
          exs[k]->run(ins, d.out_nax);
          return check_mlp(d, d.out_nax[0].data<float>());
        });
    decltype(&jit_first) jits[] = {&jit_first, &jit_second};
    row(
        "nax::jit",
        [&](int k) {
          do_not_optimize((*jits[k])(jx, jw.w1, jw.b1, jw.w2, jw.b2, jw.gamma, jw.beta));
        },
        [&](int k) {
          const auto y = (*jits[k])(jx, jw.w1, jw.b1, jw.w2, jw.b2, jw.gamma, jw.beta);
          return check_mlp(d, y.data());
        });
  }
}

// --- mlp: one step at a time, the schedule, the pipeline, nax::jit, peers ---------------------

// What a specialization chose for its pipeline chains: "tile 512 x 8, 2 lanes" or "whole".
std::string pipeline_cell(const nax::runtime::specialization& s) {
  if (s.pipelines.empty()) return "whole";
  std::string out;
  for (const nax::runtime::pipeline& pl : s.pipelines) {
    char text[96];
    std::snprintf(text, sizeof text, "%stile %zu x %zu, %zu lane%s", out.empty() ? "" : "; ",
                  pl.tile, pl.tiles, pl.lanes, pl.lanes > 1 ? "s" : "");
    out += text;
  }
  return out;
}

void section_mlp(const options& o, torch_process& torch) {
  std::printf(
      "\n## 2. MLP block: x[batch, 768] -> dot w1 + b1 -> gelu -> dot w2 + b2 -> + x -> "
      "layer_norm\n\n"
      "pipelined: the default (level 1 finds the block's chain along batch; level 2 tiles it "
      "where its intermediates exceed L2 and there are two tiles per lane or more). "
      "unpipelined: compile_options{.pipeline = off} (level 2's schedule alone: this block is a "
      "chain, so it runs one step at a time). one at a time: also .parallel_steps = off. "
      "nax::jit: the typed lambda traced, default options. hand: cblas_sgemm/sgemv (OpenBLAS) + "
      "OpenMP loops. PyTorch: eager, inference_mode. Arena: the bytes one run needs for its "
      "intermediates, scratch and bookkeeping.\n");
  mlp_graph graph;
  std::mt19937 rng(11);
  auto seq = g::compile(graph.b, {graph.out}, one_at_a_time);
  auto flat = g::compile(graph.b, {graph.out}, {.pipeline = g::pipelining::off});
  auto piped = g::compile(graph.b, {graph.out});
  const std::vector<dyn_tensor> weights = mlp_weights(seq.program(), rng);
  if (torch.ok()) load_mlp_into_torch(torch, weights);
  auto jit_fn = make_jit_mlp();
  const jit_weights jw = make_jit_weights(weights);

  struct row {
    std::size_t m;
    int threads;
    double piped, flat, seq, jit, hand, torch;
    std::size_t arena_piped, arena_flat, arena_jit;
    std::string plan;
  };
  std::vector<row> rows;
  for (std::size_t m : {1u, 64u, 256u, 4096u}) {
    if (o.n && m != o.n) continue;
    mlp_data d = make_mlp_data(seq, weights, m, rng);
    if (torch.ok()) torch.load("x", d.p(0), {m, D});
    const std::span<const dyn_tensor> ins(d.in);
    nax::tensor<float, jit_batch, jit_d> jx{jit_batch(m)};
    copy_into(jx, d.in[0]);
    const nax::bindings bind{{"batch", m}};
    for (int t : o.threads) {
      nax::set_num_threads(t);
      auto run_check = [&d, ins](nax::executable& ex) {
        return [&d, &ex, ins] {
          std::fill_n(d.out_nax[0].data<float>(), d.out_nax[0].size(), std::nanf(""));
          ex.run(ins, d.out_nax);
          return check_mlp(d, d.out_nax[0].data<float>());
        };
      };
      std::vector<variant> vs;
      vs.push_back(local(
          "nax pipelined", kind::nax, t, [&] { piped.run(ins, d.out_nax); }, run_check(piped)));
      vs.push_back(local(
          "nax unpipelined", kind::baseline, t, [&] { flat.run(ins, d.out_nax); },
          run_check(flat)));
      vs.push_back(local(
          "nax one at a time", kind::baseline, t, [&] { seq.run(ins, d.out_nax); },
          run_check(seq)));
      vs.push_back(local(
          "nax::jit", kind::baseline, t,
          [&] { do_not_optimize(jit_fn(jx, jw.w1, jw.b1, jw.w2, jw.b2, jw.gamma, jw.beta)); },
          [&] {
            const auto y = jit_fn(jx, jw.w1, jw.b1, jw.w2, jw.b2, jw.gamma, jw.beta);
            return check_mlp(d, y.data());
          }));
#if NAX_BENCH_HAVE_OPENBLAS
      vs.push_back(local(
          "hand: OpenBLAS + loops", kind::peer, t, [&d, t] { hand_mlp(d, t); },
          [&d, t] {
            std::fill(d.out_hand.begin(), d.out_hand.end(), std::nanf(""));
            hand_mlp(d, t);
            return check_mlp(d, d.out_hand.data());
          }));
#endif
      if (torch.ok())
        vs.push_back(torch_variant(
            torch, "PyTorch eager", "mlp", t, 0, m * D,
            [&d](const std::vector<float>& got) { return check_mlp(d, got.data()); }));
      measure(vs, m >= 4096 ? std::min(o.reps, 5) : o.reps, 0.1, false);
      row r{m, t, 0, 0, 0, 0, 0, 0, 0, 0, 0, ""};
      for (const auto& v : vs) {
        if (v.name == "nax pipelined") r.piped = v.median;
        if (v.name == "nax unpipelined") r.flat = v.median;
        if (v.name == "nax one at a time") r.seq = v.median;
        if (v.name == "nax::jit") r.jit = v.median;
        if (v.name.starts_with("hand")) r.hand = v.median;
        if (v.name.starts_with("PyTorch")) r.torch = v.median;
      }
      r.arena_piped = piped.cached(bind)->arena_bytes;
      r.arena_flat = flat.cached(bind)->arena_bytes;
      r.arena_jit = jit_fn.executable().cached(bind)->arena_bytes;
      r.plan = pipeline_cell(*piped.cached(bind));
      rows.push_back(r);
      print_mlp_line(m, t, vs);
    }
  }
  std::printf(
      "\n| batch | threads | pipelined ms | unpipelined ms | one at a time ms | nax::jit ms | hand "
      "ms | PyTorch ms | unpipelined / pipelined (target >= 1.15 at 4096) | one at a time / "
      "unpipelined | hand / pipelined (target >= 1.0) | PyTorch / pipelined (target >= 1.2) | "
      "PyTorch / jit | arena MiB pipelined, unpipelined, jit | unpipelined / pipelined arena "
      "(target >= 4 at 4096) | pipeline |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
      "| --- | ---: | --- |\n");
  for (const row& r : rows) {
    const bool big = r.m >= 4096;
    std::printf(
        "| %zu | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s, %s | %s | %s "
        "|\n",
        r.m, r.threads, ms(r.piped).c_str(), ms(r.flat).c_str(), ms(r.seq).c_str(),
        ms(r.jit).c_str(), ms(r.hand).c_str(), ms(r.torch).c_str(),
        ratio(r.flat, r.piped, big ? 1.15 : 0).c_str(), ratio(r.seq, r.flat).c_str(),
        ratio(r.hand, r.piped, 1.0).c_str(), ratio(r.torch, r.piped, 1.2).c_str(),
        ratio(r.torch, r.jit).c_str(), mib(r.arena_piped).c_str(), mib(r.arena_flat).c_str(),
        mib(r.arena_jit).c_str(),
        ratio(double(r.arena_flat), double(r.arena_piped), big ? 4.0 : 0).c_str(), r.plan.c_str());
  }
}

// --- proj: independent projections side by side -------------------------------------------------

struct proj_graph {
  g::builder b;
  g::value out;
  explicit proj_graph(std::size_t P) {
    const dim d = dim::named("d", P), e = dim::named("e", P);
    auto x = b.parameter("x", nax::shape::make(dtype::f32, {dim("batch"), d}));
    std::vector<g::value> p;
    for (const char* w : {"wq", "wk", "wv"})
      p.push_back(
          g::dot_general(x, b.parameter(w, nax::shape::make(dtype::f32, {d, e})), {{"d", "d"}}));
    out = p[0] + p[1] + p[2];
  }
};

void hand_proj(const std::vector<dyn_tensor>& in, std::size_t m, std::size_t P, float* tmp,
               float* out, int threads) {
#if NAX_BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  const float* x = in[0].data<float>();
  for (int k = 0; k < 3; ++k) {
    float* c = k == 0 ? out : tmp + (k - 1) * m * P;
    const float* w = in[static_cast<std::size_t>(k) + 1].data<float>();
    if (m == 1)
      cblas_sgemv(CblasRowMajor, CblasTrans, int(P), int(P), 1.0f, w, int(P), x, 1, 0.0f, c, 1);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(P), int(P), 1.0f, x,
                  int(P), w, int(P), 0.0f, c, int(P));
  }
  const auto n = static_cast<std::ptrdiff_t>(m * P);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && n >= 65536)
  for (std::ptrdiff_t i = 0; i < n; ++i) out[i] += tmp[i] + tmp[n + i];
#else
  (void)in, (void)m, (void)P, (void)tmp, (void)out, (void)threads;
#endif
}

void section_proj(const options& o, torch_process& torch) {
  std::printf(
      "\n## 3. Three independent projections x[batch, P] . w[P, P], summed\n\n"
      "one at a time: the three products, then the sum, each on all threads it uses. scheduled: "
      "level 2 runs products side by side where its cost model finds it faster.\n");
  for (std::size_t P : {256u, 768u}) {
    proj_graph graph(P);
    auto seq = g::compile(graph.b, {graph.out}, one_at_a_time);
    auto sched = g::compile(graph.b, {graph.out});
    std::mt19937 rng(5);
    std::vector<dyn_tensor> weights;
    for (int k = 0; k < 3; ++k) {
      weights.emplace_back(nax::shape::make(dtype::f32, {dim::named("d", P), dim::named("e", P)}));
      std::uniform_real_distribution<float> dist(-0.036f, 0.036f);
      for (std::size_t i = 0; i < weights.back().size(); ++i)
        weights.back().data<float>()[i] = dist(rng);
    }
    if (torch.ok()) {
      torch.load("wq", weights[0].data<float>(), {P, P});
      torch.load("wk", weights[1].data<float>(), {P, P});
      torch.load("wv", weights[2].data<float>(), {P, P});
    }
    std::printf(
        "\n| P | batch | threads | scheduled ms | one at a time ms | hand ms | PyTorch ms | one "
        "at a time on 1 thread / scheduled (target >= 1.6 on 2) | one at a time / scheduled | "
        "hand / scheduled | PyTorch / scheduled | schedule |\n"
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (std::size_t m : {1u, 8u}) {
      std::vector<dyn_tensor> in;
      in.emplace_back(nax::shape::make(dtype::f32, {dim::named("batch", m), dim::named("d", P)}));
      std::uniform_real_distribution<float> dist(-1, 1);
      for (std::size_t i = 0; i < in[0].size(); ++i) in[0].data<float>()[i] = dist(rng);
      for (const auto& w : weights) in.push_back(w);
      std::vector<dyn_tensor> out{
          dyn_tensor(nax::shape::make(dtype::f32, {dim::named("batch", m), dim::named("e", P)}))};
      std::vector<float> tmp(2 * m * P), hand_out(m * P);
      // The reference: in double.
      std::vector<float> ref(m * P);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < P; ++j) {
          double s = 0;
          for (std::size_t k = 0; k < 3; ++k)
            for (std::size_t q = 0; q < P; ++q)
              s += double(in[0].data<float>()[i * P + q]) * in[k + 1].data<float>()[q * P + j];
          ref[i * P + j] = float(s);
        }
      if (torch.ok()) torch.load("x", in[0].data<float>(), {m, P});
      const std::span<const dyn_tensor> ins(in);
      double seq_on_one = 0;
      for (int t : o.threads) {
        nax::set_num_threads(t);
        auto run_check = [&, ins](nax::executable& ex) {
          return [&, ins] {
            ex.run(ins, out);
            return compare(out[0].data<float>(), ref.data(), ref.size(), 1e-4, 1.0);
          };
        };
        std::vector<variant> vs;
        vs.push_back(local(
            "nax scheduled", kind::nax, t, [&] { sched.run(ins, out); }, run_check(sched)));
        vs.push_back(local(
            "nax one at a time", kind::baseline, t, [&] { seq.run(ins, out); }, run_check(seq)));
#if NAX_BENCH_HAVE_OPENBLAS
        vs.push_back(local(
            "hand: OpenBLAS + loop", kind::peer, t,
            [&] { hand_proj(in, m, P, tmp.data(), hand_out.data(), t); },
            [&] {
              hand_proj(in, m, P, tmp.data(), hand_out.data(), t);
              return compare(hand_out.data(), ref.data(), ref.size(), 1e-4, 1.0);
            }));
#endif
        if (torch.ok())
          vs.push_back(torch_variant(
              torch, "PyTorch eager", "proj3", t, 0, m * P, [&](const std::vector<float>& got) {
                return compare(got.data(), ref.data(), ref.size(), 1e-4, 1.0);
              }));
        measure(vs, o.reps, 0.1, false);
        double hand = 0, pt = 0;
        for (const auto& v : vs) {
          if (v.name.starts_with("hand")) hand = v.median;
          if (v.name.starts_with("PyTorch")) pt = v.median;
        }
        if (t == 1) seq_on_one = vs[1].median;
        const nax::bindings bind{{"batch", m}};
        std::printf("| %zu | %zu | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", P, m, t,
                    ms(vs[0].median).c_str(), ms(vs[1].median).c_str(), ms(hand).c_str(),
                    ms(pt).c_str(), ratio(seq_on_one, vs[0].median, t > 1 ? 1.6 : 0).c_str(),
                    ratio(vs[1].median, vs[0].median).c_str(), ratio(hand, vs[0].median).c_str(),
                    ratio(pt, vs[0].median).c_str(),
                    cell(sched.cached(bind)->schedule.to_string()).c_str());
        std::fflush(stdout);
      }
    }
  }
}

void write_trace(const std::string& path) {
  constexpr std::size_t P = 256;
  proj_graph graph(P);
  auto ex = g::compile(graph.b, {graph.out});
  std::mt19937 rng(5);
  std::vector<dyn_tensor> in;
  in.emplace_back(nax::shape::make(dtype::f32, {dim::named("batch", 64), dim::named("d", P)}));
  for (int k = 0; k < 3; ++k)
    in.emplace_back(nax::shape::make(dtype::f32, {dim::named("d", P), dim::named("e", P)}));
  for (auto& t : in) {
    std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
    for (std::size_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
  }
  nax::set_num_threads(2);
  (void)ex.run(in);  // specialized before the trace
  nax::trace t;
  for (int r = 0; r < 20; ++r) (void)ex.run(in);
  t.stop();
  t.write_chrome_json(path);
  std::printf(
      "\ntrace: 20 runs of the projections (P = 256) at batch 64 on 2 threads (schedule %s) in "
      "%s\n",
      ex.cached({{"batch", 64}})->schedule.to_string().c_str(), path.c_str());
}

// Three runs of the MLP block, pipelined, at batch `m` on 2 threads, recorded; the last is
// docs/runtime.md's picture of a pipeline.
void write_pipeline_trace(const std::string& path, std::size_t m) {
  mlp_graph graph;
  std::mt19937 rng(11);
  auto ex = g::compile(graph.b, {graph.out});
  const std::vector<dyn_tensor> weights = mlp_weights(ex.program(), rng);
  mlp_data d = make_mlp_data(ex, weights, m, rng);
  nax::set_num_threads(2);
  ex.run(d.in, d.out_nax);  // specialized before the trace
  nax::trace t;
  for (int r = 0; r < 3; ++r) ex.run(d.in, d.out_nax);
  t.stop();
  t.write_chrome_json(path);
  std::printf("\ntrace: 3 runs of the MLP block at batch %zu on 2 threads (%s) in %s\n", m,
              pipeline_cell(*ex.cached({{"batch", m}})).c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  run_with_passive_omp_wait(argv);
  std::string trace_path, pipeline_trace_path;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--trace" && i + 1 < argc) {
      trace_path = argv[++i];
      continue;
    }
    if (std::string_view(argv[i]) == "--trace-pipeline" && i + 1 < argc) {
      pipeline_trace_path = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  options o = parse(static_cast<int>(args.size()), args.data());
  if ((!trace_path.empty() || !pipeline_trace_path.empty()) && o.ops.empty()) o.ops = {"trace"};
  torch_process torch;
  const bool need_torch = wanted(o, "mlp") || wanted(o, "proj");
  const std::string torch_info = need_torch ? start_torch(torch) : "not started";
  print_header("# pipeline: level 2's schedule of an executable's steps", torch_info);
#if NAX_BENCH_HAVE_OPENBLAS
  std::printf("OpenBLAS:   core %s\n", openblas_get_corename());
#else
  std::printf("OpenBLAS:   not found at configure time; the hand-written rows are skipped\n");
#endif
  std::printf("OpenMP:     OMP_WAIT_POLICY=%s\n",
              std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "(unset)");
  if (wanted(o, "threads")) section_threads(o);
  if (wanted(o, "mlp")) section_mlp(o, torch);
  if (wanted(o, "proj")) section_proj(o, torch);
  if (!trace_path.empty()) write_trace(trace_path);
  if (!pipeline_trace_path.empty()) write_pipeline_trace(pipeline_trace_path, o.n ? o.n : 4096);
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
