#pragma once
// The aggregations of a vertex program: a value per in-edge of v (edge or source scope) reduced
// over v's in-edges to one value per node.
//
//   sum(x)             the sum over v's in-edges (0 without in-edges)
//   mean(x)            the sum divided by indeg(v) (0 without in-edges)
//   max(x)             the largest (0 without in-edges)
//   softmax_sum(s, x)  the sum of softmax(s) x, the softmax of the scores s over v's in-edges
//
// Each is one stage of the destination's pass: for each row of its result, a loop over v's
// in-edges that evaluates x there (in registers, up to `block` vectors of the row at a time) and
// reduces it. softmax_sum is one loop, not two: an online softmax keeps a running maximum and
// rescales the running sum and the accumulator when it grows, one exp per edge (per score).
// An aggregation is a node value: later stages and the result read it from a row kept per
// thread. Copies of one aggregation (a value used twice) share an id, and are computed once.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/gnn/vertex/leaf.hpp>
#include <nax/gnn/vertex/ops.hpp>
#include <nax/kernels/online_softmax.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>

namespace nax::NAX_ISA::gnn {
namespace detail {

/// The in-edges of every destination (a csr's arrays).
struct in_edges {
  const std::int64_t* offsets;
  const std::int32_t* sources;
  const std::int32_t* ids;
};

/// In-edge e (a position in the csr) of destination v.
inline site site_of(const in_edges& g, std::size_t v, std::size_t e) {
  return {v, static_cast<std::size_t>(g.sources[e]), static_cast<std::size_t>(g.ids[e])};
}

inline std::uint64_t new_aggregation_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

/// The layout of a row over axes Row whose extents are x's.
template <class Row, class X>
row_layout<Row> layout_of(const X& x) {
  std::array<std::size_t, (row_layout<Row>::rank > 0 ? row_layout<Row>::rank : 1)> e{};
  std::size_t k = 0;
  mp::mp_for_each<mp::mp_transform<mp::mp_identity, Row>>(
      [&](auto a) { e[k++] = x.template extent<typename decltype(a)::type>(); });
  return row_layout<Row>(e);
}

/// f(idx, offset) for each row of a layout (idx: the outer indices), in order.
template <class Row, class F>
void for_each_row(const row_layout<Row>& l, F&& f) {
  constexpr std::size_t rank = row_layout<Row>::rank;
  std::array<std::size_t, (rank > 0 ? rank : 1)> idx{};
  if constexpr (rank <= 1) {
    f(idx.data(), std::size_t{0});
  } else {
    if (l.size == 0) return;
    const std::size_t inner = l.extent[rank - 1], rows = l.size / inner;
    for (std::size_t r = 0; r < rows; ++r) {
      f(idx.data(), r * inner);
      for (std::size_t j = rank - 1; j-- > 0;) {
        if (++idx[j] < l.extent[j]) break;
        idx[j] = 0;
      }
    }
  }
}

template <class Row>
std::size_t inner_extent(const row_layout<Row>& l) {
  return row_layout<Row>::rank == 0 ? 1 : l.extent[row_layout<Row>::rank - 1];
}

/// An aggregation's value as the stages after it read it: a row per destination, in a buffer of
/// the thread computing it.
template <class T, class Row>
class aggregated : public row_value<T, Row> {
 public:
  using scope = node_scope;

  explicit aggregated(row_layout<Row> layout)
      : row_value<T, Row>(layout), id_(new_aggregation_id()) {}

  template <class Inner>
  void at_site(const site& s) {
    this->point_at(value_, grad_, per_node_ != 0 ? s.v : 0);
  }
  template <class Inner>
  void prefetch(const site&, std::size_t, std::size_t) const {}  // v's row: already near

  std::uint64_t id() const { return id_; }
  std::size_t size() const { return this->layout_.size; }
  bool owner() const { return owner_; }
  /// Where the value is kept: v's row at value + v × per_node (per_node 0: one row, the current
  /// destination's; else the row's size). `owner` false: a copy whose twin computes it.
  void keep_in(T* value, std::size_t per_node, bool owner) {
    value_ = value;
    per_node_ = per_node;
    owner_ = owner;
  }
  /// Where the cotangents of the value are added (rows as the value's); nullptr: nowhere.
  void grad_into(T* g) { grad_ = g; }
  /// Where the backward reads the value's cotangents from (rows as the value's).
  void cotangents_in(const T* c) { cot_ = c; }

