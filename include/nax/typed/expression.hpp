#pragma once
// The expression protocol of the typed layer. An expression E (a tensor, a view, a scalar or an
// op node) has
//   E::value_type   the element type it yields (bool for comparisons)
//   E::axes_type    nax::axes<...> of its axes (broadcasting is by name)
//   E::lane_type    the element type whose SIMD width it is evaluated at (void: "the context's",
//                   for bool leaves)
//   e.extent<A>()   its extent along axis A
//   e.cursor<D>()   a cursor that evaluates it over destination axes D, row by row
// Nodes are lazy: building `x * 2 + b` computes nothing; assignment runs one loop (evaluate.hpp).

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/simd/arch.hpp>
#include <nax/ops/elementwise.hpp>

namespace nax {

template <class T, axis_type... Axes>
class tensor_view;

/// Base of every expression type (tensors, views, scalars, nodes). It lives in namespace nax
/// so that argument-dependent lookup finds nax's operators for every node.
struct expression_base {};

namespace detail {

/// dst = e with one fused loop (evaluate.hpp).
template <class T, class... D, class E>
void assign(const tensor_view<T, D...>& dst, const E& e);

template <class Derived>
struct leaf_expression : expression_base {};

template <class E>
inline constexpr bool is_expression_v = std::is_base_of_v<expression_base, std::remove_cvref_t<E>>;

/// Specialized true for nax::tensor (an owning tensor: an rvalue one is moved into the node).
template <class T>
inline constexpr bool is_owning_tensor_v = false;

template <class T>
using lane_of_value = std::conditional_t<std::is_same_v<T, bool>, void, T>;


// --- row readers ------------------------------------------------------------------------------
// A cursor positioned at a row hands out a reader: a small value (pointers, a stride, splatted
// values) with `load(i)` (the vector at positions [i, i + width) of the row) and `scalar(i)`.
// Kernels copy it into a local, so the compiler keeps its pointers in registers: a store to the
// destination cannot alias a local whose address is never taken.

/// How the rows of every non-broadcast leaf are laid out: any stride, or unit stride.
enum class row_access { strided, contiguous };

/// A leaf read at unit stride.
template <class L, class T>
struct contiguous_reader {
  const T* p;
  loaded_t<L, T> load(std::size_t i) const { return loaded_t<L, T>::load_unaligned(p + i); }
  T scalar(std::size_t i) const { return p[i]; }
};

/// A leaf read at any stride (0 through a splat buffer, 1 directly, else gathered: a branch the
/// predictor gets right within a row).
template <class L, class T>
struct strided_reader {
  const T* p;
  std::ptrdiff_t step;
  loaded_t<L, T> load(std::size_t i) const {
    const T* at = p + static_cast<std::ptrdiff_t>(i) * step;
    if (step > 1) [[unlikely]]
      return load_partial<L>(at, step, loaded_t<L, T>::size);
    return loaded_t<L, T>::load_unaligned(at);
  }
  T scalar(std::size_t i) const { return p[static_cast<std::ptrdiff_t>(i) * step]; }
};

/// One value in every position (a scalar, or a leaf broadcast along the row): splatted once.
template <class L, class T>
struct splat_reader {
  T value;
  loaded_t<L, T> v;
  explicit splat_reader(T x) : value(x), v(x) {}
  loaded_t<L, T> load(std::size_t) const { return v; }
  T scalar(std::size_t) const { return value; }
};

/// Reads elements of one leaf over the destination's axes. Strides are in elements, one per
/// destination axis (0 where the leaf lacks the axis: a broadcast); the evaluator may merge
/// axes (coalesce) and then uses the first `outer` strides for the row and `step` within it.
/// `Splat`: the leaf lacks the destination's innermost axis, so each row is one value.
template <class T, std::size_t R, bool Splat>
struct leaf_cursor {
  using value_type = T;
  using lane_type = lane_of_value<T>;
  static constexpr bool splat_row = Splat;
  static constexpr std::size_t splat_size = 64 / sizeof(T);

  const T* base = nullptr;
  std::array<std::ptrdiff_t, (R > 0 ? R : 1)> stride{};
  std::ptrdiff_t step = 0;
  const T* row = nullptr;
  alignas(64) T splat[splat_size]{};

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

