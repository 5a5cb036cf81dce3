// A character-level GPT with nax: two pre-norm decoder blocks, token and position embeddings
// looked up with nax::take, trained with nax::value_and_grad and AdamW on a text that ships with
// Debian (the GPL's text), saved and loaded as .npz, then generating text twice: without a cache
// (the whole prefix again for each token) and with a KV cache written in place by
// nax::dynamic_update_slice (the cache donated to the call: nax::donate). The parameters are
// structs (NAX_FIELDS): one argument for the whole model in nax::jit, nax::value_and_grad, the
// optimizer and the .npz file.
//
// Exits 0 when the loss has fallen, the loaded parameters are bit for bit the saved ones, and both
// ways of generating give the same tokens; 1 otherwise. Usage: gpt [TEXT_FILE] [STEPS]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nax/nax.hpp>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;                   // the positions of a training window
using kseq = nax::axis<"kseq">;                 // the same positions as keys
inline constexpr std::size_t context = 32;      // training window
inline constexpr std::size_t max_len = 64;      // longest generated sequence (the cache's length)
using pos = nax::axis<"pos", max_len>;          // rows of the position table
inline constexpr std::size_t vocab_size = 128;  // ASCII
using vocab = nax::axis<"vocab", vocab_size>;
using model = nax::axis<"model", 64>;
using attn = nax::axis<"attn", 64>;  // heads × hd
using heads = nax::axis<"heads", 4>;
using hd = nax::axis<"hd", 16>;
using ff = nax::axis<"ff", 256>;
// Decoding: one position at a time, against a cache of max_len keys and values per layer.
using one = nax::axis<"seq", 1>;
// The cache's axis is bounded (always at its bound here): a static one could not take an update
// of extent 1 along it (nax::dynamic_update_slice's update has the same axes).
using cpos = nax::axis<"cpos", nax::upto(max_len)>;
using cpos_one = nax::axis<"cpos", 1>;

inline constexpr float scale = 0.25f;  // 1 / sqrt(hd)
inline constexpr float epsilon = 1e-5f;

struct block {
  nax::tensor<float, model> ln1_g, ln1_b;
  nax::tensor<float, model, attn> wq, wk, wv;
  nax::tensor<float, attn, model> wo;
  nax::tensor<float, model> ln2_g, ln2_b;
  nax::tensor<float, model, ff> w1;
  nax::tensor<float, ff> b1;
  nax::tensor<float, ff, model> w2;
  nax::tensor<float, model> b2;
  NAX_FIELDS(ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2)
};

struct gpt {
  nax::tensor<float, vocab, model> embed;
  nax::tensor<float, pos, model> position;
  std::vector<block> layers;
  nax::tensor<float, model> lnf_g, lnf_b;
  nax::tensor<float, model, vocab> head;
  NAX_FIELDS(embed, position, layers, lnf_g, lnf_b, head)
};

// One layer's keys and values of the positions decoded so far (the rest are never read).
struct layer_cache {
  nax::tensor<float, cpos, heads, hd> k, v;
  NAX_FIELDS(k, v)
};
struct kv_cache {
  std::vector<layer_cache> layers;
  NAX_FIELDS(layers)
};

// The MLP half of a block, with its residual: the same for training and decoding.
const auto mlp = [](const auto& b, auto h) {
  auto c = nax::layer_norm<model>(h, b.ln2_g, b.ln2_b, epsilon);
  auto f = nax::gelu(nax::dot<model>(c, b.w1) + b.b1);
  return nax::eval(h + nax::dot<ff>(f, b.w2) + b.b2);
};

// A block over a whole window x [batch, seq, model], causal.
const auto block_over_window = [](const auto& b, auto x) {
  auto a = nax::layer_norm<model>(x, b.ln1_g, b.ln1_b, epsilon);
  auto q = nax::split<attn, heads, hd>(nax::dot<model>(a, b.wq));  // [batch, seq, heads, hd]
  auto k = nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wk)));
  auto v = nax::rename<seq, kseq>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wv)));
  auto scores = nax::dot<hd>(q, k) * scale;  // [batch, heads, seq, kseq]
  auto p = nax::softmax<kseq>(scores + nax::where(nax::tril<seq, kseq>(scores), 0.0f, -1e9f));
  auto o = nax::merge<heads, hd, attn>(nax::dot<kseq>(p, v));
  return mlp(b, nax::eval(x + nax::dot<attn>(o, b.wo)));
};

// The logits [batch, seq, vocab] of windows of tokens [batch, seq] at positions [seq].
const auto logits_of = [](const auto& p, auto tokens, auto positions) {
  auto x = nax::eval(nax::take<vocab>(p.embed, tokens) + nax::take<pos>(p.position, positions));
  for (const auto& b : p.layers) x = block_over_window(b, x);
  return nax::dot<model>(nax::layer_norm<model>(x, p.lnf_g, p.lnf_b, epsilon), p.head);
};

