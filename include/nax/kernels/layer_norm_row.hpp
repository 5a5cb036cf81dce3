#pragma once
// The layer norm of one row, as the typed layer_norm and the runtime's row kernel run it: a row
// that fits in cache gets exact two-pass statistics (the mean, then the mean squared deviation);
// a longer one Welford's one-pass update per lane, the lanes merged with Chan's formula.

#include <cmath>
#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/kernels/row_reduce.hpp>
#include <nax/kernels/softmax_row.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

template <class V>
struct layer_norm_row {
  /// The row kernels' vectors: AVX-512 where the flags enable it (simd::row_arch).
  using vec = simd::row_vec<V>;
  static constexpr std::size_t w = vec::size;
  static constexpr bool streams_rows = true;  // streamed_row_kernel
  V eps;

  template <class Reader, class Writer, class G, class B>
  void operator()(const Reader& x, const Writer& out, std::size_t n, const G& gamma,
                  const B& beta) const {
    V mu, var;
    if (n * sizeof(V) <= cached_row_bytes) {
      // The row stays in cache after the first sweep: the mean, then the mean squared deviation
      // from it (no cancellation, unlike the mean of squares minus the squared mean).
      using sum = reducers::sum;
      // The first sweep reads the row from memory: the previous row's deferred output (a
      // streamed writer) goes out meanwhile.
      auto drain = out.drain();
      mu = reduce_row<sum, V, vec>(
               x, n, [](const vec& v) { return v; }, drain) /
           static_cast<V>(n);
      out.drained(drain);
      const vec m(mu);
      // (From L1: the next row's input is fetched meanwhile, by a streamed writer.)
      var =
          reduce_row<sum, V, vec>(
              x, n, [&](const vec& v) { return (v - m) * (v - m); }, [&] { out.prefetch_step(); }) /
          static_cast<V>(n);
    } else {
      welford(x, n, mu, var);
    }
    const vec shift(mu), scale(V(1) / std::sqrt(var + eps));
    write_row<vec>(out, n, [&](std::size_t at, bool is_tail) {
      if (is_tail)
        return simd::fma((load_tail_as<vec>(x, at, n - at) - shift) * scale,
                         load_tail_as<vec>(gamma, at, n - at), load_tail_as<vec>(beta, at, n - at));
      return simd::fma((load_as<vec>(x, at) - shift) * scale, load_as<vec>(gamma, at),
                       load_as<vec>(beta, at));
    });
  }

  // A row too long for the cache: one pass with Welford's update in every vector lane, the
  // lanes merged with Chan's formula.
  template <class Reader>
  static void welford(const Reader& x, std::size_t n, V& mu, V& var) {
    vec mean(V(0)), m2(V(0));
    std::size_t i = 0, k = 0;
    for (; i + w <= n; i += w) {
      const vec v = load_as<vec>(x, i);
      const vec delta = v - mean;
      mean += delta * vec(V(1) / static_cast<V>(++k));
      m2 += delta * (v - mean);
    }
    alignas(64) V means[w], m2s[w], tail[w];
    mean.store_aligned(means);
    m2.store_aligned(m2s);
    const std::size_t rest = n - i;
    if (rest) load_tail_as<vec>(x, i, rest).store_aligned(tail);
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

}  // namespace nax::detail
