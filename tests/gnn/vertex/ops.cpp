// The elementwise ops of a vertex program (gnn/vertex/ops.hpp): each against std:: functions
// in double, on node values (the result row) and on edge values (inside an aggregation); the
// typed layer's bits, and the op list's derivatives;
// broadcasting by name; the scope of each combination; dynamic extents that disagree refused
// by name.
#include <nax/gnn/vertex.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/ops/vjp_on_numbers.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/random.hpp>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/bits.hpp"

namespace gnn = nax::gnn;
using head = nax::axis<"head", 2>;
using feat = nax::axis<"feat", 13>;

namespace {

using nax_test::same_bits;

// Node i's one in-edge comes from node (i + 1) % n: sum over the in-edges of f(v.src(x)) is
// f(x) of the next node.
gnn::csr ring(std::size_t n) {
  std::vector<std::int32_t> src(n), dst(n);
  for (std::size_t i = 0; i < n; ++i) {
    src[i] = static_cast<std::int32_t>((i + 1) % n);
    dst[i] = static_cast<std::int32_t>(i);
  }
  return gnn::csr::from_edges(n, src, dst);
}

template <class Op, class Ref>
void check_unary(Op op, Ref ref) {
  const std::size_t n = 7, f = 2 * 13;
  const gnn::csr g = ring(n);
  const auto h =
      nax::uniform<float, gnn::node, head, feat>(nax::rng{1, 0}, -4.0f, 4.0f, gnn::node{n});
  const auto own = gnn::zoom_in(g, [&](const gnn::vertex& v) { return op(v.dst(h)); });
  const auto next = gnn::zoom_in(g, [&](const gnn::vertex& v) { return gnn::sum(op(v.src(h))); });
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t i = 0; i < f; ++i) {
      const double want = ref(double(h.data()[v * f + i]));
      const double want_next = ref(double(h.data()[(v + 1) % n * f + i]));
      CHECK(std::abs(own.data()[v * f + i] - want) <= 1e-5 * (1 + std::abs(want)));
      CHECK(std::abs(next.data()[v * f + i] - want_next) <= 1e-5 * (1 + std::abs(want_next)));
    }
}

}  // namespace

TEST_CASE("unary ops match std:: in double, as node values and as edge values") {
  check_unary([](auto x) { return gnn::exp(x); }, [](double x) { return std::exp(x); });
  check_unary([](auto x) { return gnn::relu(x); }, [](double x) { return x > 0 ? x : 0.0; });
  check_unary([](auto x) { return gnn::leaky_relu(x, 0.2f); },
              [](double x) { return x > 0 ? x : 0.2 * x; });
  check_unary([](auto x) { return gnn::elu(x); },
              [](double x) { return x > 0 ? x : std::exp(x) - 1; });
  check_unary([](auto x) { return gnn::sigmoid(x); },
              [](double x) { return 1 / (1 + std::exp(-x)); });
  check_unary([](auto x) { return gnn::tanh(x); }, [](double x) { return std::tanh(x); });
  check_unary([](auto x) { return -x; }, [](double x) { return -x; });
  check_unary([](auto x) { return 3.0f - x * 2.0f; }, [](double x) { return 3 - x * 2; });
  check_unary([](auto x) { return 1.0f / (x + 10.0f); }, [](double x) { return 1 / (x + 10); });
}

