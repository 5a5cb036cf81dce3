#pragma once
// An elementwise expression over traced values in the graph: its ops as elementwise nodes, so
// that the fusion passes treat them as a builder graph's and the runtime's fused kernels run
// them. An expression the graph cannot spell op by op (a cast inside, a tensor of its own) is
// one node running its own fused loop, instantiated at C++ compile time: the typed evaluator
// (nax/typed/evaluate.hpp) run on the expression type E with every traced leaf replaced by a
// const view of the run's buffer.
//
// Rebinding: the node keeps E (immutable) and, per leaf, which operand it reads. Each run builds
// a fresh expression of the rebound type on its own stack from E, the run's value addresses and
// the extents fixed at specialization, and evaluates it. Nothing is shared and mutable, so
// concurrent runs of one specialization are safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/axis_list.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/unpack.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA::detail {

/// The run's view of expression type X's traced leaves: leaf k's address and extents.
template <class Leaves>
struct leaf_frame;
template <class... L>
struct leaf_frame<boost::mp11::mp_list<L...>> {
  using extents_tuple = std::tuple<typename L::extents_type...>;
  std::array<const void*, sizeof...(L)> data{};
  const extents_tuple* extents = nullptr;
};

/// X's type with traced leaves rebound to const views (`type`), the number of its traced
/// leaves, the rebound value over a frame (`apply<K>`: its first traced leaf is the frame's K-th),
/// and the names of its ops in evaluation order.
template <class X>
struct fused_tree {
  // A view would be read on every run, long after the trace, from memory the traced function
  // does not own (a tensor it captured by value dies with it). An error here means an
  // expression reads a tensor the function captured: make it an input of nax::jit.
  static_assert(!is_tensor_view_v<X>,
                "nax::jit: an expression reads a captured tensor; pass it as an input instead");
  using type = X;  // scalars (and tensors moved into the expression, which it owns) stay
  static constexpr std::size_t leaves = 0;
  template <std::size_t K, class Frame>
  static const X& apply(const X& x, const Frame&) {
    return x;
  }
  static void names(std::vector<std::string_view>&) {}
};

template <class T, class... A>
struct fused_tree<traced<T, A...>> {
  using type = tensor_view<const T, A...>;
  static constexpr std::size_t leaves = 1;
  template <std::size_t K, class Frame>
  static type apply(const traced<T, A...>&, const Frame& f) {
    return type(static_cast<const T*>(f.data[K]), std::get<K>(*f.extents));
  }
  static void names(std::vector<std::string_view>&) {}
};

template <class Op, class... Args>
struct fused_tree<op_node<Op, Args...>> {
  using type = op_node<Op, typename fused_tree<Args>::type...>;
  static constexpr std::size_t leaves = (fused_tree<Args>::leaves + ... + 0);
  template <std::size_t K, class Frame>
  static type apply(const op_node<Op, Args...>& x, const Frame& f) {
    return apply_args<K>(x, f, std::index_sequence_for<Args...>{});
  }
  static void names(std::vector<std::string_view>& out) {
    (fused_tree<Args>::names(out), ...);
    out.push_back(Op::name);
  }

 private:
  // The index of argument I's first traced leaf among the node's.
  static constexpr std::array<std::size_t, sizeof...(Args) + 1> offsets = [] {
    const std::size_t counts[] = {fused_tree<Args>::leaves...};
    std::array<std::size_t, sizeof...(Args) + 1> o{};
    for (std::size_t i = 0; i < sizeof...(Args); ++i) o[i + 1] = o[i] + counts[i];
    return o;
  }();
  template <std::size_t K, class Frame, std::size_t... I>
  static type apply_args(const op_node<Op, Args...>& x, const Frame& f, std::index_sequence<I...>) {
    return type(fused_tree<Args>::template apply<K + offsets[I]>(std::get<I>(x.args()), f)...);
  }
};

template <class U, class E>
struct fused_tree<cast_node<U, E>> {
  using type = cast_node<U, typename fused_tree<E>::type>;
  static constexpr std::size_t leaves = fused_tree<E>::leaves;
  template <std::size_t K, class Frame>
  static type apply(const cast_node<U, E>& x, const Frame& f) {
    return type(fused_tree<E>::template apply<K>(x.operand(), f));
  }
  static void names(std::vector<std::string_view>& out) {
    fused_tree<E>::names(out);
    out.push_back("cast");
  }
};

/// Extents Ext (a nax::extents) from a concrete shape (nax::shape_error naming the axis if an
/// extent breaks its axis's static extent or bound).
template <class Ext>
Ext extents_from_shape(const nax::shape& s) {
  constexpr std::size_t n = Ext::rank();
  if (s.rank() != n)
    throw_shape_error("nax::jit: ", concrete_string(s), " has rank ", s.rank(), ", expected ", n);
  if constexpr (n == 0) {
    return Ext();
  } else {
    std::array<std::size_t, n> values{};
    for (std::size_t i = 0; i < n; ++i) values[i] = s[i].extent();
    return Ext(std::span<const std::size_t, n>(values));
  }
}

