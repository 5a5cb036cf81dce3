#pragma once
// The update loops of the optimizers (nax/typed/optim.hpp), each one pass over a parameter, its
// gradient and its state, in place: every element read once and written once, vectorized with
// the elementwise kernels' vectors and split over the thread pool. The arithmetic is PyTorch's
// (torch.optim.SGD, Adam and AdamW), element by element; each element's result is the same for
// every thread count.

#include <cmath>
#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// SGD with momentum: g' = g + weight_decay w; with momentum, the velocity b = g' at the first
/// step, else momentum b + (1 - dampening) g', and g' = b (nesterov: g' + momentum b);
/// w -= lr g'.
struct sgd_coefficients {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  bool first = true;  // the velocity is not yet set
};

/// Adam (decoupled = false: weight decay added to the gradient) or AdamW (decoupled: w scaled by
/// 1 - lr weight_decay first): m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
/// w -= lr / bias1 m / (sqrt(v) / sqrt(bias2) + eps), with bias_k = 1 - beta_k^step.
struct adam_coefficients {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;
  double bias1 = 1, bias2 = 1;
};

namespace detail {

// Calls vector(i) for each whole vector of elements [i, i + w) and scalar(i) for each element of
// the last partial vector, the vectors split over the thread pool: which path an element takes
// depends on its index alone, never on the thread count.
template <class T, class Vector, class Scalar>
void update_loop(std::size_t n, Vector vector, Scalar scalar) {
  constexpr std::size_t w = simd::vec<T>::size;
  const std::size_t blocks = n / w, grain = nax::detail::parallel_grain_elements / w;
  auto run = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t b = lo; b < hi; ++b) vector(b * w);
  };
  if (blocks <= grain)
    run(0, blocks);
  else
    parallel_for(0, blocks, grain, run);
  for (std::size_t i = blocks * w; i < n; ++i) scalar(i);
}

}  // namespace detail

template <class T>
void sgd_update(T* w, const T* g, T* velocity, std::size_t n, const sgd_coefficients& c) {
  using V = simd::vec<T>;
  const T lr = T(c.lr), mom = T(c.momentum), keep = T(1 - c.dampening), wd = T(c.weight_decay);
  // One element (vector or scalar): the same expressions either way.
  auto step = [&](auto wi, auto gi, auto bi, auto& new_b) {
    auto d = gi + wi * decltype(wi)(wd);
    if (c.momentum != 0) {
      new_b = c.first ? d : bi * decltype(wi)(mom) + d * decltype(wi)(keep);
      d = c.nesterov ? d + new_b * decltype(wi)(mom) : new_b;
    }
    return wi - d * decltype(wi)(lr);
  };
  detail::update_loop<T>(
      n,
      [&](std::size_t i) {
        const V b = c.momentum != 0 ? V::load_unaligned(velocity + i) : V(T(0));
        V new_b = b;
        step(V::load_unaligned(w + i), V::load_unaligned(g + i), b, new_b).store_unaligned(w + i);
        if (c.momentum != 0) new_b.store_unaligned(velocity + i);
      },
      [&](std::size_t i) {
        const T b = c.momentum != 0 ? velocity[i] : T(0);
        T new_b = b;
        w[i] = step(w[i], g[i], b, new_b);
        if (c.momentum != 0) velocity[i] = new_b;
      });
}

template <class T>
void adam_update(T* w, const T* g, T* m, T* v, std::size_t n, const adam_coefficients& c) {
  using V = simd::vec<T>;
  const T b1 = T(c.beta1), b2 = T(c.beta2), one_b1 = T(1 - c.beta1), one_b2 = T(1 - c.beta2);
  const T step_size = T(c.lr / c.bias1), rsqrt_bias2 = T(1 / std::sqrt(c.bias2)), eps = T(c.eps);
  const T wd = T(c.weight_decay), shrink = T(1 - c.lr * c.weight_decay);
  auto step = [&](auto wi, auto gi, auto& mi, auto& vi) {
    using X = decltype(wi);
    if (c.decoupled)
      wi = wi * X(shrink);
    else
      gi = gi + wi * X(wd);
    mi = mi * X(b1) + gi * X(one_b1);
    vi = vi * X(b2) + gi * gi * X(one_b2);
    return wi - X(step_size) * mi / (simd::sqrt(vi) * X(rsqrt_bias2) + X(eps));
  };
  detail::update_loop<T>(
      n,
      [&](std::size_t i) {
        V mi = V::load_unaligned(m + i), vi = V::load_unaligned(v + i);
        step(V::load_unaligned(w + i), V::load_unaligned(g + i), mi, vi).store_unaligned(w + i);
        mi.store_unaligned(m + i);
        vi.store_unaligned(v + i);
      },
      [&](std::size_t i) { w[i] = step(w[i], g[i], m[i], v[i]); });
}

}  // namespace nax::kernels
