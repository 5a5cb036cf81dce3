#pragma once
// softmax<A>(x) and log_softmax<A>(x): numerically stable (the row's max is subtracted before
// exp), threaded over the other axes, with the input expression fused into the row loop.
//
// A row that fits in L1/L2 (<= 32 KiB) is swept three times, the second and third from cache:
// max, then exp(x - max) written out and summed, then scaled by 1/sum; one exp per element and
// one pass over memory each way. A longer row is read twice from memory: an online pass keeps a
// running max and a sum rescaled whenever the max grows, then the output is written.

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/rows.hpp>
#include <nax/typed/tensor.hpp>

namespace nax {
namespace detail {

// out[i] = f(i, tail) for a row, vector by vector, with a padded tail.
template <class V, class Writer, class F>
void write_row(const Writer& out, std::size_t n, F f) {
  constexpr std::size_t w = simd::width<V>;
  std::size_t i = 0;
  for (; i + w <= n; i += w) out.store(i, f(i, false));
  if (i < n) out.store_tail(i, n - i, f(i, true));
}

template <class V, bool Log>
struct softmax_row {
  using vec = simd::vec<V>;
  static constexpr std::size_t w = simd::width<V>;

  template <class Reader, class Writer>
  void operator()(const Reader& x, const Writer& out, std::size_t n) const {
    auto load = [&](std::size_t i, bool tail) { return tail ? x.load_tail(i, n - i) : x.load(i); };
    V max_v, sum_v;
    if (n * sizeof(V) <= cached_row_bytes) {
      max_v = reduce_row<reducers::max, V>(x, n, [](const vec& v) { return v; });
      const vec mx(max_v);
      vec s0(V(0)), s1(V(0));
      std::size_t i = 0;
      if constexpr (Log) {
        for (; i + 2 * w <= n; i += 2 * w) {
          s0 += simd::exp(x.load(i) - mx);
          s1 += simd::exp(x.load(i + w) - mx);
        }
        for (; i + w <= n; i += w) s0 += simd::exp(x.load(i) - mx);
        if (i < n) s1 += keep_first<reducers::sum>(simd::exp(x.load_tail(i, n - i) - mx), n - i);
      } else {
        // The exps go to the output, which the third sweep rescales while it is in cache.
        for (; i + 2 * w <= n; i += 2 * w) {
          const vec e0 = simd::exp(x.load(i) - mx), e1 = simd::exp(x.load(i + w) - mx);
          out.store(i, e0);
          out.store(i + w, e1);
          s0 += e0;
          s1 += e1;
        }
        for (; i + w <= n; i += w) {
          const vec e = simd::exp(x.load(i) - mx);
          out.store(i, e);
          s0 += e;
        }
        if (i < n) {
          const vec e = simd::exp(x.load_tail(i, n - i) - mx);
          out.store_tail(i, n - i, e);
          s1 += keep_first<reducers::sum>(e, n - i);
        }
      }
      sum_v = reduce_lanes<reducers::sum>(s0 + s1);
      if constexpr (!Log) {
        const V inv = V(1) / sum_v;
        for (i = 0; i + w <= n; i += w) out.store(i, out.load(i) * vec(inv));
        for (; i < n; ++i) out.at(i) *= inv;
        return;
      }
    } else {
      online(x, n, max_v, sum_v);
      if constexpr (!Log) {
        const vec inv(V(1) / sum_v), mx(max_v);
        write_row<V>(out, n,
                     [&](std::size_t i, bool tail) { return simd::exp(load(i, tail) - mx) * inv; });
        return;
      }
    }
    // (x - max) - log(sum): x - max is exact near the max, where x - (max + log(sum)) would
    // round at the scale of x.
    const vec mx(max_v), log_sum(simd::log(sum_v));
    write_row<V>(out, n, [&](std::size_t i, bool tail) { return (load(i, tail) - mx) - log_sum; });
  }

  // One pass: per lane, a running max m and the sum s of exp(x - m), rescaled when m grows.
  template <class Reader>
  static void online(const Reader& x, std::size_t n, V& max_v, V& sum_v) {
    vec m(reducers::max::identity<V>()), s(V(0));
    auto step = [&](const vec& v, std::size_t valid) {
      const vec mn = simd::max(m, v);
      const vec rescale = simd::select(m == mn, vec(V(1)), simd::exp(m - mn));
      s = s * rescale + keep_first<reducers::sum>(simd::exp(v - mn), valid);
      m = mn;
    };
    std::size_t i = 0;
    for (; i + w <= n; i += w) step(x.load(i), w);
    if (i < n) step(keep_first<reducers::max>(x.load_tail(i, n - i), n - i), n - i);
    alignas(64) V ms[w], ss[w];
    m.store_aligned(ms);
    s.store_aligned(ss);
    max_v = reduce_lanes<reducers::max>(m);
    sum_v = 0;
    for (std::size_t j = 0; j < w; ++j)
      if (ss[j] != V(0)) sum_v += ss[j] * (ms[j] == max_v ? V(1) : simd::exp(ms[j] - max_v));
  }
};

template <class A, bool Log, class X>
auto softmax_impl(X&& x) {
  using E = expression_of<X>;
  using V = typename E::value_type;
  // An error here means the softmax axis is not an axis of the expression.
  static_assert(require<axes_contains_v<typename E::axes_type, A>,
                        error::axis_not_in_list<axis_diagnostic_name<A>>>);
  static_assert(std::is_floating_point_v<V>, "nax::softmax needs floating-point elements");
  const E e = as_expression<V>(std::forward<X>(x));
  tensor_of<V, typename E::axes_type> out(extents_over<typename E::axes_type>::of(e));
  for_each_row<A, V>(e, out, softmax_row<V, Log>{});
  return out;
}

}  // namespace detail

/// exp(x) / sum(exp(x)) along axis A, computed stably; a tensor over x's axes in x's order.
template <class A, class X>
requires expression<X>
auto softmax(X&& x) { return detail::softmax_impl<A, false>(std::forward<X>(x)); }

/// log(softmax<A>(x)) = x - max - log(sum(exp(x - max))), computed without the softmax.
template <class A, class X>
requires expression<X>
auto log_softmax(X&& x) { return detail::softmax_impl<A, true>(std::forward<X>(x)); }

}  // namespace nax
