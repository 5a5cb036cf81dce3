// Node classification with a 2-layer graph attention network (nax::gnn::gat), trained with a
// backward pass written by hand: nax::gnn::gat_grad for the attention layers, nax::dot by name
// for the products and their gradients, AdamW (nax::optim::adamw) for the updates.
//
// The graph is generated: a stochastic block model of 4 communities of 200 nodes, each node
// linked to about 10 nodes of its own community and 2 of the others (edges both ways) and to
// itself. A node's features are a weak, noisy signal of its community: the community's mean (a
// random direction of norm 1.2) plus unit noise in each of 16 dimensions. About 15% of the nodes
// are labelled (the training set); the others are the test set.
//
//   layer 1: x W1 -> [node, head, hid] (4 heads of 8) -> gat -> + b1 -> ELU       = h1
//   layer 2: h1 W2 -> [node, one, cls] (one head over the 4 classes) -> gat -> + b2 = logits
//   loss:    softmax cross-entropy over the labelled nodes, 40 full-graph steps
//
// The baseline is the same model trained on the graph reduced to its self-loops: every node
// attends to itself alone, an MLP of its own features. Exits 0 if the GAT's test accuracy reaches
// 90% and beats the baseline's by 20 points, 1 otherwise. Measured with this seed: 96.8% against
// 51.7% (other seeds: 96-99% against 40-52%), in 0.2 s (6 s in a Debug build with ASan).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include <nax/gnn/gat.hpp>
#include <nax/gnn/gat_grad.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/dot.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/optim.hpp>
#include <nax/typed/random.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/softmax.hpp>

namespace gnn = nax::gnn;
using gnn::node;
using in = nax::axis<"in", 16>;
using head = nax::axis<"head", 4>;
using hid = nax::axis<"hid", 8>;
using one = nax::axis<"one", 1>;  // layer 2's single head
using cls = nax::axis<"cls", 4>;

constexpr std::size_t communities = cls::static_extent, per_community = 200,
                      nodes = communities * per_community;
constexpr float slope = 0.2f;  // the leaky ReLU of the attention scores
constexpr int steps = 40;
constexpr double goal = 0.90, margin = 0.20;

struct dataset {
  gnn::csr graph, self_loops;
  nax::tensor<float, node, in> x;
  nax::tensor<float, node, cls> onehot;
  nax::tensor<float, node> labelled;  // 1 on the training nodes, 0 on the test nodes
  std::vector<std::size_t> label;
};

dataset generate(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::size_t> label(nodes);
  for (std::size_t v = 0; v < nodes; ++v) label[v] = v % communities;

  // Each pair linked with its own probability: ~10 neighbours inside, ~2 across.
  const double inside = 10.0 / per_community, across = 2.0 / (nodes - per_community);
  std::vector<std::int32_t> src, dst;
  for (std::size_t u = 0; u < nodes; ++u) {
    src.push_back(static_cast<std::int32_t>(u));
    dst.push_back(static_cast<std::int32_t>(u));
    for (std::size_t v = u + 1; v < nodes; ++v)
      if (uniform(rng) < (label[u] == label[v] ? inside : across)) {
        src.insert(src.end(), {static_cast<std::int32_t>(u), static_cast<std::int32_t>(v)});
        dst.insert(dst.end(), {static_cast<std::int32_t>(v), static_cast<std::int32_t>(u)});
      }
  }
  std::vector<std::int32_t> loops(nodes);
  for (std::size_t v = 0; v < nodes; ++v) loops[v] = static_cast<std::int32_t>(v);

  // The communities' means: random directions of norm 1.2.
  std::vector<float> mean(communities * in::static_extent);
  for (std::size_t c = 0; c < communities; ++c) {
    float norm = 0;
    for (std::size_t i = 0; i < in::static_extent; ++i) {
      const float m = normal(rng);
      mean[c * in::static_extent + i] = m;
      norm += m * m;
    }
    for (std::size_t i = 0; i < in::static_extent; ++i)
      mean[c * in::static_extent + i] *= 1.2f / std::sqrt(norm);
  }
  dataset d{gnn::csr::from_edges(nodes, src, dst),     gnn::csr::from_edges(nodes, loops, loops),
            nax::tensor<float, node, in>(node(nodes)), nax::zeros<float, node, cls>(node(nodes)),
            nax::zeros<float, node>(node(nodes)),      label};
  for (std::size_t v = 0; v < nodes; ++v) {
    for (std::size_t i = 0; i < in::static_extent; ++i)
      d.x(v, i) = mean[label[v] * in::static_extent + i] + normal(rng);
    d.onehot(v, label[v]) = 1;
    d.labelled(v) = uniform(rng) < 0.15 ? 1.0f : 0.0f;
  }
  return d;
}

