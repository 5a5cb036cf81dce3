#pragma once
// Gradients of a builder's loss (nax::graph::grad) compiled and run in double, against central
// finite differences of the compiled loss alone; the backward graph compiled with and without
// fusion gives the same bits. Needs doctest.

#include <nax/graph/grad.hpp>
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

namespace grad_check {

namespace g = nax::graph;

// Every parameter of b, in the order they were made (the compiled graph's inputs).
inline std::vector<g::value> parameters(g::builder& b) {
  std::vector<g::value> ps;
  for (g::node_id i = 0; i < b.size(); ++i)
    if (b.at(i).kind() == g::op_kind::parameter) ps.push_back(b.value_of(i));
  return ps;
}

inline double at(const nax::dyn_tensor& t, std::size_t i) {
  return t.dtype() == nax::dtype::f64 ? static_cast<const double*>(t.data())[i]
                                      : static_cast<const float*>(t.data())[i];
}

// Random inputs for every parameter of b under `bind`: uniform in [lo, hi).
inline std::vector<nax::dyn_tensor> inputs(g::builder& b, const nax::bindings& bind,
                                           std::mt19937& rng, double lo = -1, double hi = 1) {
  std::vector<nax::dyn_tensor> in;
  std::uniform_real_distribution<double> u(lo, hi);
  for (const g::value& p : parameters(b)) {
    nax::dyn_tensor t(p.shape().resolve(bind));
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.dtype() == nax::dtype::f64)
        static_cast<double*>(t.data())[i] = u(rng);
      else if (t.dtype() == nax::dtype::f32)
        static_cast<float*>(t.data())[i] = static_cast<float>(u(rng));
    }
    in.push_back(std::move(t));
  }
  return in;
}

// Checks grad(loss, wrt) (wrt: parameters) against central differences at `in` (f64), relative
// error <= 1e-6, and that the fused and unfused backward graphs agree bit for bit. Returns the
// gradients.
inline std::vector<nax::dyn_tensor> check(g::builder& b, const g::value& loss,
                                          const std::vector<g::value>& wrt,
                                          std::vector<nax::dyn_tensor> in) {
  const std::vector<g::value> grads = g::grad(loss, wrt);
  REQUIRE(grads.size() == wrt.size());
  std::vector<g::value> outs{loss};
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    CHECK(grads[k].shape() == wrt[k].shape());
    outs.push_back(grads[k]);
  }
  auto ex = g::compile(b, outs);
  auto unfused = g::compile(b, outs, {.fusion = false});
  auto forward = g::compile(b, {loss});
  const std::vector<nax::dyn_tensor> got = ex.run(in), plain = unfused.run(in);
  for (std::size_t k = 0; k < got.size(); ++k)
    CHECK(std::memcmp(got[k].data(), plain[k].data(), got[k].bytes()) == 0);
  const std::vector<g::value> params = parameters(b);
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    const auto p = std::find_if(params.begin(), params.end(),
                                [&](const g::value& v) { return v.id() == wrt[k].id(); });
    REQUIRE(p != params.end());
    nax::dyn_tensor& x = in[static_cast<std::size_t>(p - params.begin())];
    REQUIRE(x.dtype() == nax::dtype::f64);
    double worst = 0;
    for (std::size_t e = 0; e < x.size(); ++e) {
      double& v = static_cast<double*>(x.data())[e];
      const double keep = v, h = 1e-5 * std::max(1.0, std::abs(v));
      v = keep + h;
      const double up = at(forward.run(in)[0], 0);
      v = keep - h;
      const double down = at(forward.run(in)[0], 0);
      v = keep;
      const double want = (up - down) / (2 * h), have = at(got[k + 1], e);
      worst = std::max(worst, std::abs(have - want) / std::max(1.0, std::abs(want)));
    }
    CAPTURE(k);
    CHECK(worst <= 1e-6);
  }
  return std::vector<nax::dyn_tensor>(got.begin() + 1, got.end());
}

}  // namespace grad_check
