#pragma once
// The softmax (and log_softmax) of one row, as the typed softmax and the runtime's row kernel run
// it: a row that fits in cache is swept three times from it (max, exp and sum, scale); a longer
// one is read once by an online pass (running max and rescaled sum per lane) and once to write.

#include <cstddef>

#include <nax/kernels/row_io.hpp>
#include <nax/kernels/row_reduce.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::detail {

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

}  // namespace nax::detail
