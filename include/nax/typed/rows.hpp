#pragma once
// The row driver of the row ops (softmax, log_softmax, layer_norm): runs a kernel once per row
// along one axis A, for every index of the other axes, threaded over rows. A row of the input
// expression is read through a cursor (so the expression is fused into the row op) and the
// output row is written through a destination cursor; both may be strided when A is not the
// innermost axis.

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/runtime/thread_pool.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::detail {

/// The loop order of a row op along A: the other axes of L in order, then A.
template <class L, class A>
using row_order =
    boost::mp11::mp_push_back<axes_difference<L, axes<axes_get<L, A>>>, axes_get<L, A>>;

/// A row's contents as loaded by a kernel: `load(i)`, `load_tail(i, n)`, `scalar(i)` at lane V.
template <class V, class C>
struct row_reader {
  C& c;
  simd::vec<V> load(std::size_t i) const { return c.template load<V>(i); }
  simd::vec<V> load_tail(std::size_t i, std::size_t n) const {
    return detail::load_tail<V>(c, i, n);
  }
};

/// Calls kernel(row_reader, destination_cursor, n) for each row of e along A, writing `out`
/// (a tensor over e's axes in e's order). `extra` cursors (over the same loop order) are
/// positioned at each row too and passed after the destination.
template <class A, class V, class E, class Out, class Kernel, class... Extra>
void for_each_row(const E& e, Out& out, Kernel kernel, Extra... extra) {
  using order = row_order<typename E::axes_type, A>;
  constexpr std::size_t R = boost::mp11::mp_size<order>::value;
  std::array<std::size_t, R> ext{};
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<R>>([&](auto k) {
    ext[k] = e.template extent<boost::mp11::mp_at_c<order, decltype(k)::value>>();
  });
  const std::size_t n = ext[R - 1];
  std::size_t rows = 1;
  for (std::size_t j = 0; j + 1 < R; ++j) rows *= ext[j];
  if (rows == 0 || n == 0) return;

  auto c = e.template cursor<order>();
  destination_cursor<V, R> d = make_destination<order>(out.view());
  auto set_step = [](auto& leaf) { leaf.step = leaf.stride[R - 1]; };
  c.for_each_leaf(set_step);
  (extra.for_each_leaf(set_step), ...);
  d.step = d.stride[R - 1];

  const std::size_t grain = std::max<std::size_t>(1, parallel_grain_elements / n);
  parallel_for(0, rows, grain, [&](std::size_t lo, std::size_t hi) {
    auto cur = c;
    auto dst = d;
    auto more = std::make_tuple(extra...);
    std::array<std::size_t, R> idx{};
    auto start = [&](auto& leaf) { leaf.start_row(row_offset<R>(leaf.stride, idx.data(), R - 1)); };
    for (std::size_t r = lo; r < hi; ++r) {
      split_index(r, ext.data(), R - 1, idx.data());
      cur.for_each_leaf(start);
      std::apply([&](auto&... x) { (x.for_each_leaf(start), ...); }, more);
      dst.row = dst.base + row_offset<R>(dst.stride, idx.data(), R - 1);
      std::apply([&](auto&... x) { kernel(row_reader<V, decltype(cur)>{cur}, dst, n, x...); },
                 more);
    }
  });
}

}  // namespace nax::detail