/// One specialization's step: expression E evaluated into the result with the typed evaluator.
template <class E>
class fused_step final : public kernels::step_kernel {
  using leaves = traced_leaves_t<E>;
  static constexpr std::size_t n = boost::mp11::mp_size<leaves>::value;
  using frame = leaf_frame<leaves>;
  using V = typename E::value_type;
  using out_view = typename view_over<V, typename E::axes_type>::type;

 public:
  fused_step(const E& e, const std::array<std::uint32_t, n>& values,
             typename frame::extents_tuple extents, std::uint32_t result,
             typename out_view::extents_type out_extents)
      : expr_(e),
        values_(values),
        extents_(std::move(extents)),
        result_(result),
        out_extents_(out_extents) {}

  /// The expression over the given addresses (each run builds its own).
  auto bind(void* const* values) const {
    frame f;
    for (std::size_t k = 0; k < n; ++k) f.data[k] = values ? values[values_[k]] : nullptr;
    f.extents = &extents_;
    return fused_tree<E>::template apply<0>(expr_, f);
  }

  void run(void* const* values, std::byte*) const override {
    assign(out_view(static_cast<V*>(values[result_]), out_extents_), bind(values));
  }

  const typename out_view::extents_type& out_extents() const { return out_extents_; }

 private:
  E expr_;
  std::array<std::uint32_t, n> values_;
  typename frame::extents_tuple extents_;
  std::uint32_t result_;
  typename out_view::extents_type out_extents_;
};

/// The kernel object of a fused node: E, and for each traced leaf the node operand it reads
/// (repeated leaves, as in `x * x`, read one operand).
template <class E>
class fused_kernel final : public graph::external_kernel {
  using leaves = traced_leaves_t<E>;
  static constexpr std::size_t n = boost::mp11::mp_size<leaves>::value;

 public:
  fused_kernel(const E& e, const std::array<std::uint32_t, n>& operand_of_leaf)
      : expr_(e), operand_of_leaf_(operand_of_leaf) {}

  std::string label() const override {
    std::vector<std::string_view> ops;
    fused_tree<E>::names(ops);
    std::string out = "fused:";
    for (std::size_t i = 0; i < ops.size(); ++i) {
      out += i ? ", " : " ";
      out += ops[i];
    }
    return out;
  }

  // An elementwise expression (fused_expression.hpp's file comment): row blocks run alone.
  bool elementwise() const override { return true; }

  std::unique_ptr<kernels::step_kernel> make(std::span<const std::uint32_t> args,
                                             std::uint32_t result,
                                             std::span<const nax::shape> shapes) const override {
    std::array<std::uint32_t, n> values{};
    for (std::size_t k = 0; k < n; ++k) values[k] = args[operand_of_leaf_[k]];
    try {
      auto extents = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return typename leaf_frame<leaves>::extents_tuple(
            extents_from_shape<typename boost::mp11::mp_at_c<leaves, K>::extents_type>(
                shapes[values[K]])...);
      }
      (std::make_index_sequence<n>{});
      using step = fused_step<E>;
      auto s = std::make_unique<step>(
          expr_, values, std::move(extents), result,
          extents_from_shape<typename view_over<typename E::value_type,
                                                typename E::axes_type>::type::extents_type>(
              shapes[result]));
      // Checked once here rather than on every run: the operands agree on every shared axis
      // (building the expression checks that) and with the result.
      const auto bound = s->bind(nullptr);
      boost::mp11::mp_for_each<
          boost::mp11::mp_transform<boost::mp11::mp_identity, typename E::axes_type>>([&](auto id) {
        using A = typename decltype(id)::type;
        check_destination_extent<A>(bound, s->out_extents().template extent<A>());
      });
      return s;
    } catch (const shape_error& e) {
      throw_shape_error("nax::graph::", label(), ": ", e.what());
    }
  }

 private:
  E expr_;  // its traced leaves are never read: they only say which operand a leaf is
  std::array<std::uint32_t, n> operand_of_leaf_;
};

/// The kernel running x's fused loop, and the distinct graph values it reads, in its order.
template <class X>
std::pair<std::shared_ptr<const fused_kernel<X>>, std::vector<graph::value>> fused_kernel_of(
    const X& x) {
  constexpr std::size_t n = boost::mp11::mp_size<traced_leaves_t<X>>::value;
  std::vector<graph::value> operands;
  std::array<std::uint32_t, n> operand_of_leaf{};
  std::size_t k = 0;
  for_each_traced(x, [&](const auto& leaf) {
    std::size_t i = 0;
    while (i < operands.size() &&
           (&operands[i].owner() != &leaf.node().owner() || operands[i].id() != leaf.node().id()))
      ++i;
    if (i == operands.size()) operands.push_back(leaf.node());
    operand_of_leaf[k++] = static_cast<std::uint32_t>(i);
  });
  return {std::make_shared<const fused_kernel<X>>(x, operand_of_leaf), std::move(operands)};
}

