#pragma once
// The vector folds of one row: a reduction of f(v) over a row's vectors into four accumulators
// (so the loop runs at load rate, not at the latency of the combine), with the padded tail
// masked to the identity. The typed reductions and row ops and the runtime's reduce kernel fold
// rows with these.

#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/ops/reducers.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

/// Red over the lanes of v, in lane order.
template <class R, class V>
typename V::value_type reduce_lanes(const V& v) {
  using T = typename V::value_type;
  alignas(64) T lanes[V::size];
  v.store_aligned(lanes);
  T acc = lanes[0];
  for (std::size_t j = 1; j < V::size; ++j) acc = R::combine(acc, lanes[j]);
  return acc;
}

// Lanes j >= n of v replaced by the identity (a padded tail must not change the result).
template <class R, class V>
V keep_first(const V& v, std::size_t n) {
  using T = typename V::value_type;
  alignas(64) T lanes[V::size];
  v.store_aligned(lanes);
  for (std::size_t j = n; j < V::size; ++j) lanes[j] = R::template identity<T>();
  return V::load_aligned(lanes);
}

/// Folds f(v) for the vectors v of a row of n elements (x: a row_reader; Vec: the reader's
/// vectors, or a row kernel's wider ones, load_as) into four accumulators, so the loop runs at
/// load rate rather than at the latency of Red's combine; the padded tail goes into the second,
/// its padding replaced by the identity. side() is called once per vector read (the row ops
/// drain the previous row's streamed output with it). Always inlined: f's and side's state then
/// stays in registers.
template <class Red, class Reader, class F, class Vec, class Side = no_side_work>
[[gnu::always_inline]] inline void accumulate_row(const Reader& x, std::size_t n, F f,
                                                  Vec (&acc)[4], Side&& side = Side{}) {
  constexpr std::size_t w = Vec::size;
  std::size_t i = 0;
  for (; i + 4 * w <= n; i += 4 * w) {
    acc[0] = Red::combine(acc[0], f(load_as<Vec>(x, i)));
    side();
    acc[1] = Red::combine(acc[1], f(load_as<Vec>(x, i + w)));
    side();
    acc[2] = Red::combine(acc[2], f(load_as<Vec>(x, i + 2 * w)));
    side();
    acc[3] = Red::combine(acc[3], f(load_as<Vec>(x, i + 3 * w)));
    side();
  }
  for (; i + w <= n; i += w) {
    acc[0] = Red::combine(acc[0], f(load_as<Vec>(x, i)));
    side();
  }
  if (i < n)
    acc[1] = Red::combine(acc[1], keep_first<Red>(f(load_tail_as<Vec>(x, i, n - i)), n - i));
}

/// The four accumulators of accumulate_row combined into one value.
template <class Red, class V>
typename V::value_type combine_accumulators(const V (&acc)[4]) {
  return reduce_lanes<Red>(
      Red::combine(Red::combine(acc[0], acc[1]), Red::combine(acc[2], acc[3])));
}

/// Red over f(v) for the vectors v (of type Vec) of one row (x: a row_reader at lane T), side()
/// once per vector.
template <class Red, class T, class Vec = simd::vec<T>, class Reader, class F,
          class Side = no_side_work>
[[gnu::always_inline]] inline T reduce_row(const Reader& x, std::size_t n, F f,
                                           Side&& side = Side{}) {
  const Vec id(Red::template identity<T>());
  Vec acc[4] = {id, id, id, id};
  accumulate_row<Red>(x, n, f, acc, side);
  return combine_accumulators<Red>(acc);
}

}  // namespace nax::detail