// A parameter and its AdamW moments.
template <class... A>
struct param {
  nax::tensor<float, A...> w;
  nax::optim::adamw::state<float, A...> s;
  explicit param(nax::tensor<float, A...> init)
      : w(std::move(init)), s(nax::optim::adamw{}.init(w)) {}
};

struct model {
  param<in, head, hid> w1;
  param<head, hid> a1_src, a1_dst, b1;
  param<head, hid, one, cls> w2;
  param<one, cls> a2_src, a2_dst, b2;
};

// Normal weights scaled by 1 / sqrt(fan-in); biases zero.
model initial_model() {
  auto normal = [](std::uint64_t stream, double stddev, auto... axes) {
    return nax::normal<float, decltype(axes)...>(nax::rng{42, stream}, 0.0, stddev);
  };
  return {param(normal(0, 1 / std::sqrt(16.0), in{}, head{}, hid{})),
          param(normal(1, 1 / std::sqrt(8.0), head{}, hid{})),
          param(normal(2, 1 / std::sqrt(8.0), head{}, hid{})),
          param(nax::zeros<float, head, hid>()),
          param(normal(3, 1 / std::sqrt(32.0), head{}, hid{}, one{}, cls{})),
          param(normal(4, 1 / std::sqrt(4.0), one{}, cls{})),
          param(normal(5, 1 / std::sqrt(4.0), one{}, cls{})),
          param(nax::zeros<float, one, cls>())};
}

// What the backward pass reads of the forward.
struct activations {
  nax::tensor<float, node, head, hid> z1, p1, h1;  // x W1; its attention + b1; ELU of that
  nax::tensor<float, node, one, cls> z2, logits;   // h1 W2; its attention + b2
};

activations forward(const gnn::csr& g, const model& m, const nax::tensor<float, node, in>& x) {
  nax::tensor<float, node, head, hid> z1 = nax::dot<in>(x, m.w1.w);
  nax::tensor<float, node, head, hid> p1 = gnn::gat(g, z1, m.a1_src.w, m.a1_dst.w, slope) + m.b1.w;
  nax::tensor<float, node, head, hid> h1 =
      nax::where(p1 > 0.0f, p1, nax::exp(nax::min(p1, 0.0f)) - 1.0f);
  nax::tensor<float, node, one, cls> z2 = nax::dot<head, hid>(h1, m.w2.w);
  nax::tensor<float, node, one, cls> logits =
      gnn::gat(g, z2, m.a2_src.w, m.a2_dst.w, slope) + m.b2.w;
  return {std::move(z1), std::move(p1), std::move(h1), std::move(z2), std::move(logits)};
}

// The fraction of the nodes with `labelled` == want whose largest logit is their class's.
double accuracy(const dataset& d, const nax::tensor<float, node, one, cls>& logits, float want) {
  std::size_t right = 0, count = 0;
  for (std::size_t v = 0; v < nodes; ++v) {
    if (d.labelled(v) != want) continue;
    std::size_t best = 0;
    for (std::size_t c = 1; c < communities; ++c)
      if (logits(v, 0, c) > logits(v, 0, best)) best = c;
    right += best == d.label[v];
    ++count;
  }
  return double(right) / double(count);
}

