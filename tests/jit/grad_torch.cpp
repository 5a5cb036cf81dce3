// nax::value_and_grad against PyTorch's autograd on the same weights and data, where PyTorch is
// installed for /usr/bin/python3 (Debian's python3-torch; the test says so and passes without
// it): the MLP block in double and the transformer encoder block of examples/ in float. The
// tensors go to PyTorch and back as .npz files (nax/io/npz.hpp).
#include "../../examples/transformer_block.hpp"

#include <nax/io/npz.hpp>
#include <nax/jit/value_and_grad.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace {

bool have_torch() {
  return std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0;
}

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nax_test_" + name)).string();
}

// Runs `script` under /usr/bin/python3 with IN and OUT set to the two paths.
void run_python(const std::string& script, const std::string& in, const std::string& out) {
  const std::string path = temp("script.py");
  {
    std::ofstream f(path);
    f << "import numpy as np, torch\nF = torch.nn.functional\nIN, OUT = '" << in << "', '" << out
      << "'\n"
      << script;
  }
  REQUIRE(std::system(("/usr/bin/python3 " + path).c_str()) == 0);
  std::remove(path.c_str());
}

// The largest |a - b| over the largest |b| of one gradient.
template <class T>
double difference(const T* a, const nax::dyn_tensor& b, std::size_t n) {
  REQUIRE(b.size() == n);
  const T* pb = static_cast<const T*>(b.data());
  double worst = 0, scale = 1e-30;
  for (std::size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - double(pb[i])));
    scale = std::max(scale, std::abs(double(pb[i])));
  }
  return worst / scale;
}

const nax::dyn_tensor& named(const std::vector<nax::io::named_tensor>& all, const char* name) {
  for (const auto& t : all)
    if (t.name == name) return t.value;
  FAIL("no tensor " << name);
  return all.front().value;
}

using batch = nax::axis<"batch">;
using d = nax::axis<"d", 6>;
using f = nax::axis<"f", 10>;

const auto mlp_loss = [](auto x, auto target, auto w1, auto b1, auto w2, auto b2, auto gamma,
                         auto beta) {
  auto h = nax::gelu(nax::dot<d>(x, w1) + b1);
  auto y = nax::layer_norm<d>(nax::dot<f>(h, w2) + b2 + x, gamma, beta, 1e-5);
  auto e = y - target;
  return nax::mean<batch>(nax::sum<d>(e * e));
};

}  // namespace

TEST_CASE("the MLP block's gradients, against PyTorch's autograd (double)") {
  if (!have_torch()) {
    MESSAGE("PyTorch is not installed for /usr/bin/python3: the comparison is skipped");
    return;
  }
  auto step = nax::value_and_grad(
      mlp_loss, nax::data<double, batch, d>("x"), nax::data<double, batch, d>("target"),
      nax::input<double, d, f>("w1"), nax::input<double, f>("b1"), nax::input<double, f, d>("w2"),
      nax::input<double, d>("b2"), nax::input<double, d>("gamma"), nax::input<double, d>("beta"));
  const auto x = nax::normal<double, batch, d>(nax::rng{5, 0}, 0.0, 1.0, batch(5));
  const auto target = nax::normal<double, batch, d>(nax::rng{5, 1}, 0.0, 1.0, batch(5));
  const auto w1 = nax::normal<double, d, f>(nax::rng{5, 2}, 0.0, 0.4);
  const auto b1 = nax::normal<double, f>(nax::rng{5, 3}, 0.0, 0.1);
  const auto w2 = nax::normal<double, f, d>(nax::rng{5, 4}, 0.0, 0.3);
  const auto b2 = nax::normal<double, d>(nax::rng{5, 5}, 0.0, 0.1);
  const auto gamma = nax::normal<double, d>(nax::rng{5, 6}, 1.0, 0.1);
  const auto beta = nax::normal<double, d>(nax::rng{5, 7}, 0.0, 0.1);
  auto [loss, g] = step(x, target, w1, b1, w2, b2, gamma, beta);
  const std::string in = temp("mlp_in.npz"), out = temp("mlp_out.npz");
  using nax::io::to_dyn;
  nax::io::save_npz(in, {{"x", to_dyn(x)},
                         {"target", to_dyn(target)},
                         {"w1", to_dyn(w1)},
                         {"b1", to_dyn(b1)},
                         {"w2", to_dyn(w2)},
                         {"b2", to_dyn(b2)},
                         {"gamma", to_dyn(gamma)},
                         {"beta", to_dyn(beta)}});
  run_python(R"(
d = {k: torch.from_numpy(v) for k, v in np.load(IN).items()}
ps = {k: d[k].clone().requires_grad_(True) for k in ['w1', 'b1', 'w2', 'b2', 'gamma', 'beta']}
x = d['x']
h = F.gelu(x @ ps['w1'] + ps['b1'])
y = F.layer_norm(h @ ps['w2'] + ps['b2'] + x, (x.shape[-1],), ps['gamma'], ps['beta'], 1e-5)
loss = ((y - d['target']) ** 2).sum(-1).mean()
loss.backward()
np.savez(OUT, loss=loss.detach().numpy(), **{k: p.grad.numpy() for k, p in ps.items()})
)",
             in, out);
  const std::vector<nax::io::named_tensor> theirs = nax::io::load_npz(out);
  CHECK(difference(loss.data(), named(theirs, "loss"), 1) <= 1e-12);
  CHECK(difference(std::get<0>(g).data(), named(theirs, "w1"), 60) <= 1e-10);
  CHECK(difference(std::get<1>(g).data(), named(theirs, "b1"), 10) <= 1e-10);
  CHECK(difference(std::get<2>(g).data(), named(theirs, "w2"), 60) <= 1e-10);
  CHECK(difference(std::get<3>(g).data(), named(theirs, "b2"), 6) <= 1e-10);
  CHECK(difference(std::get<4>(g).data(), named(theirs, "gamma"), 6) <= 1e-10);
  CHECK(difference(std::get<5>(g).data(), named(theirs, "beta"), 6) <= 1e-10);
  std::remove(in.c_str());
  std::remove(out.c_str());
}

