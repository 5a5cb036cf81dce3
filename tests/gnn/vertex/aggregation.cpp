// The aggregations of a vertex program (gnn/vertex/aggregation.hpp): sum, mean, max and
// softmax_sum against plain loops in double on random graphs, for values of rank 0, 1 and 2
// (vectors, blocks and tails), scores per head or per feature; the prebuilt aggregations' bits;
// the same bits on 1 and 2 threads.
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/vertex.hpp>
#include <nax/typed/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

#include "../graphs.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 3>;
using feat = nax::axis<"feat", 75>;  // a block of 8 vectors, a vector and a tail, on AVX2 floats

namespace {

using gnn_test::for_each_in_edge;
using gnn_test::same_bits;
using gnn_test::worst;

enum kind { sum, mean, max };

template <kind K, class X>
auto reduce(X&& x) {
  if constexpr (K == sum)
    return gnn::sum(std::forward<X>(x));
  else if constexpr (K == mean)
    return gnn::mean(std::forward<X>(x));
  else
    return gnn::max(std::forward<X>(x));
}

// The reference of reduce<K> over v's in-edges of x(u, edge id), in double.
template <kind K, class F>
double reference(const gnn::csr& g, std::size_t v, F x) {
  double acc = K == max ? -std::numeric_limits<double>::infinity() : 0.0;
  for_each_in_edge(g, v, [&](std::size_t u, std::size_t e) {
    acc = K == max ? std::max(acc, x(u, e)) : acc + x(u, e);
  });
  const std::size_t in = g.in_degree(v);
  return in == 0 ? 0.0 : K == mean ? acc / double(in) : acc;
}

template <kind K>
void check_reduction() {
  gnn_test::threads_guard guard;
  std::mt19937 rng(5);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n, f = 3 * 75;
    const auto h =
        nax::uniform<float, gnn::node, head, feat>(nax::rng{1, n}, -2.0f, 2.0f, gnn::node{n});
    const auto s = nax::uniform<float, gnn::node>(nax::rng{2, n}, -2.0f, 2.0f, gnn::node{n});
    const auto w =
        nax::uniform<float, gnn::edge>(nax::rng{3, n}, -2.0f, 2.0f, gnn::edge{g.num_edges()});
    // A chain of ops on the source's row before the reduction; a scalar per edge mixing scopes.
    const auto rows_of = [&] {
      return gnn::zoom_in(
          g, [&](const gnn::vertex& v) { return reduce<K>((v.src(h) + 1.0f) * v.src(h)); });
    };
    const auto scalars_of = [&] {
      return gnn::zoom_in(
          g, [&](const gnn::vertex& v) { return reduce<K>(v.src(s) * v.dst(s) - v.edge(w)); });
    };
    nax::set_num_threads(1);
    const auto rows = rows_of();
    const auto scalars = scalars_of();
    std::vector<double> want(n * f), want_scalar(n);
    for (std::size_t v = 0; v < n; ++v) {
      for (std::size_t i = 0; i < f; ++i)
        want[v * f + i] = reference<K>(g, v, [&](std::size_t u, std::size_t) {
          return (double(h.data()[u * f + i]) + 1) * h.data()[u * f + i];
        });
      want_scalar[v] = reference<K>(g, v, [&](std::size_t u, std::size_t e) {
        return double(s.data()[u]) * s.data()[v] - w.data()[e];
      });
    }
    CHECK(worst(rows.data(), want) <= 1e-4);
    CHECK(worst(scalars.data(), want_scalar) <= 1e-4);
    nax::set_num_threads(2);
    CHECK(same_bits(rows, rows_of()));
    CHECK(same_bits(scalars, scalars_of()));
  }
}

}  // namespace

TEST_CASE("sum over in-edges matches plain loops") { check_reduction<sum>(); }
TEST_CASE("mean over in-edges matches plain loops") { check_reduction<mean>(); }
TEST_CASE("max over in-edges matches plain loops") { check_reduction<max>(); }

TEST_CASE("sum and mean of v.src(h) have the bits of aggregate_sum and aggregate_mean") {
  std::mt19937 rng(8);
  for (const auto& c : gnn_test::graph_cases) {
    const gnn::csr g = gnn_test::make(c, rng);
    const auto h =
        nax::normal<float, gnn::node, head, feat>(nax::rng{4, c.n}, 0.0, 1.0, gnn::node{c.n});
    CHECK(same_bits(gnn::aggregate_sum(g, h),
                    gnn::zoom_in(g, [&](const gnn::vertex& v) { return gnn::sum(v.src(h)); })));
    CHECK(same_bits(gnn::aggregate_mean(g, h),
                    gnn::zoom_in(g, [&](const gnn::vertex& v) { return gnn::mean(v.src(h)); })));
  }
}

TEST_CASE("softmax_sum matches a two-pass softmax in double, scores per head or per feature") {
  gnn_test::threads_guard guard;
  std::mt19937 rng(9);
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n, f = 3 * 75;
    const auto h =
        nax::uniform<float, gnn::node, head, feat>(nax::rng{5, n}, -2.0f, 2.0f, gnn::node{n});
    // Scores large enough that a softmax without the maximum subtracted would overflow.
    const auto e =
        nax::uniform<float, gnn::node, head>(nax::rng{6, n}, -60.0f, 60.0f, gnn::node{n});
    const auto per_head = [&] {
      return gnn::zoom_in(g, [&](const gnn::vertex& v) {
        return gnn::softmax_sum(gnn::leaky_relu(v.src(e) + v.dst(e), 0.2f), v.src(h));
      });
    };
    const auto per_feature = [&] {
      return gnn::zoom_in(
          g, [&](const gnn::vertex& v) { return gnn::softmax_sum(v.src(h) * 40.0f, v.src(h)); });
    };
    nax::set_num_threads(1);
    const auto a = per_head();
    const auto b = per_feature();
    std::vector<double> want_a(n * f, 0.0), want_b(n * f, 0.0);
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t i = 0; i < f; ++i) {
        const std::size_t k = i / 75;
        std::vector<double> sa, sb;
        for_each_in_edge(g, v, [&](std::size_t u, std::size_t) {
          const double x = double(e.data()[u * 3 + k]) + e.data()[v * 3 + k];
          sa.push_back(x > 0 ? x : 0.2 * x);
          sb.push_back(double(h.data()[u * f + i]) * 40);
        });
        if (sa.empty()) continue;
        const double ma = *std::max_element(sa.begin(), sa.end()),
                     mb = *std::max_element(sb.begin(), sb.end());
        double ta = 0, tb = 0, xa = 0, xb = 0;
        std::size_t j = 0;
        for_each_in_edge(g, v, [&](std::size_t u, std::size_t) {
          const double x = h.data()[u * f + i];
          ta += std::exp(sa[j] - ma);
          xa += std::exp(sa[j] - ma) * x;
          tb += std::exp(sb[j] - mb);
          xb += std::exp(sb[j] - mb) * x;
          ++j;
        });
        want_a[v * f + i] = xa / ta;
        want_b[v * f + i] = xb / tb;
      }
    CHECK(worst(a.data(), want_a) <= 1e-5);
    CHECK(worst(b.data(), want_b) <= 1e-5);
    nax::set_num_threads(2);
    CHECK(same_bits(a, per_head()));
    CHECK(same_bits(b, per_feature()));
  }
}
