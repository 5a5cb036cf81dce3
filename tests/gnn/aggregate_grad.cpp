// The VJPs of gnn/aggregate_grad.hpp: against plain loops in double that scatter each edge's
// cotangent to its source, on random graphs (empty, isolated nodes, self-loops, multi-edges, one
// node with most edges); against central differences of L(h) = sum of aggregate(h) ⊙ R in
// double; the same bits on 1 and 2 threads; a cotangent over the wrong node count refused.
#include <nax/gnn/aggregate_grad.hpp>
#include <nax/typed/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "support/bits.hpp"
#include "support/threads.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 3>;
using feat = nax::axis<"feat", 11>;  // rows of 33: vectors and a tail
using wide = nax::axis<"wide", 70>;  // rows of 70 floats: sum_rows' blocks of 8 vectors too

namespace {

using nax_test::threads_guard;

using nax_test::same_bits;

// A random graph of n nodes and e edges, a share `hub` of them into node 0 and as many out of
// node 1 (the transpose's hub).
gnn::csr random_graph(std::size_t n, std::size_t e, double hub, std::mt19937& rng) {
  std::vector<std::int32_t> src(e), dst(e);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < e; ++i) {
    src[i] = u(rng) < hub ? 1 % static_cast<std::int32_t>(n) : static_cast<std::int32_t>(rng() % n);
    dst[i] = u(rng) < hub ? 0 : static_cast<std::int32_t>(rng() % n);
  }
  return gnn::csr::from_edges(n, src, dst);
}

// The reference in double, edge by edge in the forward's grouping (by destination), each edge's
// term added to its source: kind 0 sum, 1 mean, 2 gcn. In `size`, the sum of the terms'
// magnitudes (a float sum of k terms may be off by about k ulps of it).
std::vector<double> reference(const gnn::csr& g, const float* dout, std::size_t f, int kind,
                              std::vector<double>& size) {
  const std::size_t n = g.num_nodes();
  std::vector<double> dh(n * f, 0.0);
  size.assign(n * f, 0.0);
  std::vector<std::size_t> out(n, 0);
  for (std::int32_t u : g.sources()) ++out[static_cast<std::size_t>(u)];
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t in = g.in_degree(v);
    for (std::int64_t e = g.offsets()[v]; e < g.offsets()[v + 1]; ++e) {
      const auto u = static_cast<std::size_t>(g.sources()[static_cast<std::size_t>(e)]);
      double w = 1;
      if (kind == 1) w = 1 / double(in);
      if (kind == 2)
        w = 1 / std::sqrt(double(std::max<std::size_t>(1, out[u])) *
                          double(std::max<std::size_t>(1, in)));
      for (std::size_t i = 0; i < f; ++i) {
        dh[u * f + i] += w * dout[v * f + i];
        size[u * f + i] += std::abs(w * dout[v * f + i]);
      }
    }
  }
  return dh;
}

template <class T, class... Axes>
nax::tensor<T, gnn::node, Axes...> forward(int kind, const gnn::csr& g,
                                           const nax::tensor<T, gnn::node, Axes...>& h) {
  return kind == 0   ? gnn::aggregate_sum(g, h)
         : kind == 1 ? gnn::aggregate_mean(g, h)
                     : gnn::gcn(g, h);
}

template <class T, class... Axes>
nax::tensor<T, gnn::node, Axes...> backward(int kind, const gnn::csr& g,
                                            const nax::tensor<T, gnn::node, Axes...>& dout) {
  return kind == 0   ? gnn::aggregate_sum_grad(g, dout)
         : kind == 1 ? gnn::aggregate_mean_grad(g, dout)
                     : gnn::gcn_grad(g, dout);
}

}  // namespace

