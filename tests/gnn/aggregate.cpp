// The aggregations of gnn/aggregate.hpp against plain loops in double on random graphs (empty,
// isolated nodes, self-loops, multi-edges, one node with most edges), the same bits on 1 and 2
// threads, and a node count that is not the graph's refused.
#include <nax/gnn/aggregate.hpp>
#include <nax/typed/random.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "support/threads.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 3>;
using feat = nax::axis<"feat", 11>;  // rows of 33: vectors and a tail

namespace {

using nax_test::threads_guard;

// A random graph of n nodes and e edges, a share `hub` of them into node 0.
gnn::csr random_graph(std::size_t n, std::size_t e, double hub, std::mt19937& rng) {
  std::vector<std::int32_t> src(e), dst(e);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < e; ++i) {
    src[i] = static_cast<std::int32_t>(rng() % n);
    dst[i] = u(rng) < hub ? 0 : static_cast<std::int32_t>(rng() % n);
  }
  return gnn::csr::from_edges(n, src, dst);
}

// The reference in double: kind 0 sum, 1 mean, 2 gcn; in `size`, the sum of the terms' magnitudes
// (a float sum of k terms may be off by about k ulps of it).
std::vector<double> reference(const gnn::csr& g, const float* h, std::size_t f, int kind,
                              std::vector<double>& size) {
  const std::size_t n = g.num_nodes();
  std::vector<double> out(n * f, 0.0);
  size.assign(n * f, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t in = g.in_degree(v);
    for (std::int64_t e = g.offsets()[v]; e < g.offsets()[v + 1]; ++e) {
      const auto u = static_cast<std::size_t>(g.sources()[static_cast<std::size_t>(e)]);
      double w = 1;
      if (kind == 2)
        w = 1 / std::sqrt(double(std::max<std::size_t>(1, g.out_degree(u))) *
                          double(std::max<std::size_t>(1, in)));
      for (std::size_t i = 0; i < f; ++i) {
        out[v * f + i] += w * h[u * f + i];
        size[v * f + i] += std::abs(w * h[u * f + i]);
      }
    }
    if (kind == 1 && in > 0)
      for (std::size_t i = 0; i < f; ++i) {
        out[v * f + i] /= double(in);
        size[v * f + i] /= double(in);
      }
  }
  return out;
}

}  // namespace

TEST_CASE("sum, mean and gcn match plain loops; 1 and 2 threads give the same bits") {
  threads_guard guard;
  std::mt19937 rng(12);
  struct shape_case {
    std::size_t n, e;
    double hub;
  };
  for (const shape_case c :
       {shape_case{0, 0, 0}, shape_case{1, 0, 0}, shape_case{7, 3, 0}, shape_case{50, 400, 0},
        shape_case{300, 3000, 0.6}, shape_case{2000, 9000, 0.6}}) {
    CAPTURE(c.n);
    CAPTURE(c.e);
    const gnn::csr g = random_graph(std::max<std::size_t>(c.n, 1), c.e, c.hub, rng);
    const std::size_t n = g.num_nodes();
    const auto h =
        nax::uniform<float, gnn::node, head, feat>(nax::rng{5, n}, -1.0f, 1.0f, gnn::node{n});
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(kind);
      auto run = [&] {
        return kind == 0   ? gnn::aggregate_sum(g, h)
               : kind == 1 ? gnn::aggregate_mean(g, h)
                           : gnn::gcn(g, h);
      };
      nax::set_num_threads(1);
      const auto one = run();
      nax::set_num_threads(2);
      const auto two = run();
      REQUIRE(one.size() == h.size());
      CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
      std::vector<double> size;
      const std::vector<double> want = reference(g, h.data(), 33, kind, size);
      double worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::abs(one.data()[i] - want[i]) / (1 + size[i]));
      CHECK(worst <= 1e-6);
    }
  }
}

TEST_CASE("a node count that is not the graph's is refused") {
  const std::int32_t src[] = {0, 1}, dst[] = {1, 2};
  const gnn::csr g = gnn::csr::from_edges(3, src, dst);
  const auto h = nax::zeros<float, gnn::node, feat>(gnn::node{4});
  CHECK_THROWS_WITH_AS(gnn::aggregate_sum(g, h),
                       "nax::gnn::aggregate_sum: h has 4 nodes, the graph 3", nax::shape_error);
  CHECK_THROWS_WITH_AS(gnn::gcn(g, h), "nax::gnn::gcn: h has 4 nodes, the graph 3",
                       nax::shape_error);
}
