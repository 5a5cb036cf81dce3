// gnn::zoom_in_grad (gnn/vertex/gradient.hpp) against central differences in double, for
// programs that cover every aggregation, op and scope: GAT the seed's way with a residual, a
// one-pass softmax with scores per head and per feature, mean and max, nested aggregations, edge
// weights, a tensor read as source and as destination, broadcast parameters; on random graphs
// (empty, isolated nodes, self-loops, multi-edges, a hub); the same bits on 1 and 2 threads;
// mistakes named.
#include <nax/gnn/vertex.hpp>
#include <nax/typed/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include "../graphs.hpp"
#include "support/sanitizers.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 2>;
using feat = nax::axis<"feat", 11>;  // a vector and a tail (AVX2 doubles: 2 vectors and 3)

namespace {

struct inputs {
  nax::tensor<double, gnn::node, head, feat> h;
  nax::tensor<double, gnn::node, head> el;
  nax::tensor<double, gnn::node> s;
  nax::tensor<double, gnn::edge> w;
  nax::tensor<double, feat> p;
  nax::tensor<double, head, feat> q;
};

inputs make_inputs(const gnn::csr& g, std::uint64_t seed) {
  const std::size_t n = g.num_nodes();
  return {nax::uniform<double, gnn::node, head, feat>(nax::rng{seed, 1}, -1.0, 1.0, gnn::node{n}),
          nax::uniform<double, gnn::node, head>(nax::rng{seed, 2}, -1.0, 1.0, gnn::node{n}),
          nax::uniform<double, gnn::node>(nax::rng{seed, 3}, -1.0, 1.0, gnn::node{n}),
          nax::uniform<double, gnn::edge>(nax::rng{seed, 4}, -1.0, 1.0, gnn::edge{g.num_edges()}),
          nax::uniform<double, feat>(nax::rng{seed, 5}, -1.0, 1.0),
          nax::uniform<double, head, feat>(nax::rng{seed, 6}, -1.0, 1.0)};
}

// Checks the gradient of sum(dout * program) with respect to t at up to 24 of its entries (6
// under a sanitizer, where each difference takes two slow forward runs) against central
// differences.
template <class Program, class Dout, class Grads, class X>
void check_entries(const gnn::csr& g, Program& program, const Dout& dout, const Grads& grads, X& t,
                   std::mt19937& rng) {
  const auto d = grads.of(t);
  const auto loss = [&] {
    const auto out = gnn::zoom_in(g, program);
    double total = 0;
    for (std::size_t i = 0; i < out.size(); ++i) total += out.data()[i] * dout.data()[i];
    return total;
  };
  for (std::size_t k = 0; k < nax_test::sweep(24, 6) && t.size() > 0; ++k) {
    const std::size_t i = rng() % t.size();
    const double keep = t.data()[i], eps = 1e-6;
    t.data()[i] = keep + eps;
    const double up = loss();
    t.data()[i] = keep - eps;
    const double down = loss();
    t.data()[i] = keep;
    const double want = (up - down) / (2 * eps);
    CHECK(std::abs(d.data()[i] - want) <= 1e-6 * (1 + std::abs(want)));
  }
}

template <class Program, class... X>
void check_program(const gnn::csr& g, Program program, std::mt19937& rng, X&... tensors) {
  gnn_test::threads_guard guard;
  const auto out = gnn::zoom_in(g, program);
  using Out = std::remove_cvref_t<decltype(out)>;
  Out dout = nax::zeros_like(out);
  std::uniform_real_distribution<double> pick(-1.0, 1.0);
  for (std::size_t i = 0; i < dout.size(); ++i) dout.data()[i] = pick(rng);
  nax::set_num_threads(1);
  const auto grads = gnn::zoom_in_grad(g, program, dout);
  (check_entries(g, program, dout, grads, tensors, rng), ...);
  nax::set_num_threads(2);
  const auto again = gnn::zoom_in_grad(g, program, dout);
  const auto same = [&](const auto& t) {
    const auto a = grads.of(t), b = again.of(t);
    return a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  };
  CHECK((same(tensors) && ...));
}

}  // namespace