 private:
  const T* saved_row = nullptr;
  std::ptrdiff_t saved_step = 0;
};

/// Whether every leaf of cursor c can be read with row_access::contiguous.
template <class C>
bool contiguous_rows(const C& c) {
  bool ok = true;
  c.for_each_leaf([&](const auto& leaf) { ok = ok && leaf.contiguous(); });
  return ok;
}

/// The vector at positions [i, i + n) of cursor c's current row, n < width, padded (the padding
/// lanes hold the value pad_value gives each leaf; callers mask them out where it matters).
template <class L, class C>
auto load_tail(C& c, std::size_t i, std::size_t n) {
  c.for_each_leaf([&](auto& leaf) { leaf.enter_tail(i, n); });
  auto v = c.template reader<L, row_access::contiguous>().load(0);
  c.for_each_leaf([](auto& leaf) { leaf.leave_tail(); });
  return v;
}

/// Cursor c's current row as a kernel reads it, at lane V: `load(i)`, `load_tail(i, n)`,
/// `scalar(i)` (the reader's pointers are copied in, so they stay in registers).
template <class V, class C, row_access Access>
struct row_reader {
  C* c;
  decltype(std::declval<const C&>().template reader<V, Access>()) r =
      c->template reader<V, Access>();
  simd::vec<V> load(std::size_t i) const { return r.load(i); }
  simd::vec<V> load_tail(std::size_t i, std::size_t n) const {
    return detail::load_tail<V>(*c, i, n);
  }
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

// --- scalars ----------------------------------------------------------------------------------

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

// --- an rvalue tensor kept alive by the expression that reads it ---------------------------

template <class Tensor>
class owned_leaf : public expression_base {
 public:
  using value_type = typename Tensor::value_type;
  using axes_type = typename Tensor::axes_type;
  using lane_type = lane_of_value<value_type>;
  explicit owned_leaf(Tensor&& t) : tensor_(std::make_shared<const Tensor>(std::move(t))) {}
  template <class A>
  std::size_t extent() const {
    return tensor_->template extent<A>();
  }
  template <class D>
  auto cursor() const {
    return tensor_->view().template cursor<D>();
  }
  const Tensor& tensor() const { return *tensor_; }

 private:
  std::shared_ptr<const Tensor> tensor_;
};

/// What an operand becomes inside a node: expressions by value (views are small), an lvalue
/// tensor as a view of it, an rvalue tensor moved into the node, a scalar converted to T.
template <class T, class X>
auto as_expression(X&& x) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_owning_tensor_v<U>) {
    if constexpr (std::is_lvalue_reference_v<X>)
      return x.view();
    else
      return owned_leaf<U>(std::move(x));
  } else if constexpr (is_expression_v<U>) {
    return U(std::forward<X>(x));
  } else {
    static_assert(std::is_arithmetic_v<U>,
                  "nax: an operand must be a nax tensor, view, expression or an arithmetic scalar");
    return scalar_node<T>(static_cast<T>(x));
  }
}

template <class X>
using expression_of =
    decltype(as_expression<typename std::remove_cvref_t<X>::value_type>(std::declval<X>()));

// --- op nodes -------------------------------------------------------------------------------

template <class L, class Own>
using resolve_lane = std::conditional_t<std::is_void_v<Own>, L, Own>;

template <class... Lanes>
struct first_lane {
  using type = void;
};
template <class First, class... Rest>
struct first_lane<First, Rest...> {
  using type = std::conditional_t<std::is_void_v<First>, typename first_lane<Rest...>::type, First>;
};

/// The lane a child cursor C is read at inside a context read at lane L.
template <class L, class C>
using lane_for = resolve_lane<L, typename std::remove_cvref_t<C>::lane_type>;

template <class Op, class... R>
struct op_reader {
  std::tuple<R...> children;
  auto load(std::size_t i) const {
    return std::apply([&](const auto&... r) { return Op::apply(r.load(i)...); }, children);
  }
  auto scalar(std::size_t i) const {
    return std::apply([&](const auto&... r) { return Op::apply(r.scalar(i)...); }, children);
  }
};

template <class Op, class V, class... C>
struct op_cursor {
  using value_type = V;
  using lane_type = typename first_lane<typename C::lane_type...>::type;
  std::tuple<C...> children;