/// Whether expression type X can be written op by op as the graph's elementwise nodes: traced
/// leaves, scalars and op nodes over them. (A cast, a tensor moved into the expression, or a
/// lazy layout node cannot: X then runs as one external node.)
template <class X>
inline constexpr bool lowers_op_by_op_v = is_traced_leaf_v<X>;
template <class T>
inline constexpr bool lowers_op_by_op_v<scalar_node<T>> = !std::is_same_v<T, bool>;
template <class Op, class... Args>
inline constexpr bool lowers_op_by_op_v<op_node<Op, Args...>> = (lowers_op_by_op_v<Args> && ...);

/// Whether every value of scalar type T is exactly a double, the type of a graph constant (an
/// i64 or u64 scalar may not be: its expression's fit is checked when it is traced).
template <class T>
inline constexpr bool exact_in_double_v = std::is_floating_point_v<T> || sizeof(T) <= 4;

/// Whether every scalar of X's type is exactly a graph constant, whatever its value.
template <class X>
inline constexpr bool scalars_always_fit_v = true;
template <class T>
inline constexpr bool scalars_always_fit_v<scalar_node<T>> = exact_in_double_v<T>;
template <class Op, class... Args>
inline constexpr bool scalars_always_fit_v<op_node<Op, Args...>> =
    (scalars_always_fit_v<Args> && ...);

/// Whether every scalar of x is exactly a graph constant (a double).
template <class X>
bool scalars_fit_constants(const X& x) {
  if constexpr (scalars_always_fit_v<X>) {
    return true;
  } else if constexpr (requires { x.args(); }) {
    return unpack([](const auto&... a) { return (scalars_fit_constants(a) && ...); }, x.args());
  } else {
    using T = typename X::value_type;
    return static_cast<T>(static_cast<double>(x.value())) == x.value();
  }
}

/// x's ops as elementwise nodes of g, and its scalars as constants: the op bodies the typed
/// loop runs, so the bits are the typed layer's, and the graph's fusion passes see each op.
template <class X>
graph::value lower_op_by_op(graph::builder& g, const X& x) {
  if constexpr (is_traced_leaf_v<X>) {
    return x.node();
  } else if constexpr (requires { x.args(); }) {
    return unpack(
        [&](const auto&... a) {
          const std::array<graph::value, sizeof...(a)> args{lower_op_by_op(g, a)...};
          return g.elementwise(X::op_type::id, std::span<const graph::value>(args));
        },
        x.args());
  } else {
    return g.constant(static_cast<double>(x.value()), dtype_of<typename X::value_type>);
  }
}

/// Whether X is a cast<U>(e).
template <class X>
inline constexpr bool is_cast_node_v = false;
template <class U, class E>
inline constexpr bool is_cast_node_v<cast_node<U, E>> = true;

/// The builder a traced expression's leaves belong to.
template <class X>
graph::builder& builder_of(const X& x) {
  graph::builder* b = nullptr;
  for_each_traced(x, [&](const auto& leaf) {
    if (!b) b = &leaf.node().owner();
  });
  return *b;
}

/// The graph value of x: a traced value's own node; for an elementwise expression over traced
/// values, its ops as elementwise nodes, fused by the graph's passes with whatever reads or
/// feeds them; for a cast, a convert node of its operand's value; or, when the expression has a
/// cast inside or a tensor of its own (or an i64 scalar no double holds), one node that runs
/// its compile-time loop. Its axes may be in another order than X's: make_traced lines them up.
/// (The op-by-op form compiles no loop of X's own: a model file compiles in about half the time
/// and memory, and the group runs the runtime's fused kernels, native or interpreted.)
template <class X>
graph::value lower(const X& x) {
  if constexpr (is_traced_leaf_v<X>) {
    return x.node();
  } else if constexpr (is_cast_node_v<X>) {
    // A cast at the root: a convert node of its lowered operand (which has a VJP, where a cast
    // inside a larger expression runs in that expression's one node).
    const graph::value v = lower(x.operand());
    return v.owner().convert(v, dtype_of<typename X::value_type>);
  } else {
    // An error here means a value computed from no traced input (a captured tensor, a scalar)
    // was given to a graph op or returned from the traced function.
    static_assert(is_traced_v<X>,
                  "nax::jit: this value is not computed from the traced function's inputs");
    if constexpr (lowers_op_by_op_v<X> && scalars_always_fit_v<X>) {
      return lower_op_by_op(builder_of(x), x);
    } else {
      if constexpr (lowers_op_by_op_v<X>) {
        if (scalars_fit_constants(x)) return lower_op_by_op(builder_of(x), x);
      }
      auto [kernel, operands] = fused_kernel_of(x);
      graph::builder& g = operands[0].owner();
      const nax::shape result =
          traced_over<typename X::value_type, typename X::axes_type>::shape();
      return g.external(std::move(kernel), operands, result);
    }
  }
}

/// x as a traced value (a new fused node for an expression).
template <class X>
traced_of<typename X::value_type, typename X::axes_type> to_traced(const X& x) {
  if constexpr (is_traced_leaf_v<X>)
    return x;
  else
    return make_traced<typename X::value_type, typename X::axes_type>(lower(x));
}

}  // namespace nax::detail