// The mean cross-entropy of predicting targets [batch, seq] (each window shifted by one).
const auto loss_of = [](const auto& p, auto tokens, auto positions, auto targets) {
  auto logp = nax::log_softmax<vocab>(logits_of(p, tokens, positions));
  return -nax::mean<batch, seq>(nax::take_along<vocab>(logp, targets));
};

// A block for the token at position `at` (a rank-0 integer) x [seq=1, model]: its key and value
// written into the layer's cache at `at`, its query against the cache's first at + 1 positions
// alone (nax::set_dimension_size: a view of the cache, nothing copied; lpos <= max_len).
using lpos = nax::axis<"lpos">;
const auto block_at = [](const auto& b, auto k_cache, auto v_cache, auto x, auto at) {
  auto a = nax::layer_norm<model>(x, b.ln1_g, b.ln1_b, epsilon);
  auto q = nax::split<attn, heads, hd>(nax::dot<model>(a, b.wq));  // [seq=1, heads, hd]
  auto k_new = nax::rename<one, cpos_one>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wk)));
  auto v_new = nax::rename<one, cpos_one>(nax::split<attn, heads, hd>(nax::dot<model>(a, b.wv)));
  auto k = nax::eval(nax::dynamic_update_slice<cpos>(k_cache, k_new, at));
  auto v = nax::eval(nax::dynamic_update_slice<cpos>(v_cache, v_new, at));
  auto scores = nax::dot<hd>(q, nax::set_dimension_size<cpos, lpos>(k, at + 1)) * scale;
  auto p = nax::softmax<lpos>(scores);  // [heads, seq=1, lpos]
  auto o = nax::merge<heads, hd, attn>(
      nax::dot<lpos>(p, nax::set_dimension_size<cpos, lpos>(v, at + 1)));
  return std::tuple(mlp(b, nax::eval(x + nax::dot<attn>(o, b.wo))), k, v);
};

// The logits [seq=1, vocab] of the token [seq=1] at position `at`, and the two layers' caches
// with its keys and values written.
const auto decode = [](const auto& p, const auto& cache, auto token, auto at) {
  auto x =
      nax::eval(nax::take<vocab>(p.embed, token) +
                nax::rename<nax::axis<"pos", 1>, one>(nax::dynamic_slice<pos, 1>(p.position, at)));
  auto [x1, k0, v0] = block_at(p.layers[0], cache.layers[0].k, cache.layers[0].v, x, at);
  auto [x2, k1, v1] = block_at(p.layers[1], cache.layers[1].k, cache.layers[1].v, x1, at);
  auto logits = nax::dot<model>(nax::layer_norm<model>(x2, p.lnf_g, p.lnf_b, epsilon), p.head);
  return std::tuple(logits, k0, v0, k1, v1);
};