TEST_CASE("the aggregations' VJPs match plain loops; 1 and 2 threads give the same bits") {
  threads_guard guard;
  std::mt19937 rng(19);
  struct shape_case {
    std::size_t n, e;
    double hub;
  };
  for (const shape_case c :
       {shape_case{0, 0, 0}, shape_case{1, 0, 0}, shape_case{1, 3, 0}, shape_case{7, 3, 0},
        shape_case{50, 400, 0}, shape_case{600, 6000, 0.4}}) {
    CAPTURE(c.n);
    CAPTURE(c.e);
    const gnn::csr g = random_graph(c.n, c.e, c.hub, rng);
    const std::size_t n = g.num_nodes();
    REQUIRE(n == c.n);
    const auto dout =
        nax::uniform<float, gnn::node, head, feat>(nax::rng{7, n}, -1.0f, 1.0f, gnn::node{n});
    const auto dwide =
        nax::uniform<float, gnn::node, wide>(nax::rng{8, n}, -1.0f, 1.0f, gnn::node{n});
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(kind);
      nax::set_num_threads(1);
      const auto one = backward(kind, g, dout);
      const auto one_wide = backward(kind, g, dwide);
      nax::set_num_threads(2);
      const auto two = backward(kind, g, dout);
      const auto two_wide = backward(kind, g, dwide);
      REQUIRE(one.size() == dout.size());
      CHECK(same_bits(one, two));
      CHECK(same_bits(one_wide, two_wide));
      // A float sum of k terms is within k + 2 units of rounding (2^-24) of the sum of their
      // magnitudes (the weight's rounding counted); the hub's sums are of thousands of terms.
      double worst = 0;
      auto compare = [&](const float* got, const float* x, std::size_t f) {
        std::vector<double> size;
        const std::vector<double> want = reference(g, x, f, kind, size);
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double terms = double(g.out_degree(i / f) + 2);
          worst = std::max(worst, std::abs(got[i] - want[i]) / (terms * 0x1p-24 * size[i] + 1e-30));
        }
      };
      compare(one.data(), dout.data(), 33);
      compare(one_wide.data(), dwide.data(), 70);
      CHECK(worst <= 1);
    }
  }
}

TEST_CASE("the aggregations' VJPs are the central differences of sum(aggregate(h) ⊙ R)") {
  // Self-loops (2 -> 2), a double edge (0 -> 1 twice), a node with no in-edges (4) and one with
  // no out-edges (3).
  const std::int32_t src[] = {0, 0, 2, 1, 2, 0, 1, 5, 5, 5};
  const std::int32_t dst[] = {1, 1, 2, 2, 3, 3, 0, 0, 1, 5};
  const gnn::csr g = gnn::csr::from_edges(6, src, dst);
  using f4 = nax::axis<"f", 4>;
  auto h = nax::uniform<double, gnn::node, f4>(nax::rng{11, 0}, -1.0, 1.0, gnn::node{6});
  const auto r = nax::uniform<double, gnn::node, f4>(nax::rng{12, 0}, -1.0, 1.0, gnn::node{6});
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(kind);
    auto loss = [&] {
      const auto out = forward(kind, g, h);
      double l = 0;
      for (std::size_t i = 0; i < out.size(); ++i) l += out.data()[i] * r.data()[i];
      return l;
    };
    const auto dh = backward(kind, g, r);
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double x = h.data()[i], eps = 1e-5;
      h.data()[i] = x + eps;
      const double up = loss();
      h.data()[i] = x - eps;
      const double down = loss();
      h.data()[i] = x;
      worst = std::max(worst, std::abs((up - down) / (2 * eps) - dh.data()[i]));
      largest = std::max(largest, std::abs(dh.data()[i]));
    }
    CHECK(largest > 0.5);  // the check compares something
    CHECK(worst <= 1e-9);  // linear in h: the differences are exact up to rounding
  }
}

TEST_CASE("a cotangent over a node count that is not the graph's is refused, naming the op") {
  const std::int32_t src[] = {0, 1}, dst[] = {1, 2};
  const gnn::csr g = gnn::csr::from_edges(3, src, dst);
  const auto dout = nax::zeros<float, gnn::node, feat>(gnn::node{4});
  CHECK_THROWS_WITH_AS(gnn::aggregate_sum_grad(g, dout),
                       "nax::gnn::aggregate_sum_grad: dout has 4 nodes, the graph 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(gnn::aggregate_mean_grad(g, dout),
                       "nax::gnn::aggregate_mean_grad: dout has 4 nodes, the graph 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(gnn::gcn_grad(g, dout), "nax::gnn::gcn_grad: dout has 4 nodes, the graph 3",
                       nax::shape_error);
}
