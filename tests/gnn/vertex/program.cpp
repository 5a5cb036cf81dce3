// gnn::zoom_in (gnn/vertex/program.hpp): GAT written the seed's way (two aggregations, the second
// reading the first) and one-pass, against plain loops and nax::gnn::gat; programs whose result
// mixes aggregations, v's own values and parameters; an aggregation used twice; nested
// aggregations; empty feature rows; the same bits on 1 and 2 threads.
#include <nax/gnn/gat.hpp>
#include <nax/gnn/vertex.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/random.hpp>
#include <nax/typed/reduce.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "../graphs.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 4>;
using feat = nax::axis<"feat", 24>;

namespace {

using gnn_test::for_each_in_edge;
using gnn_test::same_bits;
using gnn_test::worst;

}  // namespace

TEST_CASE("GAT the seed's way and one-pass match plain loops and gnn::gat") {
  gnn_test::threads_guard guard;
  std::mt19937 rng(11);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n, heads = 4, f = 24;
    const auto h =
        nax::uniform<float, gnn::node, head, feat>(nax::rng{1, n}, -1.0f, 1.0f, gnn::node{n});
    const auto a_src = nax::uniform<float, head, feat>(nax::rng{2, n}, -0.5f, 0.5f);
    const auto a_dst = nax::uniform<float, head, feat>(nax::rng{3, n}, -0.5f, 0.5f);
    // The node-wide part first, as ordinary nax ops over the node axis (operator batching).
    const nax::tensor<float, gnn::node, head> el = nax::sum<feat>(h * a_src),
                                              er = nax::sum<feat>(h * a_dst);
    const auto seed_way = [&] {
      return gnn::zoom_in(g, [&](const gnn::vertex& v) {
        auto coeff = gnn::exp(gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f));
        auto s = gnn::sum(coeff);
        auto alpha = coeff / s;
        return gnn::sum(alpha * v.src(h));
      });
    };
    const auto one_pass = [&] {
      return gnn::zoom_in(g, [&](const gnn::vertex& v) {
        return gnn::softmax_sum(gnn::leaky_relu(v.src(el) + v.dst(er), 0.2f), v.src(h));
      });
    };
    nax::set_num_threads(1);
    const auto two = seed_way();
    const auto one = one_pass();
    std::vector<double> want(n * heads * f, 0.0);
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t k = 0; k < heads; ++k) {
        std::vector<double> w;
        double total = 0;
        for_each_in_edge(g, v, [&](std::size_t u, std::size_t) {
          const double s = double(el.data()[u * heads + k]) + er.data()[v * heads + k];
          w.push_back(std::exp(s > 0 ? s : 0.2 * s));
          total += w.back();
        });
        std::size_t j = 0;
        for_each_in_edge(g, v, [&](std::size_t u, std::size_t) {
          for (std::size_t i = 0; i < f; ++i)
            want[(v * heads + k) * f + i] += w[j] / total * h.data()[(u * heads + k) * f + i];
          ++j;
        });
      }
    CHECK(worst(two.data(), want) <= 1e-5);
    CHECK(worst(one.data(), want) <= 1e-5);
    const auto prebuilt = gnn::gat(g, h, a_src, a_dst, 0.2f);
    std::vector<double> as_double(prebuilt.data(), prebuilt.data() + prebuilt.size());
    CHECK(worst(one.data(), as_double) <= 1e-5);
    nax::set_num_threads(2);
    CHECK(same_bits(two, seed_way()));
    CHECK(same_bits(one, one_pass()));
  }
}

TEST_CASE("a result mixing aggregations, v's own row and parameters; an aggregation used twice") {
  std::mt19937 rng(12);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n, f = 24;
    const auto x = nax::uniform<float, gnn::node, feat>(nax::rng{4, n}, -1.0f, 1.0f, gnn::node{n});
    const auto b = nax::uniform<float, feat>(nax::rng{5, n}, -1.0f, 1.0f);
    // GraphSAGE's mean aggregator with a residual: relu(x[v] + mean(x[u]) * mean(x[u]) + b).
    const auto out = gnn::zoom_in(g, [&](const gnn::vertex& v) {
      auto m = gnn::mean(v.src(x));
      return gnn::relu(v.dst(x) + m * m + v.param(b));
    });
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t i = 0; i < f; ++i) {
        double m = 0;
        for_each_in_edge(g, v, [&](std::size_t u, std::size_t) { m += x.data()[u * f + i]; });
        if (g.in_degree(v) > 0) m /= double(g.in_degree(v));
        const double want = std::max(0.0, x.data()[v * f + i] + m * m + b.data()[i]);
        CHECK(std::abs(out.data()[v * f + i] - want) <= 1e-5);
      }
  }
}

TEST_CASE("nested aggregations: each reads the ones inside it, computed first") {
  std::mt19937 rng(13);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n;
    const auto x = nax::uniform<float, gnn::node>(nax::rng{6, n}, -1.0f, 1.0f, gnn::node{n});
    // The variance of the in-neighbours' x, and its max-normalized form: three levels.
    const auto out = gnn::zoom_in(g, [&](const gnn::vertex& v) {
      auto centred = v.src(x) - gnn::mean(v.src(x));
      auto var = gnn::mean(centred * centred);
      return gnn::max(centred / (var + 1.0f)) + var;
    });
    for (std::size_t v = 0; v < n; ++v) {
      const std::size_t in = g.in_degree(v);
      double m = 0, var = 0, most = in ? -1e300 : 0.0;
      for_each_in_edge(g, v, [&](std::size_t u, std::size_t) { m += x.data()[u]; });
      if (in) m /= double(in);
      for_each_in_edge(
          g, v, [&](std::size_t u, std::size_t) { var += (x.data()[u] - m) * (x.data()[u] - m); });
      if (in) var /= double(in);
      for_each_in_edge(g, v, [&](std::size_t u, std::size_t) {
        most = std::max(most, (x.data()[u] - m) / (var + 1));
      });
      CHECK(std::abs(out.data()[v] - (most + var)) <= 1e-5);
    }
  }
}

TEST_CASE("an empty feature axis gives an empty result") {
  using dyn = nax::axis<"dyn">;
  std::mt19937 rng(14);
  const gnn::csr g = gnn_test::random_graph(10, 30, 0.0, rng);
  const auto x = nax::zeros<float, gnn::node, dyn>(gnn::node{10}, dyn{0});
  const auto out = gnn::zoom_in(g, [&](const gnn::vertex& v) { return gnn::sum(v.src(x)); });
  CHECK(out.size() == 0);
  CHECK(out.extent<gnn::node>() == 10);
}