 protected:
  T* row_of(std::size_t v) const { return value_ + v * per_node_; }

  std::uint64_t id_;
  T* value_ = nullptr;
  std::size_t per_node_ = 0;
  bool owner_ = true;
  T* grad_ = nullptr;
  const T* cot_ = nullptr;
};

enum class reduction { sum, mean, max };

// Vectors of a row reduced together over the edges, so that each is written once.
inline constexpr std::size_t block = 8;

// f(std::integral_constant<std::size_t, k>) for k in 1 .. block - 1: the vectors left after the
// full blocks, reduced in one loop over the edges too (a head of 16 floats is 2 vectors: one loop,
// not two, each redoing the edge's work).
template <class F>
void with_rest(std::size_t k, F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((k == I + 1 ? (f(std::integral_constant<std::size_t, I + 1>{}), 0) : 0), ...);
  }
  (std::make_index_sequence<block - 1>{});
}

/// sum, mean or max of x over v's in-edges.
template <reduction K, class X>
class aggregation : public aggregated<typename X::value_type, typename X::axes_type> {
  using T = typename X::value_type;
  using Row = typename X::axes_type;
  using base = aggregated<T, Row>;
  using Inner = inner_axis_of<Row>;
  using V = simd::vec<T>;

 public:
  explicit aggregation(X x) : base(layout_of<Row>(x)), x_(std::move(x)) {}

  template <class G>
  void for_each_aggregation(G&& g) {
    x_.for_each_aggregation(g);
    g(*this);
  }
  template <class G>
  void for_each_aggregation_reversed(G&& g) {
    g(*this);
    x_.for_each_aggregation_reversed(g);
  }
  template <class G>
  void for_each_leaf(G&& g) {
    x_.for_each_leaf(g);
  }

