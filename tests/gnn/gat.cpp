// nax::gnn::gat (gnn/gat.hpp): the one-pass attention against a two-pass reference in double
// (scores, softmax over each node's in-edges, weighted sum) on random graphs with isolated nodes,
// self-loops, multi-edges and a hub; the same bits on 1 and 2 threads; shapes refused by name.
#include <nax/gnn/gat.hpp>
#include <nax/typed/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "support/threads.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 4>;
using feat = nax::axis<"feat", 13>;

namespace {

using nax_test::threads_guard;

std::vector<double> reference(const gnn::csr& g, const float* h, const float* as, const float* ad,
                              std::size_t heads, std::size_t f, double slope) {
  const std::size_t n = g.num_nodes();
  std::vector<double> out(n * heads * f, 0.0);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t k = 0; k < heads; ++k) {
      std::vector<double> score;
      for (std::int64_t e = g.offsets()[v]; e < g.offsets()[v + 1]; ++e) {
        const auto u = static_cast<std::size_t>(g.sources()[static_cast<std::size_t>(e)]);
        double s = 0;
        for (std::size_t i = 0; i < f; ++i)
          s += double(h[(u * heads + k) * f + i]) * as[k * f + i] +
               double(h[(v * heads + k) * f + i]) * ad[k * f + i];
        score.push_back(s > 0 ? s : s * slope);
      }
      if (score.empty()) continue;
      const double most = *std::max_element(score.begin(), score.end());
      double total = 0;
      for (double& s : score) total += (s = std::exp(s - most));
      std::size_t j = 0;
      for (std::int64_t e = g.offsets()[v]; e < g.offsets()[v + 1]; ++e, ++j) {
        const auto u = static_cast<std::size_t>(g.sources()[static_cast<std::size_t>(e)]);
        for (std::size_t i = 0; i < f; ++i)
          out[(v * heads + k) * f + i] += score[j] / total * h[(u * heads + k) * f + i];
      }
    }
  return out;
}

}  // namespace

TEST_CASE("one-pass GAT matches the two-pass reference; 1 and 2 threads give the same bits") {
  threads_guard guard;
  std::mt19937 rng(21);
  for (const auto& [n, e, hub] :
       {std::tuple{1, 0, 0.0}, std::tuple{6, 4, 0.0}, std::tuple{60, 500, 0.0},
        std::tuple{200, 2000, 0.5}, std::tuple{1000, 9000, 0.6}}) {
    const auto nodes = static_cast<std::size_t>(n);
    CAPTURE(nodes);
    std::vector<std::int32_t> src(static_cast<std::size_t>(e)), dst(src.size());
    std::uniform_real_distribution<double> u(0, 1);
    for (std::size_t i = 0; i < src.size(); ++i) {
      src[i] = static_cast<std::int32_t>(rng() % nodes);
      dst[i] = u(rng) < hub ? 0 : static_cast<std::int32_t>(rng() % nodes);
    }
    const gnn::csr g = gnn::csr::from_edges(nodes, src, dst);
    const auto h = nax::uniform<float, gnn::node, head, feat>(nax::rng{1, nodes}, -2.0f, 2.0f,
                                                              gnn::node{nodes});
    const auto as = nax::uniform<float, head, feat>(nax::rng{2, nodes}, -1.0f, 1.0f);
    const auto ad = nax::uniform<float, head, feat>(nax::rng{3, nodes}, -1.0f, 1.0f);
    nax::set_num_threads(1);
    const auto one = gnn::gat(g, h, as, ad, 0.2f);
    nax::set_num_threads(2);
    const auto two = gnn::gat(g, h, as, ad, 0.2f);
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    const std::vector<double> want = reference(g, h.data(), as.data(), ad.data(), 4, 13, 0.2);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(one.data()[i] - want[i]) / (1 + std::abs(want[i])));
    CHECK(worst <= 1e-5);  // a convex combination of h's rows: no cancellation
  }
}

TEST_CASE("gat refuses shapes that do not fit, naming them") {
  const std::int32_t src[] = {0}, dst[] = {1};
  const gnn::csr g = gnn::csr::from_edges(2, src, dst);
  const auto h = nax::zeros<float, gnn::node, head, feat>(gnn::node{3});
  const auto a = nax::zeros<float, head, feat>();
  CHECK_THROWS_WITH_AS(gnn::gat(g, h, a, a, 0.2f), "nax::gnn::gat: h has 3 nodes, the graph 2",
                       nax::shape_error);
}