// One step: the loss over the labelled nodes and its gradients by hand, then AdamW. Returns the
// loss and the logits it was computed from (those of the parameters before the step).
std::pair<double, nax::tensor<float, node, one, cls>> train_step(const gnn::csr& g, model& m,
                                                                 const dataset& d,
                                                                 const nax::optim::adamw& opt) {
  activations a = forward(g, m, d.x);
  const nax::tensor<float, node, one, cls> logp = nax::log_softmax<cls>(a.logits);
  const double labelled = nax::sum<node>(d.labelled)();
  const double loss = -nax::sum<node, one, cls>(logp * d.onehot * d.labelled)() / labelled;

  // Layer 2: d logits = (softmax - onehot) / labelled on the labelled nodes.
  const nax::tensor<float, node, one, cls> dlogits =
      (nax::exp(logp) - d.onehot) * d.labelled * float(1 / labelled);
  const nax::tensor<float, one, cls> db2 = nax::sum<node>(dlogits);
  const auto g2 = gnn::gat_grad(g, a.z2, m.a2_src.w, m.a2_dst.w, slope, dlogits);
  const nax::tensor<float, head, hid, one, cls> dw2 = nax::dot<node>(a.h1, g2.h);
  const nax::tensor<float, node, head, hid> dh1 = nax::dot<one, cls>(g2.h, m.w2.w);

  // Layer 1: ELU's derivative is 1 above 0, exp(p) = ELU(p) + 1 below.
  const nax::tensor<float, node, head, hid> dp1 = nax::where(a.p1 > 0.0f, dh1, dh1 * (a.h1 + 1.0f));
  const nax::tensor<float, head, hid> db1 = nax::sum<node>(dp1);
  const auto g1 = gnn::gat_grad(g, a.z1, m.a1_src.w, m.a1_dst.w, slope, dp1);
  const nax::tensor<float, in, head, hid> dw1 = nax::dot<node>(d.x, g1.h);

  opt.step(m.w1.w, dw1, m.w1.s);
  opt.step(m.a1_src.w, g1.a_src, m.a1_src.s);
  opt.step(m.a1_dst.w, g1.a_dst, m.a1_dst.s);
  opt.step(m.b1.w, db1, m.b1.s);
  opt.step(m.w2.w, dw2, m.w2.s);
  opt.step(m.a2_src.w, g2.a_src, m.a2_src.s);
  opt.step(m.a2_dst.w, g2.a_dst, m.a2_dst.s);
  opt.step(m.b2.w, db2, m.b2.s);
  return {loss, std::move(a.logits)};
}

// Trains a fresh model on g; returns its test accuracy.
double train(const char* name, const gnn::csr& g, const dataset& d) {
  model m = initial_model();
  const nax::optim::adamw opt{.lr = 0.02, .weight_decay = 5e-4};
  for (int k = 0; k < steps; ++k) {
    const auto [loss, logits] = train_step(g, m, d, opt);
    if (k % 10 == 0)
      std::printf("%s, step %2d: loss %.4f, train accuracy %.3f, test accuracy %.3f\n", name, k,
                  loss, accuracy(d, logits, 1.0f), accuracy(d, logits, 0.0f));
  }
  const double test = accuracy(d, forward(g, m, d.x).logits, 0.0f);
  std::printf("%s, after %d steps: test accuracy %.3f\n", name, steps, test);
  return test;
}

int main() {
  const auto start = std::chrono::steady_clock::now();
  const dataset d = generate(7);
  const gnn::degree_stats s = d.graph.degrees();
  std::printf(
      "graph: %zu nodes in %zu communities, %zu edges (%.1f per node, self-loops included)"
      ", %.0f labelled\n",
      nodes, communities, d.graph.num_edges(), s.mean, nax::sum<node>(d.labelled)());
  const double gat = train("GAT", d.graph, d);
  const double baseline = train("features only", d.self_loops, d);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "test accuracy: GAT %.3f, features only %.3f (goal: %.2f, and %.2f above the "
      "baseline), in %.2f s\n",
      gat, baseline, goal, margin, seconds);
  return gat >= goal && gat >= baseline + margin ? 0 : 1;
}
