#pragma once
// The leaves of a vertex program, and the evaluation protocol every value follows.
//
// A value has feature axes (axes_type: the named axes other than the node axis) and is read at
// positions of a *stage*: the loop over the feature axes `Out` of the aggregation or the result
// being computed, the last of them (`Inner`) run in SIMD vectors. A value evaluates in three
// steps, so that work is done once where it can be:
//
//   at_outer<Out>(idx)  once per row of the stage (idx: the indices of Out's outer axes);
//   at_site<Inner>(s)   once per in-edge s (destination, source, edge id);
//   scalar<Inner>(i) / vector<Inner>(i)   the value at inner index i, or at lanes i.. .
//
// A value without the Inner axis is the same at every inner index: it is computed once per site,
// as a scalar, and splatted (an attention weight per head, say, multiplying a row of features).
//
// The backward (vertex/gradient.hpp) runs the same steps, then pushes cotangents down:
//
//   pull<Inner>(i, cot) / pull_scalar<Inner>(i, cot)   the cotangent at inner index i (lanes i..);
//   accumulate(cot)     for a value without the Inner axis: its cotangent summed over the row;
//   flush<Inner>()      at the end of a site: values without the Inner axis pass their sums on.
//
// Leaves add their cotangents into a gradient buffer, or drop them when it is not theirs to add
// in this pass (grad_into(nullptr)).

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/gnn/vertex/scope.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::gnn::detail {

namespace mp = boost::mp11;

/// The base of every value of a vertex program (leaves, ops, aggregations).
struct vertex_value_tag {};
template <class X>
inline constexpr bool is_vertex_value_v = std::is_base_of_v<vertex_value_tag, X>;

/// Where a value is read: destination v, the in-edge's source u and its position in the edge
/// lists given to csr::from_edges.
struct site {
  std::size_t v = 0, u = 0, edge = 0;
};

/// The Inner axis of a stage over no axes (a value per node): no value has it.
using no_inner = nax::axis<"(no axis)">;

template <class Out>
using inner_axis_of = mp::mp_eval_if_c<mp::mp_empty<Out>::value, no_inner, mp::mp_back, Out>;

/// Whether a value over axes Row is the same at every inner index of a stage.
template <class Row, class Inner>
inline constexpr bool invariant_v = !axes_contains_v<Row, Inner>;

/// A row of values over axes Row, row-major, and how a stage over other axes reads it: an axis
/// of the stage that the row lacks is broadcast (stride 0).
template <class Row>
struct row_layout {
  static constexpr std::size_t rank = mp::mp_size<Row>::value;
  std::array<std::size_t, (rank > 0 ? rank : 1)> extent{}, stride{};
  std::size_t size = 1;

  row_layout() = default;
  explicit row_layout(const std::array<std::size_t, (rank > 0 ? rank : 1)>& e) : extent(e) {
    for (std::size_t k = rank; k-- > 0;) {
      stride[k] = size;
      size *= extent[k];
    }
  }

  template <class A>
  std::size_t extent_of() const {
    return extent[axes_index_of_v<Row, A>];
  }

  /// The offset of the row of a stage over Out whose outer indices are idx.
  template <class Out>
  std::size_t outer_offset(const std::size_t* idx) const {
    std::size_t off = 0;
    constexpr std::size_t outer = mp::mp_size<Out>::value > 0 ? mp::mp_size<Out>::value - 1 : 0;
    mp::mp_for_each<mp::mp_iota_c<outer>>([&](auto j) {
      using A = mp::mp_at_c<Out, decltype(j)::value>;
      if constexpr (axes_contains_v<Row, A>) off += idx[j] * stride[axes_index_of_v<Row, A>];
    });
    return off;
  }

  /// The stride of the stage's inner axis in this row (1 when it is the row's last axis).
  template <class Inner>
  std::size_t inner_stride() const {
    return stride[axes_index_of_v<Row, Inner>];
  }
};

/// Reads of row r (the values of a row_layout L) at inner index i of a stage.
template <class Inner, class T, class Row>
T read_scalar(const T* r, const row_layout<Row>& l, std::size_t i) {
  if constexpr (invariant_v<Row, Inner>)
    return r[0];
  else if constexpr (axes_index_of_v<Row, Inner> + 1 == row_layout<Row>::rank)
    return r[i];
  else
    return r[i * l.template inner_stride<Inner>()];
}

template <class Inner, class T, class Row>
simd::vec<T> read_vector(const T* r, const row_layout<Row>& l, std::size_t i) {
  using V = simd::vec<T>;
  if constexpr (invariant_v<Row, Inner>) {
    return V(r[0]);
  } else if constexpr (axes_index_of_v<Row, Inner> + 1 == row_layout<Row>::rank) {
    return V::load_unaligned(r + i);
  } else {
    alignas(sizeof(V)) T lanes[simd::width<T>];
    const std::size_t s = l.template inner_stride<Inner>();
    for (std::size_t k = 0; k < simd::width<T>; ++k) lanes[k] = r[(i + k) * s];
    return V::load_aligned(lanes);
  }
}

/// Adds cot into the gradient row g of layout l at inner index i (lanes i.. for a vector).
template <class Inner, class T, class Row>
void add_vector(T* g, const row_layout<Row>& l, std::size_t i, const simd::vec<T>& cot) {
  using V = simd::vec<T>;
  if constexpr (axes_index_of_v<Row, Inner> + 1 == row_layout<Row>::rank) {
    (V::load_unaligned(g + i) + cot).store_unaligned(g + i);
  } else {
    alignas(sizeof(V)) T lanes[simd::width<T>];
    cot.store_aligned(lanes);
    const std::size_t s = l.template inner_stride<Inner>();
    for (std::size_t k = 0; k < simd::width<T>; ++k) g[(i + k) * s] += lanes[k];
  }
}
template <class Inner, class T, class Row>
void add_scalar(T* g, const row_layout<Row>& l, std::size_t i, T cot) {
  if constexpr (invariant_v<Row, Inner>)
    g[0] += cot;
  else if constexpr (axes_index_of_v<Row, Inner> + 1 == row_layout<Row>::rank)
    g[i] += cot;
  else
    g[i * l.template inner_stride<Inner>()] += cot;
}

// How many edges ahead the loops over in-edges prefetch the rows they will read: a row of a
// random source is a miss of the nearer caches, and the loops would otherwise wait for each.
inline constexpr std::size_t prefetch_distance = 16;

/// Prefetches `count` values of row r from inner index i (their cache lines).
template <class Inner, class T, class Row>
void prefetch_row(const T* r, std::size_t i, std::size_t count) {
  if constexpr (!invariant_v<Row, Inner>) {
    if constexpr (axes_index_of_v<Row, Inner> + 1 == row_layout<Row>::rank) {
      const char* p = reinterpret_cast<const char*>(r + i);
      for (std::size_t b = 0; b < count * sizeof(T); b += 64) __builtin_prefetch(p + b, 0, 3);
      return;
    }
  }
  __builtin_prefetch(r, 0, 3);
}

/// Passes cotangent cot of inner index i (lanes i.. for a vector) to operand c: summed over the
/// row when c lacks the Inner axis (it was broadcast along it).
template <class Inner, class C, class U>
void push(C& c, std::size_t i, const U& cot) {
  if constexpr (invariant_v<typename C::axes_type, Inner>) {
    if constexpr (simd::is_vec_v<U>)
      c.accumulate(xsimd::hadd(cot));
    else
      c.accumulate(cot);
  } else if constexpr (simd::is_vec_v<U>) {
    c.template pull<Inner>(i, cot);
  } else {
    c.template pull_scalar<Inner>(i, cot);
  }
}

/// A row of values in memory as a stage reads it (leaf.hpp's protocol: extent, at_outer, scalar,
/// vector, and the backward's pull, pull_scalar, accumulate, flush), and the row its cotangents
/// are added to. A leaf and an aggregation's kept rows are both one; each says which row a site
/// reads (point_at).
template <class T, class Row>
class row_value : public vertex_value_tag {
 public:
  using value_type = T;
  using axes_type = Row;

  template <class A>
  std::size_t extent() const {
    return layout_.template extent_of<A>();
  }
  template <class Out>
  void at_outer(const std::size_t* idx) {
    outer_ = layout_.template outer_offset<Out>(idx);
  }
  template <class Inner>
  T scalar(std::size_t i) const {
    return read_scalar<Inner>(row_, layout_, i);
  }
  template <class Inner>
  simd::vec<T> vector(std::size_t i) const {
    return read_vector<Inner>(row_, layout_, i);
  }
  template <class Inner>
  void pull(std::size_t i, const simd::vec<T>& cot) {
    if (grad_row_) add_vector<Inner>(grad_row_, layout_, i, cot);
  }
  template <class Inner>
  void pull_scalar(std::size_t i, T cot) {
    if (grad_row_) add_scalar<Inner>(grad_row_, layout_, i, cot);
  }
  void accumulate(T cot) {
    if (grad_row_) *grad_row_ += cot;
  }
  template <class Inner>
  void flush() {}

 protected:
  explicit row_value(row_layout<Row> layout) : layout_(layout) {}
  /// Row `index` of the rows at base, for this stage's outer indices; its cotangents into the
  /// same row of grad (null: nowhere).
  void point_at(const T* base, T* grad, std::size_t index) {
    row_ = base + index * layout_.size + outer_;
    grad_row_ = grad ? grad + index * layout_.size + outer_ : nullptr;
  }
  std::size_t outer() const { return outer_; }

  row_layout<Row> layout_;

 private:
  std::size_t outer_ = 0;
  const T* row_ = nullptr;
  T* grad_row_ = nullptr;
};

/// A value read from memory: a node's row (v's own, or the source's), an edge's row, or a
/// parameter (the same row everywhere).
template <class Scope, class T, class Row>
class leaf : public row_value<T, Row> {
 public:
  using scope = Scope;

  /// rows: how many rows the tensor has (nodes, edges, or 1 for a parameter).
  leaf(const T* base, row_layout<Row> layout, std::size_t rows)
      : row_value<T, Row>(layout), base_(base), rows_(rows) {}

  template <class Inner>
  void at_site(const site& s) {
    this->point_at(base_, grad_, index(s));
  }
  /// Prefetches what at_site(s) and then `count` values from inner index i will read (rows that
  /// change from edge to edge: the source's and the edge's).
  template <class Inner>
  void prefetch(const site& s, std::size_t i, std::size_t count) const {
    if constexpr (std::is_same_v<Scope, source_scope> || std::is_same_v<Scope, edge_scope>)
      prefetch_row<Inner, T, Row>(base_ + index(s) * this->layout_.size + this->outer(), i, count);
  }
  template <class F>
  void for_each_aggregation(F&&) {}
  template <class F>
  void for_each_aggregation_reversed(F&&) {}
  template <class F>
  void for_each_leaf(F&& f) {
    f(*this);
  }
  /// The tensor read (its data), its rows and the size of each.
  const T* key() const { return base_; }
  std::size_t rows() const { return rows_; }
  std::size_t row_size() const { return this->layout_.size; }
  /// Where this leaf adds its cotangents (a buffer of rows() x row_size(), or one row for a
  /// parameter); nullptr: nowhere.
  void grad_into(T* g) { grad_ = g; }

 private:
  static std::size_t index(const site& s) {
    if constexpr (std::is_same_v<Scope, node_scope>) return s.v;
    if constexpr (std::is_same_v<Scope, source_scope>) return s.u;
    if constexpr (std::is_same_v<Scope, edge_scope>) return s.edge;
    return 0;
  }

  const T* base_;
  std::size_t rows_;
  T* grad_ = nullptr;
};

/// A constant.
template <class T>
class constant : public vertex_value_tag {
 public:
  using scope = param_scope;
  using value_type = T;
  using axes_type = nax::axes<>;

  explicit constant(T value) : value_(value) {}

  template <class Out>
  void at_outer(const std::size_t*) {}
  template <class Inner>
  void at_site(const site&) {}
  template <class Inner>
  T scalar(std::size_t) const {
    return value_;
  }
  template <class Inner>
  simd::vec<T> vector(std::size_t) const {
    return simd::vec<T>(value_);
  }
  template <class Inner>
  void prefetch(const site&, std::size_t, std::size_t) const {}
  template <class F>
  void for_each_aggregation(F&&) {}
  template <class F>
  void for_each_aggregation_reversed(F&&) {}
  void accumulate(T) {}
  template <class Inner>
  void flush() {}
  template <class F>
  void for_each_leaf(F&&) {}

 private:
  T value_;
};

}  // namespace nax::gnn::detail
