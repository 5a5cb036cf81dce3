#pragma once
// A loop nest's layout: extents, outer to inner, and for each participant (an operand that walks
// the nest with the others: a kernel's inputs, a copy's source and destination, a reduction's
// input and output) a stride per axis, in elements. `coalesce` simplifies it once per shape,
// before any loop runs: axes of extent 1 go, and an axis merges into its inner neighbour where
// every participant steps through the two as one (stride[a] == stride[a + 1] * extent[a + 1]),
// so a dense tensor is one long axis and a broadcast row is a run of stride 0. Which axes merge
// depends only on neighbouring pairs, so merging in one pass is exact.
//
//   coalesce_axes(extents, rank, for_each_strides)   in place, over the caller's arrays (the
//                                                    typed evaluator: std::array per cursor)
//   strided_layout                                   the same over a runtime participant count,
//                                                    inline up to a few axes (no allocation)

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <span>

#include <nax/core/row_major.hpp>
#include <nax/core/small_vector.hpp>

namespace nax {

/// Coalesces a loop nest in place: `extents[0, rank)`, outer to inner, and the participants'
/// strides, which `for_each_strides(f)` hands to f one participant at a time (f(s), where s[a]
/// is a std::ptrdiff_t lvalue: the participant's stride along axis a). Returns the merged rank
/// r >= 1: extents[0, r) and every participant's strides [0, r) then describe the merged nest.
/// A nest of one element (every extent 1, or rank 0) becomes one axis of extent 1 and stride 0,
/// so `extents` and each stride array need room for one entry even when rank is 0. A nest with
/// an extent 0 stays empty (its merged extents multiply to 0).
///
/// `keep_inner`: the innermost axis stays (merged with its neighbours as any axis, but not
/// dropped for an extent of 1), for a loop compiled for its inner axis: the typed evaluator's
/// leaves that lack that axis read one value per row, and a typed reduction's inner axis is
/// either reduced or kept.
template <class Extents, class ForEachStrides>
constexpr std::size_t coalesce_axes(Extents& extents, std::size_t rank,
                                    ForEachStrides&& for_each_strides, bool keep_inner = false) {
  std::size_t merged = 0;  // axes [0, merged) are final but for the last one, which may grow
  for (std::size_t a = 0; a < rank; ++a) {
    const std::size_t e = extents[a];
    if (e == 1 && !(keep_inner && a + 1 == rank)) continue;
    bool joins = merged > 0;
    if (joins)
      for_each_strides([&](const auto& s) {
        joins = joins && s[merged - 1] == s[a] * static_cast<std::ptrdiff_t>(e);
      });
    if (joins) {  // the last merged axis takes axis a as its new inner part
      extents[merged - 1] *= e;
      for_each_strides([&](auto& s) { s[merged - 1] = s[a]; });
    } else {
      extents[merged] = e;
      for_each_strides([&](auto& s) { s[merged] = s[a]; });
      ++merged;
    }
  }
  if (merged == 0) {
    extents[0] = 1;
    for_each_strides([](auto& s) { s[0] = 0; });
    merged = 1;
  }
  return merged;
}

/// Extents (outer to inner) and, per participant, strides in elements over a runtime number of
/// axes and participants. Up to `Axes` axes and `Axes * Participants` strides live inline.
template <std::size_t Axes = 6, std::size_t Participants = 3>
class strided_layout {
 public:
  strided_layout() = default;
  /// `strides` holds participant p's strides at [p * rank, (p + 1) * rank), rank =
  /// extents.size(); its size must be a multiple of the rank (participants * rank).
  strided_layout(std::span<const std::size_t> extents, std::size_t participants,
                 std::span<const std::ptrdiff_t> strides)
      : participants_(participants) {
    extents_.assign(extents.begin(), extents.end());
    strides_.assign(strides.begin(), strides.end());
  }

  /// One stride list per participant, each of extents.size() strides.
  strided_layout(std::span<const std::size_t> extents,
                 std::initializer_list<std::span<const std::ptrdiff_t>> participants)
      : participants_(participants.size()) {
    extents_.assign(extents.begin(), extents.end());
    strides_.reserve(participants.size() * extents.size());
    for (std::span<const std::ptrdiff_t> s : participants)
      for (std::ptrdiff_t x : s) strides_.push_back(x);
  }

  std::size_t rank() const noexcept { return extents_.size(); }
  std::size_t participants() const noexcept { return participants_; }
  std::span<const std::size_t> extents() const noexcept { return {extents_.data(), rank()}; }
  std::size_t extent(std::size_t axis) const noexcept { return extents_[axis]; }
  /// Participant p's strides, one per axis.
  std::span<std::ptrdiff_t> strides(std::size_t p) noexcept {
    return {strides_.data() + p * rank(), rank()};
  }
  std::span<const std::ptrdiff_t> strides(std::size_t p) const noexcept {
    return {strides_.data() + p * rank(), rank()};
  }
  std::ptrdiff_t stride(std::size_t p, std::size_t axis) const noexcept {
    return strides_[p * rank() + axis];
  }
  /// Elements of the nest (1 for rank 0).
  std::size_t size() const noexcept { return core_detail::element_count(extents_); }

  /// Merges the axes as coalesce_axes does; afterwards rank() >= 1.
  void coalesce() {
    const std::size_t old_rank = rank();
    if (old_rank == 0) {  // room for the one axis a one-element nest becomes
      extents_.resize(1);
      strides_.resize(participants_);
    }
    const std::size_t room = std::max<std::size_t>(old_rank, 1);  // strides per participant
    const std::size_t r = coalesce_axes(extents_, old_rank, [&](auto&& f) {
      for (std::size_t p = 0; p < participants_; ++p) {
        std::span<std::ptrdiff_t> s(strides_.data() + p * room, room);
        f(s);
      }
    });
    // Participant p's strides move from [p * room, ...) to [p * r, ...); r <= room, so copying
    // forward never overwrites what is still to be read.
    if (r < room)
      for (std::size_t p = 1; p < participants_; ++p)
        std::copy_n(strides_.data() + p * room, r, strides_.data() + p * r);
    extents_.resize(r);
    strides_.resize(participants_ * r);
  }

 private:
  core_detail::small_vector<std::size_t, Axes> extents_;
  core_detail::small_vector<std::ptrdiff_t, Axes * Participants> strides_;
  std::size_t participants_ = 0;
};

}  // namespace nax
