#pragma once
// An expression as the GEMM kernel's packers see it: a matrix (batch x rows x columns, each a
// group of the expression's axes) read run by run into the packed panels (a panel source of
// nax/kernels/gemm.hpp). nax::dot computes an expression operand this way, with the evaluator's
// vector bodies, straight into the panels: the operand is never stored whole.

#include <algorithm>
#include <array>
#include <cstddef>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA::detail {

/// The total extent of the axes G of expression e (1 for none).
template <class G, class E>
std::size_t group_extent(const E& e) {
  std::size_t n = 1;
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, G>>(
      [&](auto id) { n *= e.template extent<typename decltype(id)::type>(); });
  return n;
}

/// Expression E over the axis groups Batch, Rows and Cols (each flattened row-major). Runs go
/// along the innermost axis of Batch, Rows, Cols: along a row when Cols has axes, else down
/// the column (Cols empty: one column).
template <class E, class Batch, class Rows, class Cols>
class expression_panel {
  using V = typename E::value_type;
  using order = boost::mp11::mp_append<Batch, Rows, Cols>;
  static constexpr std::size_t rank = boost::mp11::mp_size<order>::value;
  static constexpr std::size_t batch_rank = boost::mp11::mp_size<Batch>::value;
  static constexpr std::size_t row_rank = boost::mp11::mp_size<Rows>::value;
  static constexpr std::size_t col_rank = boost::mp11::mp_size<Cols>::value;
  static_assert(row_rank + col_rank > 0, "an expression panel needs row or column axes");
  static constexpr bool along_rows = col_rank > 0;
  using cursor_type = decltype(std::declval<const E&>().template cursor<order>());
  using lane = resolve_lane<V, typename E::lane_type>;

 public:
  explicit expression_panel(const E& e) : cursor_(e.template cursor<order>()) {
    std::size_t k = 0;
    boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, order>>(
        [&](auto id) { extent_[k++] = e.template extent<typename decltype(id)::type>(); });
    cursor_.for_each_leaf([](auto& leaf) { leaf.step = leaf.stride[rank - 1]; });
    contiguous_ = contiguous_rows(cursor_);
  }

  expression_panel batch(std::size_t b) const {
    expression_panel p = *this;
    p.batch_ = b;
    return p;
  }
  expression_panel at(std::size_t i, std::size_t j) const {
    expression_panel p = *this;
    p.i0_ += i;
    p.j0_ += j;
    return p;
  }
  bool row_runs() const { return along_rows; }

  /// out[t] = element (i, j + t) (along rows) or (i + t, j), t < len.
  void read_run(std::size_t i, std::size_t j, std::size_t len, V* out) const {
    std::array<std::size_t, rank> idx{};
    split_index(batch_, extent_.data(), batch_rank, idx.data());
    // The group the run goes along starts at axis `first`; the other group's index is fixed.
    constexpr std::size_t first = along_rows ? batch_rank + row_rank : batch_rank;
    constexpr std::size_t count = along_rows ? col_rank : row_rank;
    if constexpr (along_rows)
      split_index(i0_ + i, extent_.data() + batch_rank, row_rank, idx.data() + batch_rank);
    std::size_t pos = along_rows ? j0_ + j : i0_ + i;
    const std::size_t inner = extent_[rank - 1];
    while (len > 0) {
      split_index(pos, extent_.data() + first, count, idx.data() + first);
      const std::size_t from = idx[rank - 1], n = std::min(len, inner - from);
      cursor_.for_each_leaf(
          [&](auto& leaf) { leaf.start_row(row_offset<rank>(leaf.stride, idx.data(), rank - 1)); });
      if (contiguous_)
        copy_run<row_access::contiguous>(from, n, out);
      else
        copy_run<row_access::strided>(from, n, out);
      out += n;
      pos += n;
      len -= n;
    }
  }

 private:
  template <row_access Access>
  void copy_run(std::size_t from, std::size_t n, V* out) const {
    constexpr std::size_t w = simd::width<lane>;
    const auto r = cursor_.template reader<lane, Access>();
    const row_writer<V, true> o{out, 1};
    std::size_t t = 0;
    for (; t + w <= n; t += w) o.store(t, r.load(from + t));
    if (t < n) o.store_tail(t, n - t, load_tail<lane>(cursor_, from + t, n - t));
  }

  mutable cursor_type cursor_;  // positioned per run: each task reads through its own copy
  std::array<std::size_t, rank> extent_{};
  std::size_t batch_ = 0, i0_ = 0, j0_ = 0;
  bool contiguous_ = false;
};

}  // namespace nax::detail
