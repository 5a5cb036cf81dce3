#pragma once
// layer_norm<A>(x, gamma, beta, eps): (x - mean) / sqrt(var + eps) * gamma + beta along axis A,
// threaded over the other axes, with x's expression fused into the row loop. One pass over memory
// computes the mean and the (biased) variance, a second writes. A row that fits in L1/L2 is read
// from memory once: its mean, then the mean squared deviation from it are two sweeps over the
// cached row (exact two-pass statistics, no cancellation). A longer row gets one pass with
// Welford's update in every vector lane, merged across lanes with Chan's formula.

#include <cmath>
#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/rows.hpp>
#include <nax/typed/softmax.hpp>
#include <nax/typed/tensor.hpp>

namespace nax {
namespace detail {

template <class V>
struct layer_norm_row {
  using vec = simd::vec<V>;
  static constexpr std::size_t w = simd::width<V>;
  V eps;

  template <class Reader, class Writer, class G, class B>
  void operator()(const Reader& x, const Writer& out, std::size_t n, const G& gamma,
                  const B& beta) const {
    V mu, var;
    if (n * sizeof(V) <= cached_row_bytes) {
      // The row stays in cache after the first sweep: the mean, then the mean squared deviation
      // from it (no cancellation, unlike the mean of squares minus the squared mean).
      using sum = reducers::sum;
      mu = reduce_row<sum, V>(x, n, [](const vec& v) { return v; }) / static_cast<V>(n);
      const vec m(mu);
      var = reduce_row<sum, V>(x, n, [&](const vec& v) { return (v - m) * (v - m); }) /
            static_cast<V>(n);
    } else {
      welford(x, n, mu, var);
    }
    const vec shift(mu), scale(V(1) / std::sqrt(var + eps));
    write_row<V>(out, n, [&](std::size_t at, bool is_tail) {
      if (is_tail)
        return simd::fma((x.load_tail(at, n - at) - shift) * scale, gamma.load_tail(at, n - at),
                         beta.load_tail(at, n - at));
      return simd::fma((x.load(at) - shift) * scale, gamma.load(at), beta.load(at));
    });
  }

  // A row too long for the cache: one pass with Welford's update in every vector lane, the
  // lanes merged with Chan's formula.
  template <class Reader>
  static void welford(const Reader& x, std::size_t n, V& mu, V& var) {
    vec mean(V(0)), m2(V(0));
    std::size_t i = 0, k = 0;
    for (; i + w <= n; i += w) {
      const vec v = x.load(i);
      const vec delta = v - mean;
      mean += delta * vec(V(1) / static_cast<V>(++k));
      m2 += delta * (v - mean);
    }
    alignas(64) V means[w], m2s[w], tail[w];
    mean.store_aligned(means);
    m2.store_aligned(m2s);
    const std::size_t rest = n - i;
    if (rest) x.load_tail(i, rest).store_aligned(tail);
    // Lane j has seen k values, plus one from the tail if j < rest; merge the lanes pairwise.
    V count = 0, sq = 0;
    mu = 0;
    for (std::size_t j = 0; j < w; ++j) {
      V cj = static_cast<V>(k), mj = means[j], sj = m2s[j];
      if (j < rest) {
        cj += 1;
        const V delta = tail[j] - mj;
        mj += delta / cj;
        sj += delta * (tail[j] - mj);
      }
      if (cj == 0) continue;
      const V total = count + cj, delta = mj - mu;
      mu += delta * cj / total;
      sq += sj + delta * delta * count * cj / total;
      count = total;
    }
    var = sq / count;
  }
};

template <class A, class E, class P>
void check_parameter_axis(const E& e, const P& p, const char* what) {
  if (p.template extent<A>() != e.template extent<A>())
    throw_shape_error("layer_norm: axis '", A::name, "' of ", what, " has ", p.template extent<A>(),
                      " but x has ", e.template extent<A>());
}

template <class E, class P, class... A>
void check_parameter([[maybe_unused]] const E& e, [[maybe_unused]] const P& p,
                     [[maybe_unused]] const char* what, axes<A...>*) {
  (check_parameter_axis<A>(e, p, what), ...);
}

}  // namespace detail

/// Normalizes x along axis A to zero mean and unit variance (biased, as PyTorch), then scales
/// by gamma and shifts by beta (tensors or expressions over axes of x, usually just A, or
/// scalars). A tensor over x's axes in x's order.
template <class A, class X, class G, class B, class S>
requires expression<X>
auto layer_norm(X&& x, G&& gamma, B&& beta, S eps) {
  using E = detail::expression_of<X>;
  using V = typename E::value_type;
  // An error here means the normalized axis is not an axis of x.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  static_assert(std::is_floating_point_v<V>, "nax::layer_norm needs floating-point elements");
  const E e = detail::as_expression<V>(std::forward<X>(x));
  const auto g = detail::as_expression<V>(std::forward<G>(gamma));
  const auto b = detail::as_expression<V>(std::forward<B>(beta));
  // An error here means gamma or beta has an axis that x does not have.
  static_assert(
      detail::check_assignable<typename E::axes_type, typename decltype(g)::axes_type, false>() &&
      detail::check_assignable<typename E::axes_type, typename decltype(b)::axes_type, false>());
  detail::check_parameter(e, g, "gamma", static_cast<typename decltype(g)::axes_type*>(nullptr));
  detail::check_parameter(e, b, "beta", static_cast<typename decltype(b)::axes_type*>(nullptr));
  using order = detail::row_order<typename E::axes_type, A>;
  tensor_of<V, typename E::axes_type> out(detail::extents_over<typename E::axes_type>::of(e));
  detail::for_each_row<A, V>(e, out, detail::layer_norm_row<V>{static_cast<V>(eps)},
                             g.template cursor<order>(), b.template cursor<order>());
  return out;
}

}  // namespace nax