  /// Memory the backward keeps per node (max: the edge each value came from).
  void prepare_backward(std::size_t nodes) {
    if constexpr (K == reduction::max)
      argmax_ = std::make_shared<std::vector<std::int64_t>>(nodes * this->layout_.size);
  }
  /// The backward at destination v: its cotangent to x on each in-edge (x's leaves that add in
  /// this pass do).
  void backward_dst(const in_edges& g, std::size_t v) {
    if (!this->owner_) return;
    const auto begin = static_cast<std::size_t>(g.offsets[v]),
               end = static_cast<std::size_t>(g.offsets[v + 1]);
    if constexpr (K == reduction::max) find_argmax(g, v, begin, end);
    for (std::size_t e = begin; e < end; ++e) backward_edge(site_of(g, v, e), end - begin);
  }
  /// The same for one in-edge s of a destination with `in` in-edges.
  void backward_edge(const site& s, std::size_t in) {
    if (!this->owner_) return;
    const std::size_t size = this->layout_.size, n = inner_extent(this->layout_);
    const T* cot = this->cot_ + s.v * size;
    const T scale = K == reduction::mean && in > 1 ? T(1) / static_cast<T>(in) : T(1);
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      x_.template at_outer<Row>(idx);
      x_.template at_site<Inner>(s);
      const T* c = cot + offset;
      std::size_t i = 0;
      if constexpr (K != reduction::max && !invariant_v<Row, Inner>)
        for (constexpr std::size_t w = simd::width<T>; i + w <= n; i += w)
          push<Inner>(x_, i, V::load_unaligned(c + i) * V(scale));
      for (; i < n; ++i) {
        if constexpr (K == reduction::max) {
          const std::int64_t from = (*argmax_)[s.v * size + offset + i];
          push<Inner>(x_, i, from == static_cast<std::int64_t>(s.edge) ? c[i] : T(0));
        } else {
          push<Inner>(x_, i, c[i] * scale);
        }
      }
      x_.template flush<Inner>();
    });
  }
  /// This stage at destination v: its row in value().
  void compute(const in_edges& g, std::size_t v) {
    if (!this->owner_) return;
    const auto begin = static_cast<std::size_t>(g.offsets[v]),
               end = static_cast<std::size_t>(g.offsets[v + 1]);
    reduce(g, v, begin, end, this->row_of(v));
    finish(this->row_of(v), end - begin);
  }
  /// A split destination (csr.hpp): the values a part of it needs, part_size() of them.
  std::size_t part_size() const { return this->layout_.size; }
  /// The reduction over v's in-edges [begin, end) into part.
  void compute_part(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* part) {
    reduce(g, v, begin, end, part);
  }
  /// v's row from its `count` parts, merged in order (v has `in` in-edges).
  void merge(std::size_t v, const T* parts, std::size_t count, std::size_t in) {
    const std::size_t size = this->layout_.size;
    T* row = this->row_of(v);
    std::copy_n(parts, size, row);
    for (std::size_t c = 1; c < count; ++c)
      for (std::size_t i = 0; i < size; ++i) row[i] = combine(row[i], parts[c * size + i]);
    finish(row, in);
  }

 private:
  static T start() { return K == reduction::max ? -std::numeric_limits<T>::infinity() : T(0); }
  template <class U>
  static U combine(const U& acc, const U& x) {
    if constexpr (K == reduction::max) {
      if constexpr (simd::is_vec_v<U>)
        return xsimd::select(x > acc, x, acc);
      else
        return x > acc ? x : acc;
    } else {
      return acc + x;
    }
  }

  // The reduction over in-edges [begin, end) of v into row.
  void reduce(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* row) {
    const std::size_t n = inner_extent(this->layout_);
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      x_.template at_outer<Row>(idx);
      T* out = row + offset;
      std::size_t i = 0;
      if constexpr (!invariant_v<Row, Inner>) {
        constexpr std::size_t w = simd::width<T>;
        for (; i + block * w <= n; i += block * w) reduce_vectors<block>(g, v, begin, end, out, i);
        with_rest((n - i) / w, [&](auto b) { reduce_vectors<b()>(g, v, begin, end, out, i); });
        i += (n - i) / w * w;
      }
      for (; i < n; ++i) {
        T acc = start();
        for (std::size_t e = begin; e < end; ++e) {
          x_.template at_site<Inner>(site_of(g, v, e));
          acc = combine(acc, x_.template scalar<Inner>(i));
        }
        out[i] = acc;
      }
    });
  }

  template <std::size_t B>
  void reduce_vectors(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* out,
                      std::size_t i) {
    constexpr std::size_t w = simd::width<T>;
    V acc[B];
    for (V& a : acc) a = V(start());
    for (std::size_t e = begin; e < end; ++e) {
      if (e + prefetch_distance < end)
        x_.template prefetch<Inner>(site_of(g, v, e + prefetch_distance), i, B * w);
      x_.template at_site<Inner>(site_of(g, v, e));
      for (std::size_t j = 0; j < B; ++j)
        acc[j] = combine(acc[j], x_.template vector<Inner>(i + j * w));
    }
    for (std::size_t j = 0; j < B; ++j) acc[j].store_unaligned(out + i + j * w);
  }

  // Per value of v's row, the first in-edge whose x is the maximum (or -1: NaN).
  void find_argmax(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end) {
    const std::size_t size = this->layout_.size, n = inner_extent(this->layout_);
    std::int64_t* from = argmax_->data() + v * size;
    const T* most = this->row_of(v);
    std::fill(from, from + size, std::int64_t{-1});
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      x_.template at_outer<Row>(idx);
      for (std::size_t e = begin; e < end; ++e) {
        const site s = site_of(g, v, e);
        x_.template at_site<Inner>(s);
        for (std::size_t i = 0; i < n; ++i)
          if (from[offset + i] < 0 && x_.template scalar<Inner>(i) == most[offset + i])
            from[offset + i] = static_cast<std::int64_t>(s.edge);
      }
    });
  }

  // The mean's division, as aggregate_mean does it (the same bits); max's empty rows are 0.
  void finish(T* row, std::size_t in) {
    const std::size_t size = this->layout_.size;
    if constexpr (K == reduction::mean) {
      if (in > 1) {
        const T scale = T(1) / static_cast<T>(in);
        for (std::size_t i = 0; i < size; ++i) row[i] *= scale;
      }
    } else if constexpr (K == reduction::max) {
      if (in == 0) std::fill(row, row + size, T(0));
    }
  }

  X x_;
  std::shared_ptr<std::vector<std::int64_t>> argmax_;  // per node and value, for the backward
};

