// Generation with a decoder of GPT-2-small shape (12 layers, model 768, 12 heads × 64, ff 3072,
// vocab 50257, 1024 positions; pre-norm blocks with biases, GELU's tanh form, the head tied to
// the token embedding), random f32 weights, batch 1:
//
//   prefill   128 tokens through the whole model: logits at every position, and each layer's
//             keys and values (the cache the decode steps start from)
//   decode    one token at context C (C - 1 positions cached, C = 128 and 1024): its logits,
//             each layer's cache with the token's key and value written in
//
//   nax::jit       one jitted function per part, called per layer as a user's generation loop
//                  does: the embedding, a block (the same specialization for all 12 layers) and
//                  the head. Decode keeps each layer's cache on a bounded axis (cpos <= 1024) at
//                  its bound, written in place, and attends over its first C positions
//                  (nax::set_dimension_size: a view, no copy), under size_policy::bound: one
//                  specialization, and steps for each context length made on its first call.
//                  Beside it: the same at a new length every call (lengths 128 to 639 in turn:
//                  more than the executable keeps, so every call makes its steps), and the cache
//                  read whole with the positions past C masked (one set of steps for every
//                  length, the attention over all 1024 positions).
//   PyTorch eager  the same model as a PyTorch user writes it, the cache grown with torch.cat
//                  (bench/peers/torch_peer.py, inference_mode)
//   weights read   the limit of a decode step: reading every weight once, measured here as a
//                  sum over a buffer of the weights' size (bytes of weights / read bandwidth)
//
// with 1 and 2 threads, interleaved. nax's logits are checked against PyTorch's (prefill and
// decode) and the decode's against a prefill over the same C tokens (last position).
//
//   bench_generate [--reps N] [--threads 1,2]

#include "harness.hpp"

namespace {

using seq = nax::axis<"seq">;    // positions of a prefill
using kseq = nax::axis<"kseq">;  // the same positions as keys
inline constexpr std::size_t max_context = 1024;
using pos = nax::axis<"pos", max_context>;
using vocab = nax::axis<"vocab", 50257>;
using model = nax::axis<"model", 768>;
using attn = nax::axis<"attn", 768>;  // heads × hd
using heads = nax::axis<"heads", 12>;
using hd = nax::axis<"hd", 64>;
using ff = nax::axis<"ff", 3072>;
inline constexpr std::size_t layers = 12;
// Decoding: one position against a cache of max_context keys and values per layer, bounded.
using one = nax::axis<"seq", 1>;
using cpos = nax::axis<"cpos", nax::upto(max_context)>;
using cpos_one = nax::axis<"cpos", 1>;

inline constexpr float scale = 0.125f;  // 1 / sqrt(hd)
inline constexpr float epsilon = 1e-5f;

struct block {
  nax::tensor<float, model> ln1_g, ln1_b;
  nax::tensor<float, model, attn> wq, wk, wv;
  nax::tensor<float, attn> bq, bk, bv;
  nax::tensor<float, attn, model> wo;
  nax::tensor<float, model> bo, ln2_g, ln2_b;
  nax::tensor<float, model, ff> w1;
  nax::tensor<float, ff> b1;
  nax::tensor<float, ff, model> w2;
  nax::tensor<float, model> b2;
  NAX_FIELDS(ln1_g, ln1_b, wq, wk, wv, bq, bk, bv, wo, bo, ln2_g, ln2_b, w1, b1, w2, b2)
};

struct gpt2 {
  nax::tensor<float, vocab, model> wte;
  nax::tensor<float, pos, model> wpe;
  std::vector<block> layers;
  nax::tensor<float, model> lnf_g, lnf_b;
  NAX_FIELDS(wte, wpe, layers, lnf_g, lnf_b)
};

const auto mlp = [](const auto& b, auto h) {
  auto c = nax::layer_norm<model>(h, b.ln2_g, b.ln2_b, epsilon);
  auto f = nax::gelu_tanh(nax::dot<model>(c, b.w1) + b.b1);
  return nax::eval(h + nax::dot<ff>(f, b.w2) + b.b2);
};

// A block over the prefill's positions x [seq, model], causal: the output, and the keys and
// values [kseq, heads, hd] for the cache.
const auto block_prefill = [](const auto& b, auto x) {
  auto a = nax::layer_norm<model>(x, b.ln1_g, b.ln1_b, epsilon);
  auto q = nax::split<attn, heads, hd>(nax::dot<model>(a, b.wq) + b.bq);
  auto k = nax::eval(
      nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wk) + b.bk)));
  auto v = nax::eval(
      nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wv) + b.bv)));
  auto scores = nax::dot<hd>(q, k) * scale;  // [heads, seq, kseq]
  auto p = nax::softmax<kseq>(scores + nax::where(nax::tril<seq, kseq>(scores), 0.0f, -1e9f));
  auto o = nax::merge<heads, hd, attn>(nax::dot<kseq>(p, v));
  return std::tuple(mlp(b, nax::eval(x + nax::dot<attn>(o, b.wo) + b.bo)), k, v);
};

