// nax::gnn's layers on traced values (gnn/traced.hpp): inside nax::value_and_grad they are graph
// nodes whose VJPs are the hand-derived kernels, so a loss through them has the gradients
// gat_grad and aggregate_*_grad give (the same bits), and a model chaining them with typed ops
// has the gradients of central differences; a graph that does not fit the inputs is refused by
// name when the executable runs.
#include <nax/gnn/traced.hpp>
#include <nax/jit/value_and_grad.hpp>
#include <nax/typed/random.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "graphs.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 2>;
using feat = nax::axis<"feat", 5>;
using in = nax::axis<"in", 3>;

using gnn_test::same_bits;

TEST_CASE("value_and_grad through gat and the aggregations: the hand-derived gradients' bits") {
  std::mt19937 rng(41);
  const gnn::csr g = gnn_test::random_graph(30, 200, 0.3, rng);
  const std::size_t n = 30;
  const auto h =
      nax::uniform<float, gnn::node, head, feat>(nax::rng{1, 0}, -1.0f, 1.0f, gnn::node{n});
  const auto a_src = nax::uniform<float, head, feat>(nax::rng{2, 0}, -1.0f, 1.0f);
  const auto a_dst = nax::uniform<float, head, feat>(nax::rng{3, 0}, -1.0f, 1.0f);
  const auto r =
      nax::uniform<float, gnn::node, head, feat>(nax::rng{4, 0}, -1.0f, 1.0f, gnn::node{n});
  auto step = nax::value_and_grad(
      [&](auto x, auto weights, auto as, auto ad) {
        auto out = gnn::gat(g, x, as, ad, 0.2f);
        return nax::sum<gnn::node>(nax::sum<head>(nax::sum<feat>(out * weights)));
      },
      nax::input<float, gnn::node, head, feat>("h"), nax::data<float, gnn::node, head, feat>("r"),
      nax::input<float, head, feat>("a_src"), nax::input<float, head, feat>("a_dst"));
  const auto [loss, grads] = step(h, r, a_src, a_dst);
  const auto want = gnn::gat_grad(g, h, a_src, a_dst, 0.2f, r);
  CHECK(same_bits(std::get<0>(grads), want.h));
  CHECK(same_bits(std::get<1>(grads), want.a_src));
  CHECK(same_bits(std::get<2>(grads), want.a_dst));
  const auto out = gnn::gat(g, h, a_src, a_dst, 0.2f);
  double total = 0;
  for (std::size_t i = 0; i < out.size(); ++i) total += double(out.data()[i]) * r.data()[i];
  CHECK(std::abs(loss.data()[0] - total) <= 1e-4 * (1 + std::abs(total)));

  using row = nax::axis<"row", 4>;
  const auto x = nax::uniform<float, gnn::node, row>(nax::rng{5, 0}, -1.0f, 1.0f, gnn::node{n});
  const auto rx = nax::uniform<float, gnn::node, row>(nax::rng{6, 0}, -1.0f, 1.0f, gnn::node{n});
  auto sum_step = nax::value_and_grad(
      [&](auto x, auto weights) {
        auto y = gnn::aggregate_sum(g, x) + gnn::aggregate_mean(g, x) * 2.0f + gnn::gcn(g, x);
        return nax::sum<gnn::node>(nax::sum<row>(y * weights));
      },
      nax::input<float, gnn::node, row>("x"), nax::data<float, gnn::node, row>("r"));
  const auto [sum_loss, sum_grads] = sum_step(x, rx);
  (void)sum_loss;
  const nax::tensor<float, gnn::node, row> want_x = gnn::aggregate_sum_grad(g, rx) +
                                                    gnn::aggregate_mean_grad(g, rx) * 2.0f +
                                                    gnn::gcn_grad(g, rx);
  const auto& got_x = std::get<0>(sum_grads);
  for (std::size_t i = 0; i < want_x.size(); ++i)
    CHECK(std::abs(got_x.data()[i] - want_x.data()[i]) <= 1e-5f * (1 + std::abs(want_x.data()[i])));
}

TEST_CASE("a model of typed ops and gnn layers: its gradients are central differences'") {
  std::mt19937 rng(42);
  const std::size_t n = 25;
  const gnn::csr g = gnn_test::random_graph(n, 120, 0.2, rng);
  auto x = nax::uniform<double, gnn::node, in>(nax::rng{7, 0}, -1.0, 1.0, gnn::node{n});
  auto w = nax::uniform<double, in, head, feat>(nax::rng{8, 0}, -1.0, 1.0);
  auto as = nax::uniform<double, head, feat>(nax::rng{9, 0}, -1.0, 1.0);
  auto ad = nax::uniform<double, head, feat>(nax::rng{10, 0}, -1.0, 1.0);
  const auto model = [&](auto x, auto w, auto as, auto ad) {
    auto hidden = nax::eval(nax::dot<in>(x, w));  // [node, head, feat]
    auto attended = nax::eval(nax::tanh(gnn::gat(g, hidden, as, ad, 0.2)));
    auto mixed = gnn::aggregate_mean(g, attended);
    return nax::sum<gnn::node>(nax::sum<head>(nax::sum<feat>(mixed * mixed)));
  };
  auto step = nax::value_and_grad(
      model, nax::data<double, gnn::node, in>("x"), nax::input<double, in, head, feat>("w"),
      nax::input<double, head, feat>("a_src"), nax::input<double, head, feat>("a_dst"));
  const auto [loss, grads] = step(x, w, as, ad);
  (void)loss;
  const auto loss_at = [&] { return double(step(x, w, as, ad).value.data()[0]); };
  const auto check = [&](auto& t, const auto& d) {
    for (std::size_t i = 0; i < t.size(); i += 3) {
      const double keep = t.data()[i], eps = 1e-6;
      t.data()[i] = keep + eps;
      const double up = loss_at();
      t.data()[i] = keep - eps;
      const double down = loss_at();
      t.data()[i] = keep;
      const double want = (up - down) / (2 * eps);
      CHECK(std::abs(d.data()[i] - want) <= 1e-6 * (1 + std::abs(want)));
    }
  };
  check(w, std::get<0>(grads));
  check(as, std::get<1>(grads));
  check(ad, std::get<2>(grads));
}

TEST_CASE("a traced layer over a graph that does not fit its input is refused by name") {
  std::mt19937 rng(43);
  const gnn::csr g = gnn_test::random_graph(4, 6, 0.0, rng);
  using row = nax::axis<"row", 2>;
  auto f = nax::jit([&](auto x) { return gnn::aggregate_sum(g, x); },
                    nax::input<float, gnn::node, row>("x"));
  const auto five = nax::zeros<float, gnn::node, row>(gnn::node{5});
  CHECK_THROWS_WITH_AS(f(five),
                       doctest::Contains("nax::gnn::aggregate_sum: h has 5 nodes, the graph 4"),
                       nax::shape_error);
}
