#pragma once
// The row driver of the row ops (softmax, log_softmax, layer_norm): runs a kernel once per row
// along one axis A, for every index of the other axes, threaded over rows. A row of the input
// expression is read through a cursor (so the expression is fused into the row op) and the
// output row is written through a destination cursor; both may be strided when A is not the
// innermost axis. Contiguous rows that fit in cache may go through a row_stream per thread
// (kernels/row_io.hpp): written one row behind, around the caches when the output is large.

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/unpack.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::detail {

/// The loop order of a row op along A: the other axes of L in order, then A.
template <class L, class A>
using row_order =
    boost::mp11::mp_push_back<axes_difference<L, axes<axes_get<L, A>>>, axes_get<L, A>>;

/// Calls kernel(reader, writer, n, extra readers...) for each row of e along A, writing `out`
/// (a tensor over e's axes in e's order). `extra` cursors (over the same loop order) are
/// positioned at each row too. Rows whose input, output and extras all have unit stride along
/// A (the usual case: A innermost) get contiguous readers and writer.
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
  const bool contiguous = d.step == 1 && contiguous_rows(c) && (contiguous_rows(extra) && ...);
  // Rows that fit in cache are written one row behind (row_stream), unless a leaf reads the
  // output: a large output around the caches (non-temporal stores), for the kernels that support
  // it (streamed_row_kernel); any output, through the caches, for a deferred_row_kernel.
  bool stream = false;
  const bool nontemporal = stream_row_output(rows * n * sizeof(V));
  if (streamed_row_kernel<Kernel> && contiguous && n * sizeof(V) <= cached_row_bytes &&
      (nontemporal || deferred_row_kernel<Kernel>)) {
    const auto dst_bytes = byte_range<R>(d.base, d.stride, ext, sizeof(V));
    bool reads = overlap_of(c, d, ext, dst_bytes).reads;
    ((reads = reads || overlap_of(extra, d, ext, dst_bytes).reads), ...);
    stream = !reads;
  }

  // Rows not at unit stride (A is not innermost for the output or a leaf) are staged whole: each
  // leaf's row copied into a buffer, the output row written to one and then scattered, so the
  // kernel is compiled once, for unit stride.
  const bool staged = !contiguous;
  auto run = [&](auto streamed) {
    constexpr bool Stream = decltype(streamed)::value;
    const std::size_t grain = std::max<std::size_t>(1, parallel_grain_elements / n);
    parallel_for(0, rows, grain, [&](std::size_t lo, std::size_t hi) {
      auto cur = c;
      auto more = std::make_tuple(extra...);
      const leaf_stage stage(cur, n, staged);
      const auto more_stages = unpack(
          [&](const auto&... x) {
            return std::array<leaf_stage, sizeof...(Extra)>{leaf_stage(x, n, staged)...};
          },
          more);
      V* const out_stage = stage.extra<V>();
      std::array<std::size_t, R> idx{};
      auto start = [&](auto& leaf) {
        leaf.start_row(row_offset<R>(leaf.stride, idx.data(), R - 1));
      };
      std::array<std::size_t, R> next{};
      std::conditional_t<Stream, row_stream<V>, char> stream_out{};
      if constexpr (Stream) stream_out.nontemporal(nontemporal);
      row_prefetch fetch;
      for (std::size_t r = lo; r < hi; ++r) {
        // Fetch the next row of x while this one is computed: each row is a short stream the
        // hardware prefetchers would only pick up after its first lines. The kernel spreads
        // the fetches over a sweep from L1 (row_prefetch).
        if (!staged && r + 1 < hi && n * sizeof(V) <= cached_row_bytes) {
          split_index(r + 1, ext.data(), R - 1, next.data());
          cur.for_each_leaf([&](const auto& leaf) {
            if constexpr (!std::remove_cvref_t<decltype(leaf)>::splat_row)
              fetch.later(leaf.base + row_offset<R>(leaf.stride, next.data(), R - 1),
                          n * sizeof(*leaf.base));
          });
        }
        split_index(r, ext.data(), R - 1, idx.data());
        cur.for_each_leaf(start);
        unpack([&](auto&... x) { (x.for_each_leaf(start), ...); }, more);
        if (staged) {
          stage.enter(cur, 0, n);
          std::size_t k = 0;
          unpack([&](auto&... x) { (more_stages[k++].enter(x, 0, n), ...); }, more);
        }
        V* const row = d.base + row_offset<R>(d.stride, idx.data(), R - 1);
        const auto w = [&] {
          if constexpr (Stream)
            return stream_row_writer<V>{&stream_out, row, &fetch};
          else
            return row_writer<V, true>{staged ? out_stage : row, 1, &fetch};
        }();
        unpack(
            [&](auto&... x) {
              kernel(row_reader<V, decltype(cur), row_access::contiguous>{&cur}, w, n,
                     row_reader<V, std::remove_reference_t<decltype(x)>, row_access::contiguous>{
                         &x}...);
            },
            more);
        fetch.rest();
        if (staged) {
          leaf_stage::leave(cur);
          unpack([&](auto&... x) { (leaf_stage::leave(x), ...); }, more);
          for (std::size_t j = 0; j < n; ++j)
            row[static_cast<std::ptrdiff_t>(j) * d.step] = out_stage[j];
        }
      }
      if constexpr (Stream) stream_out.finish();
    });
  };
  if constexpr (streamed_row_kernel<Kernel>) {
    if (stream) return run(std::true_type{});
  }
  run(std::false_type{});
}

}  // namespace nax::NAX_ISA::detail