/// The sum over v's in-edges of softmax(s) x, one pass.
template <class S, class X>
class softmax_aggregation
    : public aggregated<typename X::value_type,
                        axes_union<typename X::axes_type, typename S::axes_type>> {
  using T = typename X::value_type;
  using Row = axes_union<typename X::axes_type, typename S::axes_type>;
  using base = aggregated<T, Row>;
  using Inner = inner_axis_of<Row>;
  using V = simd::vec<T>;
  // Scores the same at every inner index: one softmax per row, its weights splatted.
  static constexpr bool scalar_scores = invariant_v<typename S::axes_type, Inner>;

 public:
  softmax_aggregation(S s, X x)
      : base(layout_of<Row>(binary<binary_fn<ops::mul>, S, X>(binary_fn<ops::mul>{}, s, x))),
        s_(std::move(s)),
        x_(std::move(x)) {}

  template <class G>
  void for_each_aggregation(G&& g) {
    s_.for_each_aggregation(g);
    x_.for_each_aggregation(g);
    g(*this);
  }
  template <class G>
  void for_each_aggregation_reversed(G&& g) {
    g(*this);
    x_.for_each_aggregation_reversed(g);
    s_.for_each_aggregation_reversed(g);
  }
  template <class G>
  void for_each_leaf(G&& g) {
    s_.for_each_leaf(g);
    x_.for_each_leaf(g);
  }

  /// Memory the backward keeps per node: each value's softmax maximum and sum.
  void prepare_backward(std::size_t nodes) {
    stats_ = std::make_shared<std::vector<T>>(2 * nodes * this->layout_.size);
  }
  /// The backward at destination v (see backward_edge), after the softmax's maximum and sum.
  void backward_dst(const in_edges& g, std::size_t v) {
    if (!this->owner_) return;
    const auto begin = static_cast<std::size_t>(g.offsets[v]),
               end = static_cast<std::size_t>(g.offsets[v + 1]);
    const std::size_t size = this->layout_.size, n = inner_extent(this->layout_);
    T* most = stats_->data() + 2 * v * size;
    T* total = most + size;
    std::fill(most, most + size, -std::numeric_limits<T>::infinity());
    std::fill(total, total + size, T(0));
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      s_.template at_outer<Row>(idx);
      for (std::size_t e = begin; e < end; ++e) {
        s_.template at_site<Inner>(site_of(g, v, e));
        for (std::size_t i = 0; i < n; ++i)
          most[offset + i] = std::max(most[offset + i], s_.template scalar<Inner>(i));
      }
      for (std::size_t e = begin; e < end; ++e) {
        s_.template at_site<Inner>(site_of(g, v, e));
        for (std::size_t i = 0; i < n; ++i)
          total[offset + i] += simd::exp(s_.template scalar<Inner>(i) - most[offset + i]);
      }
    });
    for (std::size_t e = begin; e < end; ++e) backward_edge(site_of(g, v, e), end - begin);
  }
  /// On in-edge s of v, with a = softmax(s) there and out v's value: x gets a × cot, and the
  /// score a × cot × (x - out).
  void backward_edge(const site& at, std::size_t) {
    if (!this->owner_) return;
    const std::size_t size = this->layout_.size, n = inner_extent(this->layout_);
    const T* cot = this->cot_ + at.v * size;
    const T* out = this->row_of(at.v);
    const T* most = stats_->data() + 2 * at.v * size;
    const T* total = most + size;
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      s_.template at_outer<Row>(idx);
      x_.template at_outer<Row>(idx);
      s_.template at_site<Inner>(at);
      x_.template at_site<Inner>(at);
      const auto step = [&](auto unit, std::size_t i) {
        using U = decltype(unit);
        const std::size_t k = offset + i;
        const U a = simd::exp(score<U>(i) - load<U>(most + k)) / load<U>(total + k);
        const U c = load<U>(cot + k);
        push<Inner>(x_, i, a * c);
        push<Inner>(s_, i, a * c * (value<U>(i) - load<U>(out + k)));
      };
      std::size_t i = 0;
      if constexpr (!invariant_v<Row, Inner>)
        for (constexpr std::size_t w = simd::width<T>; i + w <= n; i += w) step(V(), i);
      for (; i < n; ++i) step(T(), i);
      x_.template flush<Inner>();
      s_.template flush<Inner>();
    });
  }

  void compute(const in_edges& g, std::size_t v) {
    if (!this->owner_) return;
    const auto begin = static_cast<std::size_t>(g.offsets[v]),
               end = static_cast<std::size_t>(g.offsets[v + 1]);
    reduce(g, v, begin, end, this->row_of(v), nullptr);
  }
  /// A split destination (csr.hpp): a part keeps the unnormalized sum, the maximum and the sum
  /// of the weights of each value.
  std::size_t part_size() const { return 3 * this->layout_.size; }
  void compute_part(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* part) {
    reduce(g, v, begin, end, part, part + this->layout_.size);
  }
  /// v's row from its parts: each rescaled to the largest maximum, added in order.
  void merge(std::size_t v, const T* parts, std::size_t count, std::size_t) {
    const std::size_t size = this->layout_.size;
    T* row = this->row_of(v);
    for (std::size_t i = 0; i < size; ++i) {
      T most = -std::numeric_limits<T>::infinity();
      for (std::size_t c = 0; c < count; ++c) most = std::max(most, parts[(3 * c + 1) * size + i]);
      T total = 0, acc = 0;
      for (std::size_t c = 0; c < count; ++c) {
        const T* part = parts + 3 * c * size;
        const T scale = simd::exp(part[size + i] - most);
        total = total + part[2 * size + i] * scale;
        acc = acc + part[i] * scale;
      }
      row[i] = acc * (T(1) / total);
    }
  }

 private:
  // Over in-edges [begin, end) of v, into row; stats null: normalized, else the sums unnormalized
  // and the maxima and weights' sums at stats and stats + size().
  void reduce(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* row,
              T* stats) {
    const std::size_t n = inner_extent(this->layout_), size = this->layout_.size;
    for_each_row(this->layout_, [&](const std::size_t* idx, std::size_t offset) {
      s_.template at_outer<Row>(idx);
      x_.template at_outer<Row>(idx);
      T* out = row + offset;
      T* most = stats ? stats + offset : nullptr;
      T* total = stats ? stats + size + offset : nullptr;
      std::size_t i = 0;
      if constexpr (!invariant_v<Row, Inner>) {
        constexpr std::size_t w = simd::width<T>;
        for (; i + block * w <= n; i += block * w)
          weigh<V, block>(g, v, begin, end, out, most, total, i);
        with_rest((n - i) / w,
                  [&](auto b) { weigh<V, b()>(g, v, begin, end, out, most, total, i); });
        i += (n - i) / w * w;
      }
      for (; i < n; ++i) weigh<T, 1>(g, v, begin, end, out, most, total, i);
    });
  }

  // The score and the value at v's in-edge e, the edge `prefetch_distance` ahead prefetched.
  template <std::size_t Count>
  void visit(const in_edges& g, std::size_t v, std::size_t e, std::size_t end, std::size_t i) {
    if (e + prefetch_distance < end) {
      const site ahead = site_of(g, v, e + prefetch_distance);
      s_.template prefetch<Inner>(ahead, i, Count);
      x_.template prefetch<Inner>(ahead, i, Count);
    }
    const site at = site_of(g, v, e);
    s_.template at_site<Inner>(at);
    x_.template at_site<Inner>(at);
  }
  // Operand y (the score or the value) at inner index i: a vector from there, or a scalar.
  template <class U, class Y>
  static U read(const Y& y, std::size_t i) {
    if constexpr (simd::is_vec_v<U>)
      return y.template vector<Inner>(i);
    else
      return y.template scalar<Inner>(i);
  }
  template <class U>
  U score(std::size_t i) const {
    return read<U>(s_, i);
  }
  template <class U>
  U value(std::size_t i) const {
    return read<U>(x_, i);
  }
  template <class U>
  static U load(const T* from) {
    if constexpr (simd::is_vec_v<U>)
      return U::load_unaligned(from);
    else
      return *from;
  }
  template <class U>
  static void store(const U& x, T* to) {
    if constexpr (simd::is_vec_v<U>)
      x.store_unaligned(to);
    else
      *to = x;
  }

  // B units (vectors, or one scalar) of the row from inner index i, over v's in-edges.
  template <class U, std::size_t B>
  void weigh(const in_edges& g, std::size_t v, std::size_t begin, std::size_t end, T* out,
             T* most_out, T* total_out, std::size_t i) {
    constexpr std::size_t w = simd::is_vec_v<U> ? simd::width<T> : 1;
    constexpr T lowest = -std::numeric_limits<T>::infinity();
    U acc[B];
    for (U& a : acc) a = U(T(0));
    if (begin == end) {
      for (std::size_t j = 0; j < B; ++j) store(acc[j], out + i + j * w);
      return;
    }
    if constexpr (scalar_scores) {
      T most = lowest, total = 0;
      for (std::size_t e = begin; e < end; ++e) {
        visit<B * w>(g, v, e, end, i);
        // A new maximum rescales what is summed so far; one exp per edge.
        const nax::detail::online_weights<T> ws =
            nax::detail::online_softmax_step(s_.template scalar<Inner>(0), most, total, exp_of);
        const U sv(ws.scale), pv(ws.weight);
        for (std::size_t j = 0; j < B; ++j) acc[j] = acc[j] * sv + pv * value<U>(i + j * w);
      }
      if (most_out) {
        for (std::size_t j = 0; j < B; ++j) {
          store(acc[j], out + i + j * w);
          store(U(most), most_out + i + j * w);
          store(U(total), total_out + i + j * w);
        }
        return;
      }
      const U inverse(T(1) / total);
      for (std::size_t j = 0; j < B; ++j) store(acc[j] * inverse, out + i + j * w);
    } else {
      U most[B], total[B];
      for (std::size_t j = 0; j < B; ++j) {
        most[j] = U(lowest);
        total[j] = U(T(0));
      }
      for (std::size_t e = begin; e < end; ++e) {
        visit<B * w>(g, v, e, end, i);
        for (std::size_t j = 0; j < B; ++j) {
          const nax::detail::online_weights<U> ws =
              nax::detail::online_softmax_step(score<U>(i + j * w), most[j], total[j], exp_of);
          acc[j] = acc[j] * ws.scale + ws.weight * value<U>(i + j * w);
        }
      }
      for (std::size_t j = 0; j < B; ++j) {
        if (most_out) {
          store(acc[j], out + i + j * w);
          store(most[j], most_out + i + j * w);
          store(total[j], total_out + i + j * w);
        } else {
          store(acc[j] * (U(T(1)) / total[j]), out + i + j * w);
        }
      }
    }
  }
  // The scores' exponential in the online softmax: nax's, of a vector or a scalar.
  static constexpr auto exp_of = [](const auto& x) { return simd::exp(x); };

  S s_;
  X x_;
  std::shared_ptr<std::vector<T>> stats_;  // per node and value: maximum, sum (the backward's)
};

