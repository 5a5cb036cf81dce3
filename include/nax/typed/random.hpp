#pragma once
// Random tensors: uniform, normal and truncated normal, from a counter-based stream
// (ops/random.hpp): element i, in row-major order of the result, is a pure function of the key
// (seed, stream), the distribution's parameters and i. So the bits are the same on every thread
// count, and the same as nax::jit's and the runtime graph's random nodes give for that key.
//
//   auto w = nax::normal<float, in, out>(nax::rng{42}, 0.0, 0.02);
//   auto u = nax::uniform<float, batch, hidden>(7, -1.0, 1.0, batch{4});
//   auto n = nax::truncated_normal_like(w, {42, 1}, 0.0, 0.02);   // stream 1 of seed 42
//
// Element types: float and double. The parameters: lo <= hi; stddev >= 0; finite
// (std::invalid_argument naming the function otherwise).

#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/isa.hpp>
#include <nax/kernels/random.hpp>
#include <nax/ops/random.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// What a random tensor of T asks, typed or traced.
template <class T>
constexpr bool check_random_type() {
  // An error here means a random tensor of integers or bools was asked for.
  static_assert(std::is_floating_point_v<T>, "nax: random tensors have float or double elements");
  return true;
}

template <class T>
void fill_random(T* out, std::size_t n, std::string_view op, rng key, ops::distribution d, double a,
                 double b) {
  static_assert(check_random_type<T>());
  ops::check_random_parameters(op, d, a, b);
  kernels::fill_random(out, n, ops::random_key(key), d, a, b);
}

template <class T, class... Axes, class... Given>
tensor<T, Axes...> random_tensor(std::string_view op, rng key, ops::distribution d, double a,
                                 double b, Given... given) {
  tensor<T, Axes...> t(typename tensor<T, Axes...>::extents_type(given...));
  fill_random(t.data(), t.size(), op, key, d, a, b);
  return t;
}

template <class X>
auto random_like(const X& x, std::string_view op, rng key, ops::distribution d, double a,
                 double b) {
  auto t = tensor_like<typename X::value_type>(x);
  fill_random(t.data(), t.size(), op, key, d, a, b);
  return t;
}

}  // namespace detail

/// Uniform in [lo, hi) over `Axes...` (dynamic extents by name).
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> uniform(rng key, double lo, double hi, Given... given) {
  return detail::random_tensor<T, Axes...>("nax::uniform", key, ops::distribution::uniform, lo, hi,
                                           given...);
}

/// Normal with mean and standard deviation (Box-Muller).
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> normal(rng key, double mean, double stddev, Given... given) {
  return detail::random_tensor<T, Axes...>("nax::normal", key, ops::distribution::normal, mean,
                                           stddev, given...);
}

/// Normal resampled until within 2 standard deviations of the mean (initialization).
template <class T, axis_type... Axes, axis_type... Given>
tensor<T, Axes...> truncated_normal(rng key, double mean, double stddev, Given... given) {
  return detail::random_tensor<T, Axes...>(
      "nax::truncated_normal", key, ops::distribution::truncated_normal, mean, stddev, given...);
}

/// The same over x's axes, with x's extents and element type (x is not evaluated).
template <class X>
requires expression<X>
auto uniform_like(const X& x, rng key, double lo = 0, double hi = 1) {
  return detail::random_like(x, "nax::uniform_like", key, ops::distribution::uniform, lo, hi);
}
template <class X>
requires expression<X>
auto normal_like(const X& x, rng key, double mean = 0, double stddev = 1) {
  return detail::random_like(x, "nax::normal_like", key, ops::distribution::normal, mean, stddev);
}
template <class X>
requires expression<X>
auto truncated_normal_like(const X& x, rng key, double mean = 0, double stddev = 1) {
  return detail::random_like(x, "nax::truncated_normal_like", key,
                             ops::distribution::truncated_normal, mean, stddev);
}

}  // namespace nax
