#pragma once
// The cursor protocol of the typed layer, at its leaves: a cursor evaluates an expression over
// destination axes D row by row. The evaluator positions every leaf at a row (start_row), then
// reads the row through the reader the cursor hands out (readers.hpp); a row's last, partial
// vector goes through load_tail.

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/expression/lanes.hpp>
#include <nax/typed/expression/readers.hpp>

namespace nax::NAX_ISA::detail {

/// Reads elements of one leaf over the destination's axes. Strides are in elements, one per
/// destination axis (0 where the leaf lacks the axis: a broadcast); the evaluator may merge
/// axes (coalesce_axes) and then uses the first `outer` strides for the row and `step` within it.
/// `Splat`: the leaf lacks the destination's innermost axis, so each row is one value.
template <class T, std::size_t R, bool Splat>
struct leaf_cursor {
  using value_type = T;
  using lane_type = lane_of_value<T>;
  static constexpr bool splat_row = Splat;
  // A row kernel's widest vector of T, and as many elements as the most lanes an expression is
  // read at (a cast, or a mask of another lane, reads a leaf of doubles at float's width).
  static constexpr std::size_t splat_size =
      std::max<std::size_t>(64 / sizeof(T), simd::width<float>);

  const T* base = nullptr;
  std::array<std::ptrdiff_t, (R > 0 ? R : 1)> stride{};
  std::ptrdiff_t step = 0;
  const T* row = nullptr;
  // Aligned for the widest vector this build has, not more: an alignment the instruction set
  // lacks registers for makes g++ note an ABI change wherever a cursor is passed by value.
  alignas(sizeof(simd::row_vec<float>)) T splat[splat_size]{};

  template <class F>
  void for_each_leaf(F&& f) {
    f(*this);
  }
  template <class F>
  void for_each_leaf(F&& f) const {
    f(*this);
  }

  /// Whether the current layout lets reader<L, row_access::contiguous>() read this leaf.
  bool contiguous() const { return step == (Splat ? 0 : 1); }

  /// Positions at the start of a row. A row at step 0 that is not known to be one value (a
  /// degenerate stride) reads from a splat buffer, so a full vector load yields it in every lane.
  void start_row(std::ptrdiff_t offset) {
    const T* p = base + offset;
    if (!Splat && step == 0) {
      std::fill(splat, splat + splat_size, *p);
      row = splat;
    } else {
      row = p;
    }
  }

  template <class L, row_access Access>
  auto reader() const {
    if constexpr (Splat)
      return splat_reader<L, T>{*row};
    else if constexpr (Access == row_access::contiguous)
      return contiguous_reader<L, T>{row};
    else
      return strided_reader<L, T>{row, step};
  }

  /// For a row's last, partial vector: the n elements from i are copied into the (otherwise
  /// unused) splat buffer, padded, and read from there at position 0 until leave_tail(). So an
  /// expression has one load path, instantiated once, for full and partial vectors alike.
  void enter_tail(std::size_t i, std::size_t n) {
    saved_row = row;
    saved_step = step;
    if (Splat || step == 0) return;  // a one-value row is read the same in the tail
    const T* p = row + static_cast<std::ptrdiff_t>(i) * step;
    for (std::size_t j = 0; j < splat_size; ++j)
      splat[j] = j < n ? p[static_cast<std::ptrdiff_t>(j) * step] : pad_value<T>();
    row = splat;
    step = 1;
  }
  void leave_tail() {
    row = saved_row;
    step = saved_step;
  }

  /// Whether a kernel reading at unit stride needs this leaf's row copied first (enter_segment).
  bool needs_stage() const { return !Splat && step != 1; }

  /// For a row kernel that reads positions [from, from + n) of the current row as [0, n) at unit
  /// stride: a leaf at unit stride moves its row to `from`; one at another stride (a transposed
  /// or strided operand, or a degenerate stride 0) copies the n elements into `stage` and is
  /// read there. So an expression needs one row kernel, whatever its operands' layouts.
  /// leave_segment() undoes it.
  void enter_segment(std::size_t from, std::size_t n, T* stage) {
    segment_row = row;
    segment_step = step;
    if constexpr (!Splat) {
      if (step == 1) {
        row += from;
        return;
      }
      const T* p = row + static_cast<std::ptrdiff_t>(from) * step;
      for (std::size_t j = 0; j < n; ++j) stage[j] = p[static_cast<std::ptrdiff_t>(j) * step];
      row = stage;
      step = 1;
    } else {
      (void)from, (void)n, (void)stage;
    }
  }
  void leave_segment() {
    row = segment_row;
    step = segment_step;
  }

