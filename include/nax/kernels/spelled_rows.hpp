#pragma once
// Softmax and layer_norm as a graph spelled them from primitives (the fusion passes
// graph/passes/fuse_softmax.hpp and fuse_layer_norm.hpp), in one step and bit for bit the
// primitives' results: every reduction sums in the order of the reduction kernel
// (kernels/reduce.hpp: a row's vectors into four accumulators, long rows in parts combined in
// order; along another axis, the rows in order), and every elementwise op rounds as its op body
// does (ops/elementwise.hpp: a division stays a division, no multiply-add is contracted).
// The op kernels (kernels/rows.hpp) round in their own way (a reciprocal, an online pass for long
// rows, gamma and beta in one multiply-add); they are what `graph::softmax` and
// `graph::layer_norm` and the typed layer run.
//
// Along the last axis a row's intermediate (the exps, the squared deviations) is written to its
// output row and reduced from there by the reduction kernel's own row function, so the sums are
// the reduction's by construction; a row that fits in cache stays there between the sweeps.

#include <algorithm>
#include <cstddef>
#include <span>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/kernels/reduce.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/kernels/rows.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels {

/// How a softmax was spelled: `exp(x - reduce_max(x))` or `exp(x)`; then `e / sum(e)` or
/// `e * (1 / sum(e))`.
struct softmax_spelling {
  bool subtract_max = true;
  bool divide = true;
};

/// How a layer_norm was spelled: `d = x - mean(x)` (an RMSNorm, not `centered`: `d = x`);
/// `var = mean(d * d)` or `mean(pow(d, 2))`; `d * rsqrt(var + eps)` or `d / sqrt(var + eps)`;
/// then `* gamma` and `+ beta` where present.
struct layer_norm_spelling {
  bool square_by_pow = false;
  bool divide_by_sqrt = false;
  double epsilon = 0;
  bool has_gamma = false, has_beta = false;
  bool centered = true;
};

/// The geometry of a spelled row op: the rows (plan_rows: [outer, n, inner], threading) and the
/// reduction over the axis (plan_reduce: its path and parts, and its errors).
struct spelled_rows_plan {
  rows_plan rows;
  reduce_plan reduce;
};

