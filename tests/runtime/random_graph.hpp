#pragma once
// Random runtime graphs for the end-to-end tests: a few parameters over named axes batch
// (dynamic), seq (dynamic, <= 16), h and k (static), and 3 to 14 random ops on them
// (elementwise, reductions, softmax, layer_norm, transpose, dot_general, reshape, slice,
// broadcast, concat, cumsum), with one or two results.

#include <nax/graph/ops.hpp>

#include <algorithm>
#include <random>
#include <span>
#include <vector>

#include "reference.hpp"

namespace random_graph {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

inline const dim h = dim::named("h", 6), k = dim::named("k", 5);

// A random graph over named axes batch (dynamic), seq (dynamic, <= 16), h and k (static).
struct graph {
  g::builder b;
  std::vector<g::value> params, outs;
  dtype type;

  graph(std::mt19937& rng, dtype t) : type(t) {
    const dim batch("batch"), seq = dim::bounded("seq", 16);
    params.push_back(b.parameter("x", shape::make(t, {batch, h})));
    params.push_back(b.parameter("y", shape::make(t, {h, k})));
    params.push_back(b.parameter("z", shape::make(t, {batch, seq, h})));
    params.push_back(b.parameter("v", shape::make(t, {k})));
    params.push_back(b.parameter("gamma", shape::make(t, {h})));
    std::vector<g::value> pool = params;
    auto pick = [&] {
      return pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
    };
    auto chance = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng) == 0; };
    const int steps = std::uniform_int_distribution<int>(3, 14)(rng);
    for (int i = 0; i < steps; ++i) {
      g::value a = pick();
      const std::size_t r = a.shape().rank();
      g::value made;
      try {
        switch (std::uniform_int_distribution<int>(0, 13)(rng)) {
          case 0: made = chance(2) ? g::tanh(a) : g::sigmoid(a); break;
          case 1: made = chance(2) ? g::gelu(a) : g::relu(a) * 0.5 + 0.25; break;
          case 2: {
            g::value c = pick();
            if (a.shape().rank() + c.shape().rank() > 5) continue;
            made = chance(3) ? a - c : (chance(2) ? a * c : g::max(a, c));
            break;
          }
          case 3:
            if (r == 0) continue;
            made = chance(2)
                       ? g::sum(a, {std::uniform_int_distribution<std::size_t>(0, r - 1)(rng)})
                       : g::mean(a, {std::uniform_int_distribution<std::size_t>(0, r - 1)(rng)});
            break;
          case 4:
            if (r == 0) continue;
            made = g::reduce_max(a, {r - 1});
            break;
          case 5:
            if (r == 0) continue;
            made = g::softmax(a, std::uniform_int_distribution<std::size_t>(0, r - 1)(rng));
            break;
          case 6:
            if (!a.shape().index_of("h")) continue;
            made = g::layer_norm(a, params[4], params[4], "h", 1e-3);
            break;
          case 7: {
            if (r < 2) continue;
            std::vector<g::axis_ref> perm;
            std::vector<std::size_t> order(r);
            for (std::size_t j = 0; j < r; ++j) order[j] = j;
            std::shuffle(order.begin(), order.end(), rng);
            for (std::size_t j : order) perm.push_back(j);
            made = b.transpose(a, perm);
            break;
          }
          case 8: {
            // Contract one shared axis, match the other shared ones as batch axes.
            g::value c = pick();
            std::vector<g::axis_pair> con, bat;
            for (const dim& d : a.shape().dims())
              if (c.shape().index_of(d.name().view()))
                (con.empty() ? con : bat).push_back({d.name().view(), d.name().view()});
            if (con.empty() || a.id() == c.id()) continue;
            made = b.dot_general(a, c, con, bat);
            break;
          }
          case 9:  // split h into 2 x 3 or merge it back
            if (a.shape().index_of("h")) {
              std::vector<dim> d;
              for (const dim& x : a.shape().dims())
                if (x.name().view() == "h") {
                  d.push_back(dim::named("h2", 2));
                  d.push_back(dim::named("h3", 3));
                } else {
                  d.push_back(x);
                }
              made = b.reshape(a, shape(t, std::span<const dim>(d)));
            } else {
              continue;
            }
            break;
          case 10: made = chance(2) ? g::slice(a, "h", 1, 6, 2) : g::slice(a, "seq", 0, 1); break;
          case 11: {
            std::vector<dim> d(a.shape().dims().begin(), a.shape().dims().end());
            d.insert(d.begin(), k);
            made = g::broadcast(a, shape(t, std::span<const dim>(d)));
            break;
          }
          case 12: made = g::concat({a, g::neg(a)}, "k"); break;
          case 13: {
            if (r == 0) continue;
            const std::size_t axis = std::uniform_int_distribution<std::size_t>(0, r - 1)(rng);
            const bool exclusive = chance(2), reverse = chance(2);
            made = g::cumsum(a, axis, {exclusive, reverse});
            break;
          }
        }
      } catch (const nax::shape_error&) {
        continue;  // an op these operands do not allow
      }
      if (made.shape().rank() > 4) continue;
      pool.push_back(made);
    }
    outs.push_back(pool.back());
    if (pool.size() > params.size() + 2 && chance(2)) outs.push_back(pool[pool.size() - 2]);
  }

  std::vector<dyn_tensor> inputs(std::mt19937& rng, std::size_t batch, std::size_t seq) const {
    return reference::random_inputs(params, {{"batch", batch}, {"seq", seq}}, rng);
  }
};

}  // namespace random_graph