template <class X>
inline constexpr bool is_aggregation_v = false;
template <reduction K, class X>
inline constexpr bool is_aggregation_v<aggregation<K, X>> = true;
template <class S, class X>
inline constexpr bool is_aggregation_v<softmax_aggregation<S, X>> = true;

template <class X>
constexpr bool check_aggregated_scope() {
  using S = typename X::scope;
  // An error here means an aggregation over v's in-edges was given a per-node value.
  static_assert(nax::detail::require<!std::is_same_v<S, node_scope>,
                                     error::gnn_aggregation_of_a_per_node_value<S>>);
  return true;
}

template <reduction K, class X>
auto make_aggregation(X&& x) {
  using value = std::remove_cvref_t<X>;
  static_assert(check_aggregated_scope<value>());
  return aggregation<K, value>(std::forward<X>(x));
}

}  // namespace detail

/// The sum of x over v's in-edges (0 for a node without in-edges): a node value.
template <detail::vertex_value X>
auto sum(X&& x) {
  return detail::make_aggregation<detail::reduction::sum>(std::forward<X>(x));
}
/// The mean of x over v's in-edges (0 without in-edges).
template <detail::vertex_value X>
auto mean(X&& x) {
  return detail::make_aggregation<detail::reduction::mean>(std::forward<X>(x));
}
/// The largest x over v's in-edges (0 without in-edges).
template <detail::vertex_value X>
auto max(X&& x) {
  return detail::make_aggregation<detail::reduction::max>(std::forward<X>(x));
}
/// The sum over v's in-edges of softmax(score) x, where the softmax is over v's in-edges (per
/// score: scores over [head] weigh features over [head, feat] per head). One pass.
template <detail::vertex_value S, detail::vertex_value X>
auto softmax_sum(S&& score, X&& x) {
  using SV = std::remove_cvref_t<S>;
  using XV = std::remove_cvref_t<X>;
  static_assert(detail::check_aggregated_scope<SV>() && detail::check_aggregated_scope<XV>());
  return detail::softmax_aggregation<SV, XV>(std::forward<S>(score), std::forward<X>(x));
}

}  // namespace nax::gnn