  template <class F>
  void for_each_leaf(F&& f) {
    std::apply([&](auto&... c) { (c.for_each_leaf(f), ...); }, children);
  }
  template <class F>
  void for_each_leaf(F&& f) const {
    std::apply([&](const auto&... c) { (c.for_each_leaf(f), ...); }, children);
  }
  template <class L, row_access Access>
  auto reader() const {
    return std::apply(
        [](const auto&... c) {
          return op_reader<Op, decltype(c.template reader<lane_for<L, decltype(c)>, Access>())...>{
              {c.template reader<lane_for<L, decltype(c)>, Access>()...}};
        },
        children);
  }
};

/// The result of applying Op to `Args...`, elementwise with broadcasting by axis name.
template <class Op, class... Args>
class op_node : public expression_base {
  static_assert(sizeof...(Args) > 0);
  using operand_lanes = first_lane<typename Args::lane_type...>;

 public:
  using axes_type =
      boost::mp11::mp_fold<boost::mp11::mp_list<typename Args::axes_type...>, axes<>, axes_union>;
  using lane_type = typename operand_lanes::type;
  using value_type =
      std::conditional_t<Op::yields_bool, bool,
                         typename std::tuple_element_t<(std::is_same_v<Op, ops::where> ? 1 : 0),
                                                       std::tuple<Args...>>::value_type>;

  // An error here means the operands have different element types: convert one with
  // nax::cast<U>(e) (scalars convert by themselves).
  static_assert(
      std::is_same_v<Op, ops::where>
          ? std::is_same_v<typename std::tuple_element_t<0, std::tuple<Args...>>::value_type, bool>
          : (std::is_same_v<typename Args::value_type,
                            typename std::tuple_element_t<0, std::tuple<Args...>>::value_type> &&
             ...),
      "nax: the operands of an elementwise op have different element types; convert one "
      "with nax::cast<U>(e)");

  explicit op_node(Args... args) : args_(std::move(args)...) { check_extents(); }

  template <class A>
  std::size_t extent() const {
    return extent_impl<A, 0>();
  }

  template <class D>
  auto cursor() const {
    return std::apply(
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
          std::apply([&](const auto&... a) { (check_one<A>(a, first), ...); }, args_);
        });
  }
  template <class A, class Arg>
  static void check_one(const Arg& a, std::size_t first) {
    if constexpr (axes_contains_v<typename Arg::axes_type, A>) {
      const std::size_t e = a.template extent<A>();
      if (e != first) throw_shape_error("axis '", A::name, "' mismatch: ", first, " vs ", e);
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

template <class In, class Of>
struct missing_axis {
  template <class A>
  using fn = boost::mp11::mp_bool<!axes_contains_v<Of, A>>;
};

/// Compile-time check that expression axes E can be assigned to destination axes D: every axis
/// of E is in D (D's other axes broadcast E) and, when `Exact`, every axis of D is in E too.
/// Names the first axis that is not.
template <class D, class E, bool Exact>
consteval bool check_assignable() {
  using extra = boost::mp11::mp_find_if_q<E, missing_axis<E, D>>;
  using lacking = boost::mp11::mp_find_if_q<D, missing_axis<D, E>>;
  if constexpr (extra::value < boost::mp11::mp_size<E>::value) {
    // An error here means the expression has an axis the destination does not.
    static_assert(raise<error::expression_axis_missing_from_destination<
                      axis_diagnostic_name<boost::mp11::mp_at<E, extra>>>>);
    return false;
  } else if constexpr (Exact && lacking::value < boost::mp11::mp_size<D>::value) {
    // An error here means the destination has an axis the expression does not.
    static_assert(raise<error::destination_axis_missing_from_expression<
                      axis_diagnostic_name<boost::mp11::mp_at<D, lacking>>>>);
    return false;
  } else {
    // Shared axes must agree (different static extents fail here, naming the axis).
    return boost::mp11::mp_size<axes_union<D, E>>::value == boost::mp11::mp_size<D>::value;
  }
}

// --- conversions ------------------------------------------------------------------------------

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

}  // namespace detail

/// A nax tensor, view or expression node.
template <class E>
concept expression = detail::is_expression_v<E>;

}  // namespace nax