TEST_CASE("the transformer block's gradients, against PyTorch's autograd (float)") {
  if (!have_torch()) {
    MESSAGE("PyTorch is not installed for /usr/bin/python3: the comparison is skipped");
    return;
  }
  using namespace encoder;
  const auto loss_of = [](auto x, auto g1, auto be1, auto wq, auto wk, auto wv, auto wo, auto g2,
                          auto be2, auto w1, auto b1, auto w2, auto b2) {
    auto y = block(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2);
    return nax::mean<batch, seq>(nax::sum<model>(y * y));
  };
  auto step = nax::value_and_grad(
      loss_of, nax::data<float, batch, seq, model>("x"), nax::input<float, model>("g1"),
      nax::input<float, model>("be1"), nax::input<float, model, attn>("wq"),
      nax::input<float, model, attn>("wk"), nax::input<float, model, attn>("wv"),
      nax::input<float, attn, model>("wo"), nax::input<float, model>("g2"),
      nax::input<float, model>("be2"), nax::input<float, model, ff>("w1"),
      nax::input<float, ff>("b1"), nax::input<float, ff, model>("w2"),
      nax::input<float, model>("b2"));
  const weights w(11);
  const auto x =
      nax::normal<float, batch, seq, model>(nax::rng{9, 0}, 0.0f, 1.0f, batch(2), seq(7));
  const auto r = w.apply([&](const auto& data, const auto&... p) { return step(data, p...); }, x);
  const std::string in = temp("enc_in.npz"), out = temp("enc_out.npz");
  using nax::io::to_dyn;
  nax::io::save_npz(in, {{"x", to_dyn(x)},
                         {"g1", to_dyn(w.g1)},
                         {"be1", to_dyn(w.be1)},
                         {"wq", to_dyn(w.wq)},
                         {"wk", to_dyn(w.wk)},
                         {"wv", to_dyn(w.wv)},
                         {"wo", to_dyn(w.wo)},
                         {"g2", to_dyn(w.g2)},
                         {"be2", to_dyn(w.be2)},
                         {"w1", to_dyn(w.w1)},
                         {"b1", to_dyn(w.b1)},
                         {"w2", to_dyn(w.w2)},
                         {"b2", to_dyn(w.b2)}});
  run_python(R"(
d = {k: torch.from_numpy(v) for k, v in np.load(IN).items()}
names = ['g1', 'be1', 'wq', 'wk', 'wv', 'wo', 'g2', 'be2', 'w1', 'b1', 'w2', 'b2']
t = {k: d[k].clone().requires_grad_(True) for k in names}
x = d['x']
b, s, m = x.shape
a = F.layer_norm(x, (m,), t['g1'], t['be1'], 1e-5)
q = (a @ t['wq']).view(b, s, 4, -1).transpose(1, 2)
k = (a @ t['wk']).view(b, s, 4, -1).transpose(1, 2)
v = (a @ t['wv']).view(b, s, 4, -1).transpose(1, 2)
scores = (q @ k.transpose(-1, -2)) * 0.25
causal = torch.ones(s, s, dtype=torch.bool).tril()
p = torch.softmax(scores.masked_fill(~causal, -1e9), dim=-1)
o = (p @ v).transpose(1, 2).reshape(b, s, -1)
h = x + o @ t['wo']
c = F.layer_norm(h, (m,), t['g2'], t['be2'], 1e-5)
y = h + F.gelu(c @ t['w1'] + t['b1']) @ t['w2'] + t['b2']
(y * y).sum(-1).mean().backward()
np.savez(OUT, **{k: t[k].grad.numpy() for k in names})
)",
             in, out);
  const std::vector<nax::io::named_tensor> theirs = nax::io::load_npz(out);
  const char* names[] = {"g1", "be1", "wq", "wk", "wv", "wo", "g2", "be2", "w1", "b1", "w2", "b2"};
  std::size_t i = 0;
  auto check = [&](const auto& grad) {
    CAPTURE(names[i]);
    CHECK(difference(grad.data(), named(theirs, names[i]), grad.size()) <= 2e-4);
    ++i;
  };
  std::apply([&](const auto&... grad) { (check(grad), ...); }, r.grads);
  std::remove(in.c_str());
  std::remove(out.c_str());
}