TEST_CASE("the ops are nax's: the typed layer's bits, NaN, infinities and zeros included") {
  const std::size_t n = 5, f = 2 * 13;
  const gnn::csr g = ring(n);
  auto h = nax::uniform<float, gnn::node, head, feat>(nax::rng{5, 0}, -4.0f, 4.0f, gnn::node{n});
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           -0.0f,
                           0.0f,
                           -1e-30f};
  for (std::size_t i = 0; i < std::size(special); ++i) h.data()[i * f / 6 + 1] = special[i];
  const auto same = [&](auto vertex_op, auto typed_op) {
    const auto got = gnn::zoom_in(g, [&](const gnn::vertex& v) { return vertex_op(v.dst(h)); });
    const nax::tensor<float, gnn::node, head, feat> want = typed_op(h);
    CHECK(same_bits(got, want));
  };
  same([](auto x) { return gnn::exp(x); }, [](const auto& x) { return nax::exp(x); });
  same([](auto x) { return gnn::relu(x); }, [](const auto& x) { return nax::relu(x); });
  same([](auto x) { return gnn::leaky_relu(x, 0.2f); },
       [](const auto& x) { return nax::leaky_relu(x, 0.2f); });
  same([](auto x) { return gnn::elu(x); }, [](const auto& x) { return nax::elu(x, 1.0f); });
  same([](auto x) { return gnn::elu(x, 0.3f); }, [](const auto& x) { return nax::elu(x, 0.3f); });
  same([](auto x) { return gnn::sigmoid(x); }, [](const auto& x) { return nax::sigmoid(x); });
  same([](auto x) { return gnn::tanh(x); }, [](const auto& x) { return nax::tanh(x); });
  same([](auto x) { return -x; }, [](const auto& x) { return -x; });
  same([](auto x) { return 1.0f / (x - 2.0f); }, [](const auto& x) { return 1.0f / (x - 2.0f); });
}

TEST_CASE("their derivatives are the op list's: the bits of each op's vjp on numbers") {
  const std::size_t n = 4, f = 2 * 13;
  const gnn::csr g = ring(n);
  auto h = nax::uniform<float, gnn::node, head, feat>(nax::rng{6, 0}, -3.0f, 3.0f, gnn::node{n});
  h.data()[2] = 0.0f;  // a kink
  const auto dout =
      nax::uniform<float, gnn::node, head, feat>(nax::rng{7, 0}, -1.0f, 1.0f, gnn::node{n});
  const auto check = [&](auto vertex_op, auto vjp) {
    const auto grads = gnn::zoom_in_grad(
        g, [&](const gnn::vertex& v) { return vertex_op(v.dst(h)); }, dout);
    const auto dh = grads.of(h);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n * f; ++i)
      wrong += !same_bits(dh.data()[i], vjp(dout.data()[i], h.data()[i]));
    CHECK(wrong == 0);
  };
  namespace ops = nax::ops;
  check([](auto x) { return gnn::exp(x); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::exp>(d, x)[0]; });
  check([](auto x) { return gnn::relu(x); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::relu>(d, x)[0]; });
  check([](auto x) { return gnn::leaky_relu(x, 0.2f); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::leaky_relu>(d, x, 0.2f)[0]; });
  check([](auto x) { return gnn::elu(x, 0.3f); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::elu>(d, x, 0.3f)[0]; });
  check([](auto x) { return gnn::sigmoid(x); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::sigmoid>(d, x)[0]; });
  check([](auto x) { return gnn::tanh(x); },
        [](float d, float x) { return ops::vjp_on_numbers<ops::tanh>(d, x)[0]; });
  check([](auto x) { return 1.5f / x; },
        [](float d, float x) { return ops::vjp_on_numbers<ops::div>(d, 1.5f, x)[1]; });
}