namespace detail {

// The total of one row's reduction as run_reduce computes it for that row (path rows or copy).
template <class Red, class T>
T row_total(const reduce_plan& r, const T* row) {
  return r.path == reduce_path::copy ? row[0] : reduce_item<Red>(r, row);
}

// y[i] = f(load(i)) over a row of n elements, vector by vector, the tail padded.
template <class V, class F>
void map_row(const V* x, V* y, std::size_t n, F f) {
  constexpr std::size_t w = simd::width<V>;
  std::size_t i = 0;
  for (; i + w <= n; i += w) f(simd::vec<V>::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n)
    nax::detail::row_writer<V, true>{y + i, 1}.store_tail(
        0, n - i, f(nax::detail::load_partial<V>(x + i, 1, n - i)));
}

template <class V>
void spelled_softmax_row(const spelled_rows_plan& p, softmax_spelling s, const V* x, V* y) {
  using vec = simd::vec<V>;
  const std::size_t n = p.rows.n;
  const vec m(s.subtract_max ? row_total<reducers::max>(p.reduce, x) : V(0));
  if (s.subtract_max)
    map_row<V>(x, y, n, [&](const vec& v) { return ops::exp::apply(v - m); });
  else
    map_row<V>(x, y, n, [&](const vec& v) { return ops::exp::apply(v); });
  const V total = row_total<reducers::sum>(p.reduce, static_cast<const V*>(y));
  if (s.divide) {
    const vec t(total);
    map_row<V>(y, y, n, [&](const vec& e) { return ops::div::apply(e, t); });
  } else {
    const vec r(ops::div::apply(V(1), total));
    map_row<V>(y, y, n, [&](const vec& e) { return e * r; });
  }
}

// gamma and beta are read where the spelling has them (null otherwise).
template <class V>
void spelled_layer_norm_row(const spelled_rows_plan& p, const layer_norm_spelling& s, const V* x,
                            const V* gamma, const V* beta, V* y) {
  using vec = simd::vec<V>;
  const std::size_t n = p.rows.n;
  if (!s.has_gamma) gamma = nullptr;
  if (!s.has_beta) beta = nullptr;
  const bool copy = p.reduce.path == reduce_path::copy;  // n = 1: the mean is the element
  auto mean = [&](const V* row) {
    const V t = row_total<reducers::sum>(p.reduce, row);
    return copy ? t : divide(t, n);
  };
  // Not centered, d = x - 0: the same bits as x (-0 - 0 is -0), one sweep fewer.
  const vec mu(s.centered ? mean(x) : V(0));
  if (s.square_by_pow)
    map_row<V>(x, y, n, [&](const vec& v) { return ops::pow::apply(v - mu, vec(V(2))); });
  else
    map_row<V>(x, y, n, [&](const vec& v) {
      const vec d = v - mu;
      return d * d;
    });
  const V ve = mean(static_cast<const V*>(y)) + static_cast<V>(s.epsilon);
  const vec r(s.divide_by_sqrt ? ops::sqrt::apply(ve) : ops::rsqrt::apply(ve));
  // The norm, then * gamma, then + beta, in one sweep, each rounded as its op (op_result: no
  // multiply-add contracted across them).
  auto scaled = [&](const vec& v, const vec& g, const vec& b) {
    vec t = simd::op_result(s.divide_by_sqrt ? ops::div::apply(v - mu, r) : (v - mu) * r);
    if (s.has_gamma) t = simd::op_result(t * g);
    if (s.has_beta) t = t + b;
    return t;
  };
  constexpr std::size_t w = simd::width<V>;
  const vec none(V(0));
  auto at = [](const V* p, std::size_t i) { return p ? vec::load_unaligned(p + i) : vec(V(0)); };
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    scaled(vec::load_unaligned(x + i), at(gamma, i), at(beta, i)).store_unaligned(y + i);
  if (i < n) {
    auto part = [&](const V* p) {
      return p ? nax::detail::load_partial<V>(p + i, 1, n - i) : none;
    };
    nax::detail::row_writer<V, true>{y + i, 1}.store_tail(0, n - i,
                                                          scaled(part(x), part(gamma), part(beta)));
  }
}

// The columns path: len columns (each a row of the op along the axis), n rows `inner` apart;
// per column, each reduction folds the rows in order from the first one, as reduce_columns.
template <class V>
struct column_chunk {
  using vec = simd::vec<V>;
  static constexpr std::size_t w = simd::width<V>;
  const spelled_rows_plan& p;
  std::size_t len;
  V* at(V* base, std::size_t k) const { return base + k * p.rows.inner; }
  const V* at(const V* base, std::size_t k) const { return base + k * p.rows.inner; }

