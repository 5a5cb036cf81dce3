#pragma once
// The node of an elementwise op (nax::ops, ops/elementwise.hpp) over operand expressions,
// broadcast by axis name: its axes, extents, element type and cursor. Its element type and the
// element types it takes are the op's dtype rule (ops/dtype_rules.hpp), asked at compile time.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/unpack.hpp>
#include <nax/ops/dtype_rules.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/lanes.hpp>
#include <nax/typed/expression/mask_reader.hpp>
#include <nax/typed/expression/operand.hpp>
#include <nax/typed/expression/readers.hpp>

namespace nax::NAX_ISA::detail {

/// The lane Op's node is read at: its first operand's with a lane, but for a select (where) its
/// values' first, so that a mask of another lane selects values at their own width (the mask is
/// then read as masks of the values' lane: mask_reader.hpp).
template <class Op, class... Lanes>
struct op_lane {
  using type = typename first_lane<Lanes...>::type;
};
template <class Op, class MaskLane, class... ValueLanes>
requires Op::selects
struct op_lane<Op, MaskLane, ValueLanes...> {
  using type = typename first_lane<ValueLanes..., MaskLane>::type;
};
template <class Op, class... Lanes>
using op_lane_t = typename op_lane<Op, Lanes...>::type;

template <class Op, class... R>
struct op_reader {
  std::tuple<R...> children;
  // (Each op's result rounded apart from the next op's: simd::op_result.)
  auto load(std::size_t i) const {
    return unpack([&](const auto&... r) { return simd::op_result(Op::apply(r.load(i)...)); },
                  children);
  }
  auto scalar(std::size_t i) const {
    return unpack([&](const auto&... r) { return simd::op_result(Op::apply(r.scalar(i)...)); },
                  children);
  }
};

template <class Op, class V, class... C>
struct op_cursor {
  using value_type = V;
  using lane_type = op_lane_t<Op, typename C::lane_type...>;
  std::tuple<C...> children;

  template <class F>
  void for_each_leaf(F&& f) {
    unpack([&](auto&... c) { (c.for_each_leaf(f), ...); }, children);
  }
  template <class F>
  void for_each_leaf(F&& f) const {
    unpack([&](const auto&... c) { (c.for_each_leaf(f), ...); }, children);
  }
  template <class L, row_access Access>
  auto reader() const {
    return unpack(
        [](const auto&... c) {
          return op_reader<Op, decltype(child_reader<L, Access>(c))...>{
              {child_reader<L, Access>(c)...}};
        },
        children);
  }

 private:
  // A child at its own lane (lane_for); a bool child whose lane is not L as masks of L.
  template <class L, row_access Access, class Child>
  static auto child_reader(const Child& c) {
    return read_at_lane<L, typename Child::value_type>(
        c.template reader<lane_for<L, Child>, Access>());
  }
};

/// Op's dtype rule (ops/dtype_rules.hpp) over operands of element types Ts, at compile time.
template <class Op, class... Ts>
inline constexpr ops::dtype_check op_dtypes = ops::check_dtypes(Op::id, {dtype_of<Ts>...});

/// The result of applying Op to `Args...`, elementwise with broadcasting by axis name.
template <class Op, class... Args>
class op_node : public expression_base {
  static_assert(sizeof...(Args) > 0);
  static constexpr ops::dtype_check rule = op_dtypes<Op, typename Args::value_type...>;

 public:
  using op_type = Op;  // the op's body struct (nax::ops)
  using axes_type =
      boost::mp11::mp_fold<boost::mp11::mp_list<typename Args::axes_type...>, axes<>, axes_union>;
  using lane_type = op_lane_t<Op, typename Args::lane_type...>;
  using value_type = element_type<rule.result>;

  // An error here means the operands have different element types: convert one with
  // nax::cast<U>(e) (scalars convert by themselves).
  static_assert(rule.error != ops::dtype_error::mixed,
                "nax: the operands of an elementwise op have different element types; convert one "
                "with nax::cast<U>(e)");
  // An error here means a floating-point op was applied to integer or bool elements.
  static_assert(rule.error != ops::dtype_error::not_floating,
                "nax: this op needs floating-point elements; convert with nax::cast<float>(e)");
  // An error here means an arithmetic op or a comparison was applied to bool elements.
  static_assert(rule.error != ops::dtype_error::not_numeric,
                "nax: this op needs numeric elements (float, double, int32_t or int64_t); convert "
                "with nax::cast<U>(e)");
  // An error here means a logical op (!, logical_and, logical_or) was applied to non-bool
  // elements.
  static_assert(rule.error != ops::dtype_error::not_boolean,
                "nax: this op needs bool elements (a comparison or a bool tensor)");
  static_assert(rule.error != ops::dtype_error::mask_not_bool,
                "nax::where: the condition must be a bool expression");
  static_assert(rule.error != ops::dtype_error::not_selectable,
                "nax::where: the values must be float, double, int32_t, int64_t or bool");
  static_assert(rule.error != ops::dtype_error::not_equatable,
                "nax: == and != compare float, double, int32_t, int64_t or bool elements");
  static_assert(rule.error != ops::dtype_error::arity, "nax: the wrong number of operands");

  explicit op_node(Args... args) : args_(std::move(args)...) { check_extents(); }

  template <class A>
  std::size_t extent() const {
    return extent_impl<A, 0>();
  }

  template <class D>
  auto cursor() const {
    return unpack(
        [](const auto&... a) {
          return op_cursor<Op, value_type, decltype(a.template cursor<D>())...>{
              {a.template cursor<D>()...}};
        },
        args_);
  }

  const std::tuple<Args...>& args() const { return args_; }

 private:
  template <class A, std::size_t I>
  std::size_t extent_impl() const {
    using arg = std::tuple_element_t<I, std::tuple<Args...>>;
    if constexpr (axes_contains_v<typename arg::axes_type, A>)
      return std::get<I>(args_).template extent<A>();
    else
      return extent_impl<A, I + 1>();
  }

  // Operands that share an axis must agree on its extent (checked when the node is built, so a
  // mismatch throws before anything is evaluated or written).
  void check_extents() const {
    boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, axes_type>>(
        [&](auto id) {
          using A = typename decltype(id)::type;
          const std::size_t first = extent<A>();
          unpack([&](const auto&... a) { (check_one<A>(a, first), ...); }, args_);
        });
  }
  template <class A, class Arg>
  static void check_one(const Arg& a, std::size_t first) {
    if constexpr (axes_contains_v<typename Arg::axes_type, A>) {
      const std::size_t e = a.template extent<A>();
      if (e != first) throw_axis_mismatch("", A::name, first, e);
    }
  }

  std::tuple<Args...> args_;
};

/// dst = dst Op x (the destination is read in place, element for element).
template <class Op, class T, class... D, class X>
void compound_assign(const tensor_view<T, D...>& dst, X&& x) {
  using V = std::remove_const_t<T>;
  using rhs = decltype(as_expression<V>(std::forward<X>(x)));
  assign(dst,
         op_node<Op, tensor_view<const V, D...>, rhs>(dst, as_expression<V>(std::forward<X>(x))));
}

}  // namespace nax::detail
