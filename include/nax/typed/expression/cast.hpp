#pragma once
// Conversions: `cast<U>(e)`, e's elements converted to U, read at U's width where it can be.

#include <cstddef>
#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/simd/arch.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/lanes.hpp>
#include <nax/typed/expression/readers.hpp>

namespace nax::NAX_ISA::detail {

template <class U, class R>
struct cast_reader {
  using from = decltype(std::declval<const R&>().scalar(0));
  R child;
  simd::vec<U> load(std::size_t i) const {
    using loaded = decltype(child.load(i));
    if constexpr (std::is_same_v<loaded, simd::mask<U>>) {
      return simd::select(child.load(i), simd::vec<U>(U(1)), simd::vec<U>(U(0)));
    } else if constexpr (!std::is_same_v<from, bool> && sizeof(from) == sizeof(U)) {
      return xsimd::batch_cast<U>(child.load(i));
    } else {  // widths differ: convert lane by lane
      alignas(64) U tmp[simd::width<U>];
      for (std::size_t j = 0; j < simd::width<U>; ++j) tmp[j] = scalar(i + j);
      return simd::vec<U>::load_aligned(tmp);
    }
  }
  U scalar(std::size_t i) const { return static_cast<U>(child.scalar(i)); }
};

template <class U, class C>
struct cast_cursor {
  using value_type = U;
  using lane_type = lane_of_value<U>;
  using from = typename C::value_type;
  C child;

  template <class F>
  void for_each_leaf(F&& f) {
    child.for_each_leaf(f);
  }
  template <class F>
  void for_each_leaf(F&& f) const {
    child.for_each_leaf(f);
  }
  // The child is read at U's width where the widths agree (a bool child: as a mask of U's
  // width), else at its own and converted lane by lane.
  template <class L, row_access Access>
  auto reader() const {
    if constexpr (std::is_same_v<from, U>) {
      return child.template reader<L, Access>();
    } else {
      using child_lane = std::conditional_t<std::is_same_v<from, bool>, U, from>;
      using R = decltype(child.template reader<lane_for<child_lane, C>, Access>());
      return cast_reader<U, R>{child.template reader<lane_for<child_lane, C>, Access>()};
    }
  }
};

/// `cast<U>(e)`: e's elements converted to U (bool gives 0 or 1).
template <class U, class E>
class cast_node : public expression_base {
  static_assert(!std::is_same_v<U, bool>, "nax::cast<bool>: compare instead, e.g. e != 0");

 public:
  using value_type = U;
  using axes_type = typename E::axes_type;
  using lane_type = U;
  explicit cast_node(E e) : e_(std::move(e)) {}
  template <class A>
  std::size_t extent() const {
    return e_.template extent<A>();
  }
  template <class D>
  auto cursor() const {
    return cast_cursor<U, decltype(e_.template cursor<D>())>{e_.template cursor<D>()};
  }
  const E& operand() const { return e_; }

 private:
  E e_;
};

}  // namespace nax::detail