  // For every row k and vector j of the chunk: f(k, j, valid) (valid < w for a last, partial one).
  template <class F>
  void sweep(std::size_t k0, F f) const {
    for (std::size_t k = k0; k < p.rows.n; ++k)
      for (std::size_t j = 0; j < len; j += w) f(k, j, std::min(w, len - j));
  }
  static vec load(const V* q, std::size_t valid) {
    return valid == w ? load_columns<V, true>(q, w) : load_columns<V, false>(q, valid);
  }
  static void store(V* q, std::size_t valid, const vec& v) {
    valid == w ? store_columns<V, true>(q, w, v) : store_columns<V, false>(q, valid, v);
  }
  // acc[j..] = Red over the rows of src (each row's len columns).
  template <class Red>
  void fold(const V* src, vec* acc) const {
    for (std::size_t j = 0; j < len; j += w) acc[j / w] = load(src + j, std::min(w, len - j));
    sweep(1, [&](std::size_t k, std::size_t j, std::size_t valid) {
      acc[j / w] = Red::combine(acc[j / w], load(at(src, k) + j, valid));
    });
  }
  // y = f(x, acc) row by row.
  template <class F>
  void map(const V* src, V* dst, const vec* acc, F f) const {
    sweep(0, [&](std::size_t k, std::size_t j, std::size_t valid) {
      store(at(dst, k) + j, valid, f(k, load(at(src, k) + j, valid), acc[j / w]));
    });
  }
};

// Vectors per column chunk (plan_spelled_rows' chunks are at most max_chunk_bytes wide).
template <class V>
inline constexpr std::size_t max_chunk_vectors = max_chunk_bytes / sizeof(V) / simd::width<V>;

template <class V>
void spelled_softmax_columns(const spelled_rows_plan& p, softmax_spelling s, const V* x, V* y,
                             std::size_t len) {
  using vec = simd::vec<V>;
  const column_chunk<V> c{p, len};
  alignas(64) vec m[max_chunk_vectors<V>], t[max_chunk_vectors<V>];
  if (s.subtract_max) {
    c.template fold<reducers::max>(x, m);
    c.map(x, y, m,
          [](std::size_t, const vec& v, const vec& mj) { return ops::exp::apply(v - mj); });
  } else {
    std::fill_n(m, (len + vec::size - 1) / vec::size, vec(V(0)));  // (unread: map's argument)
    c.map(x, y, m, [](std::size_t, const vec& v, const vec&) { return ops::exp::apply(v); });
  }
  c.template fold<reducers::sum>(y, t);
  if (s.divide) {
    c.map(y, y, t, [](std::size_t, const vec& e, const vec& tj) { return ops::div::apply(e, tj); });
  } else {
    for (std::size_t j = 0; j < (len + vec::size - 1) / vec::size; ++j)
      t[j] = ops::div::apply(vec(V(1)), t[j]);
    c.map(y, y, t, [](std::size_t, const vec& e, const vec& rj) { return e * rj; });
  }
}

template <class V>
void spelled_layer_norm_columns(const spelled_rows_plan& p, const layer_norm_spelling& s,
                                const V* x, const V* gamma, const V* beta, V* y, std::size_t len) {
  using vec = simd::vec<V>;
  const column_chunk<V> c{p, len};
  const std::size_t vecs = (len + vec::size - 1) / vec::size;
  const bool copy = p.reduce.path == reduce_path::copy;
  alignas(64) vec mu[max_chunk_vectors<V>], r[max_chunk_vectors<V>];
  auto mean = [&](vec* acc) {
    if (!copy)
      for (std::size_t j = 0; j < vecs; ++j) acc[j] = acc[j] / vec(static_cast<V>(p.rows.n));
  };
  if (s.centered) {
    c.template fold<reducers::sum>(x, mu);
    mean(mu);
  } else {
    std::fill_n(mu, vecs, vec(V(0)));
  }
  c.map(x, y, mu, [&](std::size_t, const vec& v, const vec& m) {
    return s.square_by_pow ? ops::pow::apply(v - m, vec(V(2))) : (v - m) * (v - m);
  });
  c.template fold<reducers::sum>(y, r);
  mean(r);
  for (std::size_t j = 0; j < vecs; ++j) {
    const vec ve = r[j] + vec(static_cast<V>(s.epsilon));
    r[j] = s.divide_by_sqrt ? ops::sqrt::apply(ve) : ops::rsqrt::apply(ve);
  }
  // (x - mu) against r, then gamma and beta: mu's lanes ride in y's place.
  c.map(x, y, mu, [&](std::size_t, const vec& v, const vec& m) { return v - m; });
  c.map(y, y, r, [&](std::size_t k, const vec& d, const vec& rj) {
    vec v = simd::op_result(s.divide_by_sqrt ? ops::div::apply(d, rj) : d * rj);
    if (s.has_gamma) v = simd::op_result(v * vec(gamma[k]));
    if (s.has_beta) v = v + vec(beta[k]);
    return v;
  });
}

// rows(x_row, y_row) for each row (the last axis), or columns(x, y, len) for each chunk.
template <class V, class Rows, class Columns>
void for_each_spelled(const spelled_rows_plan& sp, const V* x, V* y, Rows rows, Columns columns) {
  const rows_plan& p = sp.rows;
  if (p.items == 0) return;
  if (p.inner == 1) {
    auto body = [&](std::size_t lo, std::size_t hi) {
      for (std::size_t r = lo; r < hi; ++r) {
        if (r + 1 < hi && p.n * sizeof(V) <= nax::detail::cached_row_bytes)
          nax::detail::prefetch_range(x + (r + 1) * p.n, p.n * sizeof(V));
        rows(r, x + r * p.n, y + r * p.n);
      }
    };
    if (p.items <= p.grain) return body(0, p.items);
    return parallel_for(0, p.items, p.grain, body);
  }
  const std::size_t chunks = (p.inner + p.chunk - 1) / p.chunk;
  auto body = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t item = lo; item < hi; ++item) {
      const std::size_t o = item / chunks, c = item % chunks * p.chunk;
      const std::size_t offset = o * p.n * p.inner + c;
      columns(x + offset, y + offset, std::min(p.chunk, p.inner - c));
    }
  };
  if (p.items <= p.grain) return body(0, p.items);
  parallel_for(0, p.items, p.grain, body);
}

}  // namespace detail

