#pragma once
// Random vertex programs (gnn/vertex/): trees of leaves in every scope, elementwise ops and
// nested aggregations, drawn at compile time from seeds. Each tree is built twice by one
// generator: as a nax vertex program, and as a plain-loop reference in double over the same
// graph. zoom_in matches the reference; zoom_in_grad matches central differences; 1 and 2
// threads give the same bits. Each seed is about 4 s of compile time: part_0.cpp and
// part_1.cpp check half of them each, in parallel.
#include <nax/gnn/vertex.hpp>
#include <nax/typed/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "../../graphs.hpp"

namespace random_programs {

namespace gnn = nax::gnn;
using feat = nax::axis<"feat", 11>;  // a vector and a tail

constexpr std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct inputs {
  const gnn::csr& g;
  nax::tensor<double, gnn::node, feat> h;
  nax::tensor<double, gnn::node> s;
  nax::tensor<double, gnn::edge> w;
  nax::tensor<double, feat> p;
};

// The reference of a value: its element i at destination v, source u, edge id e.
using ref = std::function<double(std::size_t v, std::size_t u, std::size_t e, std::size_t i)>;

template <class X>
struct built {
  X value;
  ref reference;
};
template <class X>
built<X> make_built(X x, ref r) {
  return {std::move(x), std::move(r)};
}

inline double reduce_reference(const gnn::csr& g, std::size_t v, int kind, const ref& x,
                               const ref& score, std::size_t i) {
  std::vector<double> xs, ss;
  gnn_test::for_each_in_edge(g, v, [&](std::size_t u, std::size_t e) {
    xs.push_back(x(v, u, e, i));
    if (kind == 3) ss.push_back(score(v, u, e, i));
  });
  if (xs.empty()) return 0;
  double acc = 0;
  if (kind == 0 || kind == 1) {
    for (double y : xs) acc += y;
    return kind == 1 ? acc / double(xs.size()) : acc;
  }
  if (kind == 2) return *std::max_element(xs.begin(), xs.end());
  const double most = *std::max_element(ss.begin(), ss.end());
  double total = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    total += std::exp(ss[k] - most);
    acc += std::exp(ss[k] - most) * xs[k];
  }
  return acc / total;
}

// A value from seed S, D levels deep at most (per-edge values are made per node by the
// aggregations over them, and by the root's).
template <std::uint64_t S, int D>
auto value(const gnn::vertex& v, const inputs& in) {
  constexpr std::uint64_t r = mix(S);
  // Leaves at the bottom only, anything one level up, ops and aggregations above that.
  constexpr int choice = D == 0 ? int(r % 5) : D == 1 ? int(r % 12) : 5 + int(r % 7);
  if constexpr (choice == 0) {
    return make_built(v.src(in.h), [&in](std::size_t, std::size_t u, std::size_t, std::size_t i) {
      return in.h(u, i);
    });
  } else if constexpr (choice == 1) {
    return make_built(v.dst(in.h), [&in](std::size_t w, std::size_t, std::size_t, std::size_t i) {
      return in.h(w, i);
    });
  } else if constexpr (choice == 2) {
    // A scalar per edge, broadcast along feat.
    return make_built(v.edge(in.w), [&in](std::size_t, std::size_t, std::size_t e, std::size_t) {
      return in.w(e);
    });
  } else if constexpr (choice == 3) {
    return make_built(v.param(in.p), [&in](std::size_t, std::size_t, std::size_t, std::size_t i) {
      return in.p(i);
    });
  } else if constexpr (choice == 4) {
    // A scalar per source node.
    return make_built(v.src(in.s), [&in](std::size_t, std::size_t u, std::size_t, std::size_t) {
      return in.s(u);
    });
  } else if constexpr (choice <= 7) {
    // A bounded unary op.
    auto x = value<mix(S + 1), D - 1>(v, in);
    constexpr int op = int((r >> 8) % 4);
    auto f = [](double y) {
      if constexpr (op == 0) return std::tanh(y);
      if constexpr (op == 1) return 1 / (1 + std::exp(-y));
      if constexpr (op == 2) return y > 0 ? y : 0.3 * y;
      if constexpr (op == 3) return y > 0 ? y : std::exp(y) - 1;
    };
    auto applied = [&] {
      if constexpr (op == 0) return gnn::tanh(x.value);
      if constexpr (op == 1) return gnn::sigmoid(x.value);
      if constexpr (op == 2) return gnn::leaky_relu(x.value, 0.3);
      if constexpr (op == 3) return gnn::elu(x.value);
    }();
    return make_built(applied, [f, xr = x.reference](std::size_t a, std::size_t b, std::size_t c,
                                                     std::size_t i) { return f(xr(a, b, c, i)); });
  } else if constexpr (choice <= 9) {
    // A binary op; a quotient kept away from 0.
    auto x = value<mix(S + 2), D - 1>(v, in);
    auto y = value<mix(S + 3), D - 1>(v, in);
    constexpr int op = int((r >> 8) % 3);
    auto combined = [&] {
      if constexpr (op == 0) return x.value + y.value;
      if constexpr (op == 1) return x.value * y.value;
      if constexpr (op == 2) return x.value / (y.value * y.value + 1.0);
    }();
    return make_built(combined, [xr = x.reference, yr = y.reference](std::size_t a, std::size_t b,
                                                                     std::size_t c, std::size_t i) {
      const double p = xr(a, b, c, i), q = yr(a, b, c, i);
      if constexpr (op == 0) return p + q;
      if constexpr (op == 1) return p * q;
      if constexpr (op == 2) return p / (q * q + 1);
    });
  } else {
    // An aggregation (mean, sum scaled down, max, softmax_sum) of a value made per edge (times
    // the source's s, so that it is never a node value).
    auto x = value<mix(S + 4), D - 1>(v, in);
    auto edgy = x.value * v.src(in.s);
    ref xr = [xr0 = x.reference, &in](std::size_t a, std::size_t b, std::size_t c, std::size_t i) {
      return xr0(a, b, c, i) * in.s(b);
    };
    constexpr int kind = int((r >> 8) % 4);
    auto aggregated = [&] {
      if constexpr (kind == 0) return gnn::sum(edgy) * 0.1;
      if constexpr (kind == 1) return gnn::mean(edgy);
      if constexpr (kind == 2) return gnn::max(edgy);
      if constexpr (kind == 3) return gnn::softmax_sum(gnn::tanh(v.src(in.h) - v.dst(in.h)), edgy);
    }();
    ref score = [&in](std::size_t a, std::size_t b, std::size_t, std::size_t i) {
      return std::tanh(in.h(b, i) - in.h(a, i));
    };
    // A node value: computed once per node and feature (an aggregation inside an edge value is
    // read on every edge).
    auto memo = std::make_shared<std::vector<double>>(in.g.num_nodes() * 11,
                                                      std::numeric_limits<double>::quiet_NaN());
    return make_built(
        aggregated, [&in, xr, score, memo](std::size_t a, std::size_t, std::size_t, std::size_t i) {
          double& y = (*memo)[a * 11 + i];
          if (std::isnan(y)) {
            y = reduce_reference(in.g, a, kind, xr, score, i);
            if (kind == 0) y *= 0.1;
          }
          return y;
        });
  }
}