// The attention's inputs for the token at position `at` x [seq=1, model]: its query, and the
// layer's cache with its key and value written at `at` (the results, updated in place).
const auto query_and_cache = [](const auto& b, auto k_cache, auto v_cache, auto x, auto at) {
  auto a = nax::layer_norm<model>(x, b.ln1_g, b.ln1_b, epsilon);
  auto q = nax::split<attn, heads, hd>(nax::dot<model>(a, b.wq) + b.bq);
  auto k_new =
      nax::rename<one, cpos_one>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wk) + b.bk));
  auto v_new =
      nax::rename<one, cpos_one>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wv) + b.bv));
  return std::tuple(q, nax::eval(nax::dynamic_update_slice<cpos>(k_cache, k_new, at)),
                    nax::eval(nax::dynamic_update_slice<cpos>(v_cache, v_new, at)));
};

// A block for that token, its query against the cache's first at + 1 positions (the rest masked).
const auto block_decode = [](const auto& b, auto k_cache, auto v_cache, auto x, auto at) {
  auto [q, k, v] = query_and_cache(b, k_cache, v_cache, x, at);
  auto scores = nax::dot<hd>(q, k) * scale;  // [heads, seq=1, cpos]
  auto seen = nax::iota<cpos, std::int32_t>(k) <= at;
  auto p = nax::softmax<cpos>(scores + nax::where(seen, 0.0f, -1e9f));
  auto o = nax::merge<heads, hd, attn>(nax::dot<cpos>(p, v));
  return std::tuple(mlp(b, nax::eval(x + nax::dot<attn>(o, b.wo) + b.bo)), k, v);
};

// The same, its query against the cache's first at + 1 positions alone (lpos <= 1024).
using lpos = nax::axis<"lpos">;
const auto block_decode_live = [](const auto& b, auto k_cache, auto v_cache, auto x, auto at) {
  auto [q, k, v] = query_and_cache(b, k_cache, v_cache, x, at);
  auto scores = nax::dot<hd>(q, nax::set_dimension_size<cpos, lpos>(k, at + 1)) * scale;
  auto p = nax::softmax<lpos>(scores);  // [heads, seq=1, lpos]
  auto o = nax::merge<heads, hd, attn>(
      nax::dot<lpos>(p, nax::set_dimension_size<cpos, lpos>(v, at + 1)));
  return std::tuple(mlp(b, nax::eval(x + nax::dot<attn>(o, b.wo) + b.bo)), k, v);
};

const auto embed_prefill = [](auto wte, auto wpe, auto tokens, auto positions) {
  return nax::take<vocab>(wte, tokens) + nax::take<pos>(wpe, positions);
};
const auto embed_decode = [](auto wte, auto wpe, auto token, auto at) {
  return nax::take<vocab>(wte, token) +
         nax::rename<nax::axis<"pos", 1>, one>(nax::dynamic_slice<pos, 1>(wpe, at));
};
// The head, tied to the token embedding: logits [seq, vocab].
const auto head = [](auto g, auto b, auto wte, auto x) {
  return nax::dot<model>(nax::layer_norm<model>(x, g, b, epsilon), wte);
};

template <class T, class... A>
std::vector<std::size_t> dims_of(const nax::tensor<T, A...>& t) {
  return {t.template extent<A>()...};
}

gpt2 random_weights() {
  gpt2 p;
  p.layers.resize(layers);
  std::uint64_t stream = 0;
  nax::for_each_field(p, [&](std::string_view path, auto& t) {
    const std::string_view name = path.substr(path.rfind('.') + 1);
    const bool gain = name.ends_with("_g");
    const bool bias = name.ends_with("_b") || (name.size() == 2 && name[0] == 'b');
    std::mt19937_64 rng(++stream);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (std::size_t i = 0; i < t.size(); ++i)
      t.data()[i] = gain ? 1.0f + 5 * normal(rng) : bias ? 5 * normal(rng) : normal(rng);
  });
  return p;
}