/// Plans a spelled softmax (`first` = reduce_kind::max when it subtracts the max, else sum) or
/// layer_norm (`first` = mean) along `axis`: plan_rows' geometry and plan_reduce's reduction,
/// whose errors are the primitives' (the max or mean over an empty axis).
inline spelled_rows_plan plan_spelled_rows(nax::dtype type, std::span<const std::size_t> extents,
                                           std::size_t axis, ops::reduce_kind first) {
  spelled_rows_plan p;
  p.rows = plan_rows(type, extents, axis);
  // Along another axis than the last, a vector lane per column (not the op kernels' staging).
  if (p.rows.inner > 1 && p.rows.items > 0) {
    const std::size_t w = type == dtype::f32 ? simd::width<float> : simd::width<double>;
    detail::split_columns(p.rows, detail::max_chunk_bytes / size_of(type), w);
  }
  const std::size_t reduced[1] = {axis};
  p.reduce = plan_reduce(type, first, extents, reduced);
  return p;
}

/// The spelled softmax along the planned axis; out must not overlap in.
inline void run_spelled_softmax(const spelled_rows_plan& p, softmax_spelling s, const void* in,
                                void* out) {
  auto run = [&](auto zero) {
    using V = decltype(zero);
    detail::for_each_spelled<V>(
        p, static_cast<const V*>(in), static_cast<V*>(out),
        [&](std::size_t, const V* x, V* y) { detail::spelled_softmax_row<V>(p, s, x, y); },
        [&](const V* x, V* y, std::size_t len) {
          detail::spelled_softmax_columns<V>(p, s, x, y, len);
        });
  };
  if (p.rows.type == dtype::f32)
    run(0.0f);
  else
    run(0.0);
}

/// The spelled layer_norm along the planned axis: gamma and beta one value per index of the axis
/// (read only where the spelling has them); out must not overlap in.
inline void run_spelled_layer_norm(const spelled_rows_plan& p, const layer_norm_spelling& s,
                                   const void* in, const void* gamma, const void* beta, void* out) {
  auto run = [&](auto zero) {
    using V = decltype(zero);
    const V* g = static_cast<const V*>(gamma);
    const V* b = static_cast<const V*>(beta);
    detail::for_each_spelled<V>(
        p, static_cast<const V*>(in), static_cast<V*>(out),
        [&](std::size_t, const V* x, V* y) { detail::spelled_layer_norm_row<V>(p, s, x, g, b, y); },
        [&](const V* x, V* y, std::size_t len) {
          detail::spelled_layer_norm_columns<V>(p, s, x, g, b, y, len);
        });
  };
  if (p.rows.type == dtype::f32)
    run(0.0f);
  else
    run(0.0);
}

}  // namespace nax::kernels