// The program of seed S: an aggregation at the root, so that it is a node value, plus v's own
// row.
template <std::uint64_t S>
void check_program() {
  CAPTURE(S);
  gnn_test::threads_guard guard;
  std::mt19937 rng(static_cast<unsigned>(S));
  for (const auto& c : gnn_test::graph_cases) {
    CAPTURE(c.n);
    const gnn::csr g = gnn_test::make(c, rng);
    const std::size_t n = c.n;
    inputs in{g, nax::uniform<double, gnn::node, feat>(nax::rng{S, 1}, -1.0, 1.0, gnn::node{n}),
              nax::uniform<double, gnn::node>(nax::rng{S, 2}, -1.0, 1.0, gnn::node{n}),
              nax::uniform<double, gnn::edge>(nax::rng{S, 3}, -1.0, 1.0, gnn::edge{g.num_edges()}),
              nax::uniform<double, feat>(nax::rng{S, 4}, -1.0, 1.0)};
    ref reference;
    const auto program = [&](const gnn::vertex& v) {
      auto x = value<S, 3>(v, in);
      auto root = gnn::mean(x.value * v.src(in.s)) + v.dst(in.h);
      reference = [&in, xr = x.reference](std::size_t a, std::size_t, std::size_t, std::size_t i) {
        const ref edgy = [xr, &in](std::size_t p, std::size_t q, std::size_t e, std::size_t j) {
          return xr(p, q, e, j) * in.s(q);
        };
        return reduce_reference(in.g, a, 1, edgy, edgy, i) + in.h(a, i);
      };
      return root;
    };
    nax::set_num_threads(1);
    const auto out = gnn::zoom_in(g, program);
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t i = 0; i < 11; ++i) {
        const double want = reference(v, 0, 0, i);
        CHECK(std::abs(out(v, i) - want) <= 1e-10 * (1 + std::abs(want)));
      }
    nax::set_num_threads(2);
    const auto again = gnn::zoom_in(g, program);
    CHECK((out.size() == 0 || std::memcmp(out.data(), again.data(), out.size() * 8) == 0));
    // Gradients against central differences, at a few entries of each input.
    nax::tensor<double, gnn::node, feat> dout = nax::zeros_like(out);
    std::uniform_real_distribution<double> pick(-1.0, 1.0);
    for (std::size_t i = 0; i < dout.size(); ++i) dout.data()[i] = pick(rng);
    const auto grads = gnn::zoom_in_grad(g, program, dout);
    const auto loss = [&] {
      const auto o = gnn::zoom_in(g, program);
      double total = 0;
      for (std::size_t i = 0; i < o.size(); ++i) total += o.data()[i] * dout.data()[i];
      return total;
    };
    const auto fd = [&](auto& t) {
      // Only the tensors the program reads have gradients.
      bool read = true;
      try {
        (void)grads.of(t);
      } catch (const std::invalid_argument&) {
        read = false;
      }
      if (!read) return;
      const auto d = grads.of(t);
      for (int k = 0; k < 6 && t.size() > 0; ++k) {
        const std::size_t i = rng() % t.size();
        const double keep = t.data()[i], eps = 1e-6;
        t.data()[i] = keep + eps;
        const double up = loss();
        t.data()[i] = keep - eps;
        const double down = loss();
        t.data()[i] = keep;
        const double want = (up - down) / (2 * eps);
        // Max and the leaky ReLU kinks make a derivative jump: a difference across one is off.
        CHECK(std::abs(d.data()[i] - want) <= 1e-5 * (1 + std::abs(want)));
      }
    };
    fd(in.h);
    fd(in.s);
    fd(in.w);
    fd(in.p);
  }
}

template <std::uint64_t... S>
void check_programs(std::integer_sequence<std::uint64_t, S...>) {
  (check_program<S * 7919 + 1>(), ...);
}

}  // namespace random_programs
