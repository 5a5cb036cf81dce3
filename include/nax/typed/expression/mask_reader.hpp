#pragma once
// A bool expression read at another lane's width: the mask of an i64 comparison selecting float
// values (nax::where), or a float comparison and an i64 comparison in one logical_and. A mask of
// lane M has width<M> lanes, the op that reads it width<L>: the reader hands out masks of L
// covering the same elements.

#include <cstddef>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

/// Reader R of a bool expression evaluated at its own lane, read as masks of lane L.
template <class L, class R>
struct mask_reader {
  R child;
  simd::mask<L> load(std::size_t i) const {
    using to = simd::mask<L>;
    using from = decltype(child.load(i));  // a mask of the child's lane
    constexpr std::size_t w = to::size, wf = from::size;
    if constexpr (std::is_same_v<from, to>) {
      return child.load(i);
    } else if constexpr (w == wf && requires(const from& m) {
                           static_cast<const typename to::register_type*>(&m.data);
                         }) {
      return to(child.load(i).data);  // one register type for both (AVX-512's k registers)
    } else if constexpr (w == wf && requires(const from& m) {
                           to(xsimd::bitwise_cast<simd::vec<L>>(xsimd::bitwise_cast(m)).data);
                         }) {
      // Masks held as vectors whose true lanes are all ones (SSE, AVX): the bits, retyped.
      return to(xsimd::bitwise_cast<simd::vec<L>>(xsimd::bitwise_cast(child.load(i))).data);
    } else {
      alignas(64) bool lanes[w];
      if constexpr (w % wf == 0) {  // more lanes of L: the child's masks from i on
        for (std::size_t k = 0; k < w; k += wf) child.load(i + k).store_aligned(lanes + k);
      } else {  // fewer lanes of L: a whole mask of the child would read past them
        for (std::size_t j = 0; j < w; ++j) lanes[j] = child.scalar(i + j);
      }
      return simd::load_mask<to>(lanes);
    }
  }
  bool scalar(std::size_t i) const { return child.scalar(i); }
};

/// The reader of a child with element type V read inside a context at lane L: a bool child
/// evaluated at a lane of its own other than L is read through mask_reader; any other as is.
template <class L, class V, class R>
auto read_at_lane(R r) {
  using from = decltype(r.load(0));
  if constexpr (std::is_same_v<V, bool> && !std::is_same_v<from, simd::mask<L>>)
    return mask_reader<L, R>{r};
  else
    return r;
}

}  // namespace nax::detail