TEST_CASE("GAT the seed's way, with parameters and a residual: gradients of h, el and p") {
  std::mt19937 rng(31);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    inputs x = make_inputs(g, 1);
    check_program(
        g,
        [&](const gnn::vertex& v) {
          auto coeff = gnn::exp(gnn::leaky_relu(v.src(x.el) + v.dst(x.el), 0.2));
          auto alpha = coeff / gnn::sum(coeff);
          return gnn::tanh(gnn::sum(alpha * v.src(x.h) * v.param(x.p)) + v.dst(x.h));
        },
        rng, x.h, x.el, x.p);
  }
}

TEST_CASE("softmax_sum with scores per head and per feature, and edge weights in the scores") {
  std::mt19937 rng(32);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    inputs x = make_inputs(g, 2);
    check_program(
        g,
        [&](const gnn::vertex& v) {
          return gnn::softmax_sum(gnn::leaky_relu(v.src(x.el) * v.edge(x.w) + v.dst(x.el), 0.2),
                                  v.src(x.h));
        },
        rng, x.h, x.el, x.w);
    check_program(
        g,
        [&](const gnn::vertex& v) {
          return gnn::softmax_sum(v.src(x.h) * v.param(x.q), gnn::sigmoid(v.src(x.h)));
        },
        rng, x.h, x.q);
  }
}

TEST_CASE("mean and max, ops on both sides of a tensor read as source and destination") {
  std::mt19937 rng(33);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    inputs x = make_inputs(g, 3);
    check_program(
        g,
        [&](const gnn::vertex& v) {
          return gnn::mean(gnn::elu(v.src(x.h) - v.dst(x.h) * 0.5)) *
                 gnn::max(v.src(x.h) * v.dst(x.h) / (v.param(x.q) * v.param(x.q) + 1.0));
        },
        rng, x.h, x.q);
  }
}

TEST_CASE("nested aggregations and values per node (rank 0) with edge weights") {
  std::mt19937 rng(34);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    inputs x = make_inputs(g, 4);
    check_program(
        g,
        [&](const gnn::vertex& v) {
          auto centred = v.src(x.s) * v.edge(x.w) - gnn::mean(v.src(x.s) * v.edge(x.w));
          auto var = gnn::mean(centred * centred);
          return gnn::sum(gnn::relu(centred) / (var + 1.0)) + var * v.dst(x.s) - 2.0;
        },
        rng, x.s, x.w);
  }
}

TEST_CASE("zoom_in_grad names its mistakes") {
  std::mt19937 rng(35);
  using dyn = nax::axis<"dyn">;
  const gnn::csr g = gnn_test::random_graph(5, 9, 0.0, rng);
  const auto h = nax::zeros<double, gnn::node, dyn>(gnn::node{5}, dyn{3});
  const auto other = nax::zeros<double, gnn::node, dyn>(gnn::node{5}, dyn{3});
  const auto program = [&](const gnn::vertex& v) { return gnn::sum(v.src(h)); };
  const auto grads =
      gnn::zoom_in_grad(g, program, nax::zeros<double, gnn::node, dyn>(gnn::node{5}, dyn{3}));
  CHECK_THROWS_WITH_AS(grads.of(other),
                       "nax::gnn::vertex_grads::of: the program does not read this tensor (pass "
                       "the tensor itself, not a copy)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      gnn::zoom_in_grad(g, program, nax::zeros<double, gnn::node, dyn>(gnn::node{5}, dyn{4})),
      "nax::gnn::zoom_in_grad: axis 'dyn' mismatch: the result has 3, dout has 4",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(
      gnn::zoom_in_grad(g, program, nax::zeros<double, gnn::node, dyn>(gnn::node{6}, dyn{3})),
      "nax::gnn::zoom_in_grad: h has 6 nodes, the graph 5", nax::shape_error);
}