// Sums `n` floats on `threads` threads: what reading them once costs.
float read_all(const float* p, std::size_t n, int threads) {
  float total = 0;
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static) reduction(+ : total)
  for (std::ptrdiff_t i = 0; i < m; ++i) total += p[i];
  return total;
}

std::string check_logits(const float* got, const float* want, std::size_t n) {
  return compare(got, want, n, 2e-3, 1e-1);
}

}  // namespace

int main(int argc, char** argv) {
  run_with_passive_omp_wait(argv);
  options o = parse(argc, argv);
  if (o.reps == 15) o.reps = 7;
  torch_process torch;
  const std::string torch_info = start_torch(torch);
  print_header("# generation, GPT-2-small shape: nax::jit, PyTorch eager, the weights' read",
               torch_info);
  std::printf("OpenMP:     OMP_WAIT_POLICY=%s\n", std::getenv("OMP_WAIT_POLICY"));

  const gpt2 w = random_weights();
  std::size_t parameters = 0;
  nax::for_each_field(w, [&](std::string_view, const auto& t) { parameters += t.size(); });
  // What a decode step reads: every weight but the position table (one row of it).
  const double decode_bytes = double(parameters - w.wpe.size()) * sizeof(float);
  std::printf(
      "\nmodel: %zu layers, model %zu, %zu heads × %zu, ff %zu, vocab %zu; %.1f M "
      "parameters (%.0f MB), %.0f MB read per decoded token\n",
      layers, model::static_extent, heads::static_extent, hd::static_extent, ff::static_extent,
      vocab::static_extent, double(parameters) * 1e-6, double(parameters) * 4e-6,
      decode_bytes * 1e-6);
  constexpr std::size_t prefill_tokens = 128;
  nax::tensor<std::int32_t, seq> tokens(seq{max_context});
  {
    std::mt19937 pick(11);
    std::uniform_int_distribution<std::int32_t> token(0, std::int32_t(vocab::static_extent) - 1);
    for (std::size_t i = 0; i < max_context; ++i) tokens.data()[i] = token(pick);
  }

  if (torch.ok()) {
    nax::for_each_field(w, [&](std::string_view path, const auto& t) {
      torch.load(std::string(path), t.data(), dims_of(t));
    });
    std::vector<float> as_floats(tokens.data(), tokens.data() + max_context);
    torch.load("tokens", as_floats.data(), {max_context});
    torch.must(cat("param layers ", std::to_string(layers)));
    torch.must(cat("param heads ", std::to_string(heads::static_extent)));
    torch.must(cat("param eps ", std::to_string(epsilon)));
    torch.must(cat("param scale ", std::to_string(scale)));
    torch.must(cat("param prefill ", std::to_string(prefill_tokens)));
  }

  // nax's parts, jitted once each.
  using i32 = std::int32_t;
  auto embed_prefill_fn = nax::jit(
      embed_prefill, nax::input<float, vocab, model>("wte"), nax::input<float, pos, model>("wpe"),
      nax::input<i32, seq>("tokens"), nax::input<i32, seq>("positions"));
  auto embed_decode_fn = nax::jit(embed_decode, nax::input<float, vocab, model>("wte"),
                                  nax::input<float, pos, model>("wpe"),
                                  nax::input<i32, one>("token"), nax::input<i32>("at"));
  auto block_prefill_fn =
      nax::jit(block_prefill, nax::input(w.layers[0]), nax::input<float, seq, model>("x"));
  auto block_decode_fn =
      nax::jit(block_decode, nax::input(w.layers[0]), nax::input<float, cpos, heads, hd>("k"),
               nax::input<float, cpos, heads, hd>("v"), nax::input<float, one, model>("x"),
               nax::input<i32>("at"));
  nax::graph::compile_options bound;
  bound.bounded = {nax::graph::size_policy::bound};
  auto block_decode_live_fn =
      nax::jit(bound, block_decode_live, nax::input(w.layers[0]),
               nax::input<float, cpos, heads, hd>("k"), nax::input<float, cpos, heads, hd>("v"),
               nax::input<float, one, model>("x"), nax::input<i32>("at"));
  auto head_prefill_fn =
      nax::jit(head, nax::input<float, model>("g"), nax::input<float, model>("b"),
               nax::input<float, vocab, model>("wte"), nax::input<float, seq, model>("x"));
  auto head_decode_fn =
      nax::jit(head, nax::input<float, model>("g"), nax::input<float, model>("b"),
               nax::input<float, vocab, model>("wte"), nax::input<float, one, model>("x"));

  // The prefill of tokens 0..n-1: logits [seq, vocab] and each layer's keys and values.
  struct prefilled {
    nax::tensor<float, seq, vocab> logits;
    std::vector<nax::tensor<float, kseq, heads, hd>> k, v;
  };
  const auto prefill = [&](std::size_t n) {
    nax::tensor<i32, seq> t(seq{n});
    std::copy(tokens.data(), tokens.data() + n, t.data());
    auto x = embed_prefill_fn(w.wte, w.wpe, t, nax::iota<i32, seq>(seq{n}));
    prefilled out;
    for (const block& b : w.layers) {
      auto [y, k, v] = block_prefill_fn(b, x);
      x = std::move(y);
      out.k.push_back(std::move(k));
      out.v.push_back(std::move(v));
    }
    out.logits = head_prefill_fn(w.lnf_g, w.lnf_b, w.wte, x);
    return out;
  };

  // Decoding the token at position c - 1, c - 1 positions cached.
  struct decoder {
    std::vector<nax::tensor<float, cpos, heads, hd>> k, v;
    nax::tensor<i32, one> token;
    nax::tensor<i32> at;
  };
  const auto decoder_at = [&](std::size_t c) {
    const prefilled before = prefill(c - 1);
    decoder d;
    const std::size_t row = heads::static_extent * hd::static_extent;
    for (std::size_t l = 0; l < layers; ++l) {
      d.k.push_back(nax::zeros<float, cpos, heads, hd>(cpos{max_context}));
      d.v.push_back(nax::zeros<float, cpos, heads, hd>(cpos{max_context}));
      std::copy(before.k[l].data(), before.k[l].data() + (c - 1) * row, d.k[l].data());
      std::copy(before.v[l].data(), before.v[l].data() + (c - 1) * row, d.v[l].data());
    }
    d.token.data()[0] = tokens.data()[c - 1];
    d.at.data()[0] = static_cast<i32>(c - 1);
    return d;
  };
  const auto decode = [&](decoder& d, bool masked = false) {
    auto x = embed_decode_fn(w.wte, w.wpe, d.token, d.at);
    for (std::size_t l = 0; l < layers; ++l) {
      // The caches donated: each is updated in place (the token's key and value written).
      auto [y, k, v] =
          masked ? block_decode_fn(w.layers[l], nax::donate(d.k[l]), nax::donate(d.v[l]), x, d.at)
                 : block_decode_live_fn(w.layers[l], nax::donate(d.k[l]), nax::donate(d.v[l]), x,
                                        d.at);
      x = std::move(y);
      d.k[l] = std::move(k);
      d.v[l] = std::move(v);
    }
    return head_decode_fn(w.lnf_g, w.lnf_b, w.wte, x);
  };

  struct row {
    std::string what;
    int threads;
    double nax, torch, limit;
  };
  std::vector<row> rows;
  const std::size_t V = vocab::static_extent;
  for (int t : o.threads) {
    nax::set_num_threads(t);
    // Prefill.
    {
      std::vector<float> want;
      if (torch.ok()) {
        torch.must(cat("threads ", std::to_string(t)));
        want = torch.result("gpt_prefill", prefill_tokens * V);
      }
      std::vector<variant> vs;
      vs.push_back(timed(
          "nax::jit", kind::nax, t, [&] { do_not_optimize(prefill(prefill_tokens)); },
          [&]() -> std::string {
            if (want.empty()) return "";
            return check_logits(prefill(prefill_tokens).logits.data(), want.data(), want.size());
          }));
      if (torch.ok())
        vs.push_back(torch_variant(torch, "PyTorch eager", "gpt_prefill", t, 0, want.size(),
                                   [](const std::vector<float>&) { return std::string(); }));
      measure(vs, o.reps, 0.5, false);
      // The limit of a prefill: its multiply-adds (the projections, the MLPs and the head per
      // token, the causal attention computed whole) at the in-run FMA peak.
      const double n = double(prefill_tokens), M = model::static_extent, F = ff::static_extent;
      const double flops = 2 * (n * double(layers) * (4 * M * M + 2 * M * F + 2 * n * M) +
                                n * M * double(vocab::static_extent));
      rows.push_back({cat("prefill ", std::to_string(prefill_tokens)), t, vs[0].median,
                      vs.size() > 1 ? vs[1].median : 0, flops / (fma_peak_gflops(t) * 1e9)});
      std::printf("prefill %zu, %d thread%s:", prefill_tokens, t, t > 1 ? "s" : "");
      for (const auto& v : vs)
        std::printf(" %s %.2f ms (best %.2f);", v.name.c_str(), v.median * 1e3, v.best * 1e3);
      std::printf("\n");
      std::fflush(stdout);
    }
    // Decode at contexts 128 and 1024.
    for (std::size_t c : {std::size_t{128}, max_context}) {
      decoder d = decoder_at(c);
      // The reference: the prefill of the same c tokens, at its last position.
      const prefilled whole = prefill(c);
      const float* want = whole.logits.data() + (c - 1) * V;
      if (torch.ok()) torch.must(cat("param context ", std::to_string(c)));
      std::vector<variant> vs;
      vs.push_back(timed(
          "nax::jit", kind::nax, t, [&] { do_not_optimize(decode(d)); },
          [&] { return check_logits(decode(d).data(), want, V); }));
      vs.back().bytes = decode_bytes;
      if (c == 128) {
        std::size_t calls = 0;
        vs.push_back(timed(
            "nax::jit, a new length each call", kind::nax, t,
            [&] {
              d.at.data()[0] = static_cast<i32>(c - 1 + calls++ % 512);
              do_not_optimize(decode(d));
              d.at.data()[0] = static_cast<i32>(c - 1);
            },
            [] { return std::string(); }));
        vs.back().bytes = decode_bytes;
      }
      vs.push_back(timed(
          "nax::jit, masked cache", kind::nax, t, [&] { do_not_optimize(decode(d, true)); },
          [&] { return check_logits(decode(d, true).data(), want, V); }));
      vs.back().bytes = decode_bytes;
      if (torch.ok()) {
        vs.push_back(torch_variant(
            torch, "PyTorch eager", "gpt_decode", t, decode_bytes, V,
            [&](const std::vector<float>& got) { return check_logits(got.data(), want, V); }));
      }
      static std::vector<float> weights_copy;
      if (weights_copy.empty()) weights_copy.assign(std::size_t(decode_bytes / 4), 1.0f);
      variant limit = timed(
          "weights read (limit)", kind::limit, t,
          [&] { do_not_optimize(read_all(weights_copy.data(), weights_copy.size(), t)); },
          [] { return std::string(); });
      limit.bytes = decode_bytes;
      vs.push_back(limit);
      measure(vs, o.reps, 0.5, false);
      const variant* peer = nullptr;
      for (const variant& v : vs)
        if (v.name == "PyTorch eager") peer = &v;
      rows.push_back({cat("decode at ", std::to_string(c)), t, vs[0].median,
                      peer ? peer->median : 0, vs.back().median});
      std::printf("decode at context %zu, %d thread%s:", c, t, t > 1 ? "s" : "");
      for (const auto& v : vs)
        std::printf(" %s %.2f ms (best %.2f, %.1f GB/s);", v.name.c_str(), v.median * 1e3,
                    v.best * 1e3, gbs(v, v.median));
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf(
      "\n| part | threads | nax::jit ms | PyTorch ms | nax / PyTorch speed | tokens/s nax | "
      "tokens/s PyTorch | nax / limit |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const row& r : rows) {
    const bool prefill_row = r.what.starts_with("prefill");
    const double tokens_per_call = prefill_row ? double(prefill_tokens) : 1.0;
    char torch_ms[32] = "-", speed[32] = "-", torch_tps[32] = "-", limit[32] = "-";
    if (r.torch > 0) {
      std::snprintf(torch_ms, sizeof torch_ms, "%.2f", r.torch * 1e3);
      std::snprintf(speed, sizeof speed, "%.2fx", r.torch / r.nax);
      std::snprintf(torch_tps, sizeof torch_tps, "%.1f", tokens_per_call / r.torch);
    }
    if (r.limit > 0) std::snprintf(limit, sizeof limit, "%.2f", r.limit / r.nax);
    std::printf("| %s | %d | %.2f | %s | %s | %.1f | %s | %s |\n", r.what.c_str(), r.threads,
                r.nax * 1e3, torch_ms, speed, tokens_per_call / r.nax, torch_tps, limit);
  }
  std::printf(
      "\n(the limit: for a prefill its multiply-adds at the in-run FMA peak, for a decode step "
      "the read of its weights)\n");
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
}
