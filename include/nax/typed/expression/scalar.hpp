#pragma once
// A scalar in an expression: no axes, the same value everywhere (`x * 2`).

#include <nax/core/axis_list.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/lanes.hpp>
#include <nax/typed/expression/readers.hpp>

namespace nax::NAX_ISA::detail {

template <class T>
struct scalar_cursor {
  using value_type = T;
  using lane_type = lane_of_value<T>;
  T value;
  template <class F>
  void for_each_leaf(F&&) {}
  template <class F>
  void for_each_leaf(F&&) const {}
  template <class L, row_access>
  splat_reader<L, T> reader() const {
    return splat_reader<L, T>(value);
  }
};

/// A scalar in an expression: no axes, the same value everywhere.
template <class T>
class scalar_node : public expression_base {
 public:
  using value_type = T;
  using axes_type = axes<>;
  using lane_type = lane_of_value<T>;
  explicit scalar_node(T v) : value_(v) {}
  template <class D>
  scalar_cursor<T> cursor() const {
    return {value_};
  }
  T value() const { return value_; }

 private:
  T value_;
};

}  // namespace nax::detail
