// Shared by the nax::jit tests: axes, data, and comparisons against the eager typed code.
#pragma once

#include <nax/jit/jit.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;

namespace jit_test {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(64)>;
using key = nax::axis<"key">;
using hidden = nax::axis<"hidden", 24>;
using ff = nax::axis<"ff", 40>;
using head = nax::axis<"head", 16>;

template <class Tensor>
inline void fill(Tensor& t, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::uint32_t s = seed;
  for (float& v : t) {
    s = s * 1664525u + 1013904223u;
    v = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
}

template <class T, class... A>
void check_close(const nax::tensor<T, A...>& got, const nax::tensor<T, A...>& want,
                 double tolerance = 1e-5) {
  REQUIRE(got.extents() == want.extents());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got.data()[i], w = want.data()[i];
    worst = std::max(worst, std::abs(g - w) / (1.0 + std::abs(w)));
  }
  CHECK(worst <= tolerance);
}

// A lambda run eagerly, the reference, on const views: the leaf type the jitted kernels read, so
// that an elementwise expression's loop is instantiated once for both.
template <class F, class... Tensor>
auto eager(const F& f, const Tensor&... x) {
  return f(x.view()...);
}

inline std::vector<g::op_kind> step_kinds(const nax::executable& ex) {
  std::vector<g::op_kind> kinds;
  for (const g::program_step& s : ex.program().steps) kinds.push_back(s.kind());
  return kinds;
}

}  // namespace jit_test