namespace {

std::string read_text(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = static_cast<char>(static_cast<unsigned char>(c) & 0x7f);
  return text;
}

gpt initial_parameters() {
  gpt p;
  p.layers.resize(2);
  std::uint64_t stream = 0;
  nax::for_each_field(p, [&](std::string_view path, auto& t) {
    const bool gain = path.ends_with("_g"),
               bias = path.ends_with("_b") || path.ends_with(".b1") || path.ends_with(".b2");
    // The projections into the residual stream at half the scale of the others.
    std::normal_distribution<float> normal(
        0.0f, path.ends_with("w2") || path.ends_with("wo") ? 0.01f : 0.02f);
    std::mt19937_64 rng(++stream);
    for (std::size_t i = 0; i < t.size(); ++i)
      t.data()[i] = gain ? 1.0f : bias ? 0.0f : normal(rng);
  });
  return p;
}

bool same_parameters(const gpt& a, const gpt& b) {
  bool same = true;
  std::vector<std::vector<char>> bytes;
  nax::for_each_field(a, [&](std::string_view, const auto& t) {
    const char* d = reinterpret_cast<const char*>(t.data());
    bytes.emplace_back(d, d + t.size() * sizeof(*t.data()));
  });
  std::size_t k = 0;
  nax::for_each_field(b, [&](std::string_view, const auto& t) {
    same = same && t.size() * sizeof(*t.data()) == bytes[k].size() &&
           std::memcmp(t.data(), bytes[k].data(), bytes[k].size()) == 0;
    ++k;
  });
  return same && k == bytes.size();
}

std::size_t argmax_row(const float* row) {
  std::size_t best = 0;
  for (std::size_t v = 1; v < vocab_size; ++v)
    if (row[v] > row[best]) best = v;
  return best;
}

std::string printable(const std::vector<std::int32_t>& tokens) {
  std::string s;
  for (std::int32_t t : tokens) s += (t >= 32 && t < 127) || t == '\n' ? char(t) : '?';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/usr/share/common-licenses/GPL-3";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 300;
  const std::string text = read_text(path);
  if (text.size() < 4 * context) {
    std::fprintf(stderr, "gpt: %s: too short or unreadable (%zu bytes)\n", path, text.size());
    return 1;
  }
  gpt params = initial_parameters();

  // Training: random windows of the text, each token predicting the next.
  constexpr std::size_t windows = 16;
  nax::tensor<std::int32_t, batch, seq> tokens(batch{windows}, seq{context}),
      targets(batch{windows}, seq{context});
  nax::tensor<std::int32_t, seq> positions = nax::iota<std::int32_t, seq>(seq{context});
  auto step = nax::value_and_grad(
      loss_of, nax::input(params), nax::data<std::int32_t, batch, seq>("tokens"),
      nax::data<std::int32_t, seq>("positions"), nax::data<std::int32_t, batch, seq>("targets"));
  nax::optim::adamw opt{.lr = 3e-3, .weight_decay = 0.0};
  auto state = opt.init(params);
  std::mt19937 pick(5);
  std::uniform_int_distribution<std::size_t> start(0, text.size() - context - 2);
  float first = 0, last = 0;
  const auto began = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    for (std::size_t w = 0; w < windows; ++w) {
      const std::size_t s = start(pick);
      for (std::size_t i = 0; i < context; ++i) {
        tokens(w, i) = static_cast<unsigned char>(text[s + i]);
        targets(w, i) = static_cast<unsigned char>(text[s + i + 1]);
      }
    }
    auto [loss, grads] = step(params, tokens, positions, targets);
    (k == 0 ? first : last) = loss.data()[0];
    if (k % 50 == 0) std::printf("step %3d: loss %.3f\n", k, double(loss.data()[0]));
    opt.step(params, grads, state);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf("loss %.3f -> %.3f in %d steps, %.2f s\n", double(first), double(last), steps,
              seconds);

  // Saved and loaded: the same bits.
  const char* file = "gpt_example.npz";
  nax::save_npz(file, params);
  gpt loaded;
  loaded.layers.resize(2);
  nax::load_npz(file, loaded);
  std::remove(file);
  const bool round_trip = same_parameters(params, loaded);
  std::printf("saved and loaded: %s\n", round_trip ? "the same bits" : "DIFFERENT");

  // Generating greedily from a prompt, without a cache: the whole prefix for each new token.
  const std::string prompt = "This License";
  std::vector<std::int32_t> uncached(prompt.begin(), prompt.end());
  auto logits_fn =
      nax::jit(logits_of, nax::input(loaded), nax::input<std::int32_t, batch, seq>("tokens"),
               nax::input<std::int32_t, seq>("positions"));
  while (uncached.size() < max_len) {
    const std::size_t n = uncached.size();
    nax::tensor<std::int32_t, batch, seq> t(batch{1}, seq{n});
    std::copy(uncached.begin(), uncached.end(), t.data());
    const auto logits = logits_fn(loaded, t, nax::iota<std::int32_t, seq>(seq{n}));
    uncached.push_back(static_cast<std::int32_t>(argmax_row(&logits(0, n - 1, 0))));
  }

  // With a KV cache: the prompt's tokens one at a time, then each new token once.
  kv_cache cache;
  cache.layers.resize(2);
  for (auto& l : cache.layers) {
    l.k = nax::zeros<float, cpos, heads, hd>(cpos{max_len});
    l.v = nax::zeros<float, cpos, heads, hd>(cpos{max_len});
  }
  // Under size_policy::bound one specialization, at the bound, serves every context length; a
  // new length makes its steps on its first call (microseconds; bench/RESULTS.md, generate).
  nax::graph::compile_options bound;
  bound.bounded = {nax::graph::size_policy::bound};
  auto decode_fn = nax::jit(bound, decode, nax::input(loaded), nax::input(cache),
                            nax::input<std::int32_t, one>("token"), nax::input<std::int32_t>("at"));
  std::vector<std::int32_t> cached(prompt.begin(), prompt.end());
  nax::tensor<std::int32_t, one> token;
  nax::tensor<std::int32_t> at;
  for (std::size_t i = 0; i + 1 < max_len; ++i) {
    token.data()[0] = cached[i];
    at.data()[0] = static_cast<std::int32_t>(i);
    // The cache donated: each layer's keys and values are updated in place (the new position
    // written, nothing copied), the results owning the same memory.
    auto [logits, k0, v0, k1, v1] = decode_fn(loaded, nax::donate(cache), token, at);
    cache.layers[0].k = std::move(k0);
    cache.layers[0].v = std::move(v0);
    cache.layers[1].k = std::move(k1);
    cache.layers[1].v = std::move(v1);
    if (i + 1 >= cached.size())
      cached.push_back(static_cast<std::int32_t>(argmax_row(logits.data())));
  }
  std::printf("without a cache: %s\n", printable(uncached).c_str());
  std::printf("with a KV cache: %s\n", printable(cached).c_str());
  const bool same_tokens = cached == uncached;
  std::printf("the same tokens: %s\n", same_tokens ? "yes" : "NO");
  const bool learned = last < 0.75f * first;
  return learned && round_trip && same_tokens ? 0 : 1;
}