 private:
  const T* saved_row = nullptr;
  std::ptrdiff_t saved_step = 0;
  const T* segment_row = nullptr;
  std::ptrdiff_t segment_step = 0;
};

/// Buffers through which a kernel reads a cursor's leaves at unit stride, `elements` positions
/// of a row at a time (leaf_cursor::enter_segment): one per leaf (elements are at most 8 bytes),
/// and one more for the caller (a strided destination). Allocated only when `staged`; unstaged,
/// enter() only moves each leaf's row to the segment.
class leaf_stage {
 public:
  template <class C>
  leaf_stage(const C& c, std::size_t elements, bool staged) : bytes_(elements * 8) {
    if (!staged) return;
    std::size_t leaves = 0;
    c.for_each_leaf([&](const auto&) { ++leaves; });
    memory_ = std::make_unique_for_overwrite<unsigned char[]>((leaves + 1) * bytes_);
  }
  /// Positions [from, from + count) of every leaf's current row, read from 0 at unit stride.
  template <class C>
  void enter(C& c, std::size_t from, std::size_t count) const {
    unsigned char* next = memory_.get();
    c.for_each_leaf([&](auto& leaf) {
      using T = typename std::remove_cvref_t<decltype(leaf)>::value_type;
      if (next) next += bytes_;
      leaf.enter_segment(from, count, reinterpret_cast<T*>(next));
    });
  }
  template <class C>
  static void leave(C& c) {
    c.for_each_leaf([](auto& leaf) { leaf.leave_segment(); });
  }
  /// The caller's buffer, of `elements` values of T.
  template <class T>
  T* extra() const {
    return reinterpret_cast<T*>(memory_.get());
  }

 private:
  std::size_t bytes_;
  std::unique_ptr<unsigned char[]> memory_;
};

/// Whether every leaf of cursor c can be read with row_access::contiguous.
template <class C>
bool contiguous_rows(const C& c) {
  bool ok = true;
  c.for_each_leaf([&](const auto& leaf) { ok = ok && leaf.contiguous(); });
  return ok;
}

/// The vector at positions [i, i + n) of cursor c's current row, n < width, padded (the padding
/// lanes hold the value pad_value gives each leaf; callers mask them out where it matters). As a
/// wider vector W of a leaf's reader (load_as) when W is given: a leaf's splat buffer holds one.
template <class L, class W = void, class C>
auto load_tail(C& c, std::size_t i, std::size_t n) {
  c.for_each_leaf([&](auto& leaf) { leaf.enter_tail(i, n); });
  const auto r = c.template reader<L, row_access::contiguous>();
  auto v = [&] {
    if constexpr (std::is_void_v<W>)
      return r.load(0);
    else
      return r.template load_as<W>(0);
  }();
  c.for_each_leaf([](auto& leaf) { leaf.leave_tail(); });
  return v;
}

/// Cursor c's current row as a kernel reads it, at lane V: `load(i)`, `load_tail(i, n)`,
/// `scalar(i)` (the reader's pointers are copied in, so they stay in registers); a leaf's reader
/// also `load_as<W>(i)` and `load_tail_as<W>(i, n)` (a row kernel's wider vectors).
template <class V, class C, row_access Access>
struct row_reader {
  using reader_type = decltype(std::declval<const C&>().template reader<V, Access>());
  C* c;
  reader_type r = c->template reader<V, Access>();
  simd::vec<V> load(std::size_t i) const { return r.load(i); }
  simd::vec<V> load_tail(std::size_t i, std::size_t n) const {
    return detail::load_tail<V>(*c, i, n);
  }
  template <class W>
  requires requires(const reader_type& leaf) { leaf.template load_as<W>(0); }
  W load_as(std::size_t i) const { return r.template load_as<W>(i); }
  template <class W>
  requires requires(const reader_type& leaf) { leaf.template load_as<W>(0); }
  W load_tail_as(std::size_t i, std::size_t n) const { return detail::load_tail<V, W>(*c, i, n); }
  V scalar(std::size_t i) const { return r.scalar(i); }
};

/// Whether a leaf over axes Own read over destination axes D is one value per row (it lacks
/// D's innermost axis).
template <class D, class Own>
consteval bool splat_rows() {
  if constexpr (boost::mp11::mp_empty<D>::value)
    return false;
  else
    return !axes_contains_v<Own, boost::mp11::mp_back<D>>;
}

/// A leaf cursor over destination axes D for data laid out over `Own...` with `strides`.
template <class D, class... Own, class T, std::size_t N>
auto make_leaf_cursor(const T* data, const std::array<std::ptrdiff_t, N>& strides) {
  constexpr std::size_t R = boost::mp11::mp_size<D>::value;
  leaf_cursor<T, R, splat_rows<D, axes<Own...>>()> c;
  c.base = data;
  std::size_t k = 0;
  ((c.stride[axes_index_of_v<D, Own>] = strides[k++]), ...);
  return c;
}

}  // namespace nax::NAX_ISA::detail