TEST_CASE("operands broadcast by name: the left one's axes, then the right one's others") {
  const std::size_t n = 5;
  const gnn::csr g = ring(n);
  const auto a = nax::uniform<float, gnn::node, feat>(nax::rng{2, 0}, -1.0f, 1.0f, gnn::node{n});
  const auto b = nax::uniform<float, gnn::node, head>(nax::rng{3, 0}, -1.0f, 1.0f, gnn::node{n});
  const auto p = nax::uniform<float, head, feat>(nax::rng{4, 0}, -1.0f, 1.0f);
  // [feat] * [head] is over [feat, head]; a parameter over [head, feat] then adds in that order.
  const auto out = gnn::zoom_in(
      g, [&](const gnn::vertex& v) { return gnn::sum(v.src(a) * v.dst(b) + v.param(p)); });
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(out)>,
                               nax::tensor<float, gnn::node, feat, head>>);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t i = 0; i < 13; ++i)
      for (std::size_t k = 0; k < 2; ++k) {
        // Each op rounded apart (op_result: g++ and clang would contract them into an FMA).
        const float product =
            nax::simd::op_result(a.data()[(v + 1) % n * 13 + i] * b.data()[v * 2 + k]);
        const float want = product + p.data()[k * 13 + i];
        CHECK(out.data()[(v * 13 + i) * 2 + k] == want);
      }
}

TEST_CASE("an op's scope: its operands' when they share one, else edge; param fits any") {
  const std::size_t n = 3;
  const gnn::csr g = ring(n);
  const auto h = nax::zeros<float, gnn::node, feat>(gnn::node{n});
  const auto w = nax::zeros<float, gnn::edge>(gnn::edge{n});
  const auto p = nax::zeros<float, feat>();
  const gnn::vertex v(g);
  using S = decltype(v.src(h));
  using D = decltype(v.dst(h));
  using E = decltype(v.edge(w));
  using P = decltype(v.param(p));
  static_assert(std::is_same_v<S::scope, gnn::source_scope>);
  static_assert(std::is_same_v<D::scope, gnn::node_scope>);
  static_assert(std::is_same_v<E::scope, gnn::edge_scope>);
  static_assert(std::is_same_v<P::scope, gnn::param_scope>);
  static_assert(std::is_same_v<decltype(v.src(h) * v.src(h))::scope, gnn::source_scope>);
  static_assert(std::is_same_v<decltype(v.src(h) + v.param(p))::scope, gnn::source_scope>);
  static_assert(std::is_same_v<decltype(v.dst(h) - 1.0f)::scope, gnn::node_scope>);
  static_assert(std::is_same_v<decltype(v.src(h) + v.dst(h))::scope, gnn::edge_scope>);
  static_assert(std::is_same_v<decltype(v.dst(h) * v.edge(w))::scope, gnn::edge_scope>);
  static_assert(std::is_same_v<decltype(gnn::exp(v.param(p)))::scope, gnn::param_scope>);
  static_assert(std::is_same_v<decltype(gnn::sum(v.src(h) + v.dst(h)))::scope, gnn::node_scope>);
  // A source value and a node value (an aggregation is one) make an edge value.
  static_assert(std::is_same_v<decltype(v.src(h) / gnn::sum(v.src(h)))::scope, gnn::edge_scope>);
  CHECK(true);
}

TEST_CASE("inputs that do not fit the graph or each other are refused, naming them") {
  using dyn = nax::axis<"dyn">;
  const gnn::csr g = ring(3);
  const gnn::vertex v(g);
  const auto four = nax::zeros<float, gnn::node, dyn>(gnn::node{4}, dyn{2});
  CHECK_THROWS_WITH_AS(v.src(four), "nax::gnn::vertex::src: h has 4 nodes, the graph 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(v.dst(four), "nax::gnn::vertex::dst: h has 4 nodes, the graph 3",
                       nax::shape_error);
  const auto w = nax::zeros<float, gnn::edge>(gnn::edge{2});
  CHECK_THROWS_WITH_AS(v.edge(w), "nax::gnn::vertex::edge: w has 2 edges, the graph 3",
                       nax::shape_error);
  const auto two = nax::zeros<float, gnn::node, dyn>(gnn::node{3}, dyn{2});
  const auto five = nax::zeros<float, gnn::node, dyn>(gnn::node{3}, dyn{5});
  CHECK_THROWS_WITH_AS(v.src(two) + v.dst(five), "nax::gnn: axis 'dyn' mismatch: 2 vs 5",
                       nax::shape_error);
}
