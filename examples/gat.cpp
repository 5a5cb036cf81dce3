// Node classification with a 2-layer graph attention network (nax::gnn::gat). The model is its
// forward alone, a loss function of typed ops and gnn layers; nax::value_and_grad traces it and
// gives the loss and the gradients (the gat layers' VJPs are gnn::gat_grad), AdamW
// (nax::optim::adamw) updates the parameters, and nax::jit of the logits gives the accuracies.
//
// The graph is generated: a stochastic block model of 4 communities of 200 nodes, each node
// linked to about 10 nodes of its own community and 2 of the others (edges both ways) and to
// itself. A node's features are a weak, noisy signal of its community: the community's mean (a
// random direction of norm 1.2) plus unit noise in each of 16 dimensions. About 15% of the nodes
// are labelled (the training set); the others are the test set.
//
//   layer 1: x W1 -> [node, head, hid] (4 heads of 8) -> gat -> + b1 -> ELU       = h1
//   layer 2: h1 W2 -> [node, one, cls] (one head over the 4 classes) -> gat -> + b2 = logits
//   loss:    softmax cross-entropy over the labelled nodes (a 0/1 mask as data), 40 full-graph
//            steps
//
// The baseline is the same model trained on the graph reduced to its self-loops: every node
// attends to itself alone, an MLP of its own features. Exits 0 if the GAT's test accuracy reaches
// 90% and beats the baseline's by 20 points, 1 otherwise. Measured with this seed: 96.8% against
// 51.7% (other seeds: 96-99% against 40-52%), in 0.3 s (8 s in a Debug build with ASan).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <nax/gnn/traced.hpp>
#include <nax/jit/value_and_grad.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/optim.hpp>
#include <nax/typed/random.hpp>
#include <nax/typed/reduce.hpp>

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

// ELU: x above 0, exp(x) - 1 below (min keeps exp finite on the side where unused).
const auto elu = [](auto x) { return nax::where(x > 0.0f, x, nax::exp(nax::min(x, 0.0f)) - 1.0f); };

// The model's logits on graph g, traced: the gnn layers take nodes, hence the nax::eval.
auto logits_on(const gnn::csr& g) {
  return [&g](auto x, auto w1, auto a1_src, auto a1_dst, auto b1, auto w2, auto a2_src, auto a2_dst,
              auto b2) {
    auto z1 = nax::eval(nax::dot<in>(x, w1));  // [node, head, hid]
    auto h1 = elu(gnn::gat(g, z1, a1_src, a1_dst, slope) + b1);
    auto z2 = nax::eval(nax::dot<head, hid>(h1, w2));  // [node, one, cls]
    return gnn::gat(g, z2, a2_src, a2_dst, slope) + b2;
  };
}

// The softmax cross-entropy over the labelled nodes (labelled: 1 on them, 0 elsewhere).
auto loss_on(const gnn::csr& g) {
  return [logits = logits_on(g)](auto x, auto onehot, auto labelled, auto... params) {
    auto logp = nax::log_softmax<cls>(logits(x, params...));
    return -nax::sum<node, one, cls>(logp * onehot * labelled) / nax::sum<node>(labelled);
  };
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

// Trains a fresh model on g; returns its test accuracy.
double train(const char* name, const gnn::csr& g, const dataset& d) {
  const auto w1 = nax::input<float, in, head, hid>("w1");
  const auto a1_src = nax::input<float, head, hid>("a1_src"),
             a1_dst = nax::input<float, head, hid>("a1_dst"),
             b1 = nax::input<float, head, hid>("b1");
  const auto w2 = nax::input<float, head, hid, one, cls>("w2");
  const auto a2_src = nax::input<float, one, cls>("a2_src"),
             a2_dst = nax::input<float, one, cls>("a2_dst"), b2 = nax::input<float, one, cls>("b2");
  auto step = nax::value_and_grad(
      loss_on(g), nax::data<float, node, in>("x"), nax::data<float, node, cls>("onehot"),
      nax::data<float, node>("labelled"), w1, a1_src, a1_dst, b1, w2, a2_src, a2_dst, b2);
  auto predict = nax::jit(logits_on(g), nax::input<float, node, in>("x"), w1, a1_src, a1_dst, b1,
                          w2, a2_src, a2_dst, b2);

  model m = initial_model();
  const auto logits = [&] {
    return predict(d.x, m.w1.w, m.a1_src.w, m.a1_dst.w, m.b1.w, m.w2.w, m.a2_src.w, m.a2_dst.w,
                   m.b2.w);
  };
  const nax::optim::adamw opt{.lr = 0.02, .weight_decay = 5e-4};
  for (int k = 0; k < steps; ++k) {
    const auto [loss, grads] = step(d.x, d.onehot, d.labelled, m.w1.w, m.a1_src.w, m.a1_dst.w,
                                    m.b1.w, m.w2.w, m.a2_src.w, m.a2_dst.w, m.b2.w);
    if (k % 10 == 0) {  // the parameters the loss was computed from, before the step
      const auto l = logits();
      std::printf("%s, step %2d: loss %.4f, train accuracy %.3f, test accuracy %.3f\n", name, k,
                  double(loss()), accuracy(d, l, 1.0f), accuracy(d, l, 0.0f));
    }
    opt.step(m.w1.w, std::get<0>(grads), m.w1.s);
    opt.step(m.a1_src.w, std::get<1>(grads), m.a1_src.s);
    opt.step(m.a1_dst.w, std::get<2>(grads), m.a1_dst.s);
    opt.step(m.b1.w, std::get<3>(grads), m.b1.s);
    opt.step(m.w2.w, std::get<4>(grads), m.w2.s);
    opt.step(m.a2_src.w, std::get<5>(grads), m.a2_src.s);
    opt.step(m.a2_dst.w, std::get<6>(grads), m.a2_dst.s);
    opt.step(m.b2.w, std::get<7>(grads), m.b2.s);
  }
  const double test = accuracy(d, logits(), 0.0f);
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
