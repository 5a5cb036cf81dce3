#pragma once
// nax::traced<T, Axes...>: what nax::jit passes to the function it traces, in place of each
// tensor. It is a leaf of the typed expression templates, so `gelu(x * 2 + b)` over traced values
// builds the very expression type it builds over tensors; the leaf stands for a node of the
// runtime graph being built, and its elements cannot be read. nax::dot, the reductions, softmax
// and layer_norm on traced values add graph nodes (traced_ops.hpp); an elementwise expression
// over them becomes one graph node running its fused loop (fused_expression.hpp).

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/core/unpack.hpp>
#include <nax/graph/builder.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {

/// A symbolic tensor of T over `Axes...` while nax::jit traces a function: a graph node with the
/// typed layer's static type. (The parameters are unconstrained so that the traced ops can match
/// every traced expression as one `N<P...>`; the axes are checked here.)
template <class T, class... Axes>
class traced : public detail::leaf_expression<traced<T, Axes...>> {
  static_assert((axis_type<Axes> && ...), "nax::traced<T, Axes...>: Axes must be nax::axis types");
  static_assert(check_unique_axes<axes<Axes...>>);

 public:
  using value_type = T;
  using axes_type = axes<Axes...>;
  using extents_type = nax::extents<Axes...>;
  using lane_type = detail::lane_of_value<T>;
  static constexpr std::size_t rank = sizeof...(Axes);

  explicit traced(graph::value v) : node_(v) {}

  /// The graph node this value is.
  const graph::value& node() const noexcept { return node_; }

  /// For the typed layer's extent checks while tracing: a static axis's extent, else 1 (no
  /// extent is known yet; the executable checks the real ones on every call).
  template <class A>
  std::size_t extent() const noexcept {
    if constexpr (A::is_static)
      return A::static_extent;
    else
      return 1;
  }

  // An error here means the traced function reads an element of a traced value: it has none
  // while nax::jit traces (the graph runs later). Compute with the ops; branch with nax::where.
  // (The return types are deduced, so that the body, with its message, is the first error.)
  template <class... I>
  auto operator()(I...) const {
    static_assert(sizeof...(I) != sizeof...(I),
                  "nax::jit: x(i, ...) reads an element of a traced value; it has none while "
                  "tracing");
    return T{};
  }
  // An error here means the traced function asks a traced value for its elements' address.
  template <int Never = 0>
  auto data() const {
    static_assert(Never != 0,
                  "nax::jit: x.data() of a traced value; it has no elements while "
                  "tracing");
    return static_cast<const T*>(nullptr);
  }

  template <class D>
  auto cursor() const {
    // An error here means a traced value was evaluated while tracing (stored in a nax::tensor,
    // say): keep intermediate results in `auto` variables; nax::eval(e) makes a graph node.
    static_assert(sizeof(D) == 0,
                  "nax::jit: a traced value has no elements to read while tracing; use auto");
  }

 private:
  graph::value node_;
};

namespace detail {

template <class X>
inline constexpr bool is_traced_leaf_v = false;
template <class T, class... A>
inline constexpr bool is_traced_leaf_v<traced<T, A...>> = true;

/// The traced leaves of expression type X, left to right (repeats included).
template <class X>
struct traced_leaves {
  using type = boost::mp11::mp_list<>;
};
template <class T, class... A>
struct traced_leaves<traced<T, A...>> {
  using type = boost::mp11::mp_list<traced<T, A...>>;
};
template <class Op, class... Args>
struct traced_leaves<op_node<Op, Args...>> {
  using type =
      boost::mp11::mp_append<boost::mp11::mp_list<>, typename traced_leaves<Args>::type...>;
};
template <class U, class E>
struct traced_leaves<cast_node<U, E>> : traced_leaves<E> {};

template <class X>
using traced_leaves_t = typename traced_leaves<std::remove_cvref_t<X>>::type;

template <class T, class... A>
struct reads_deferred<traced<T, A...>> : std::true_type {};

/// Whether X is a traced value or an expression that reads one.
template <class X>
inline constexpr bool is_traced_v = !boost::mp11::mp_empty<traced_leaves_t<X>>::value;

/// Calls f(leaf) for each traced leaf of x, in the order of traced_leaves.
template <class X, class F>
void for_each_traced(const X& x, F&& f) {
  if constexpr (is_traced_leaf_v<X>) {
    f(x);
  } else if constexpr (requires { x.args(); }) {
    unpack([&](const auto&... a) { (for_each_traced(a, f), ...); }, x.args());
  } else if constexpr (requires { x.operand(); }) {
    for_each_traced(x.operand(), f);
  }
}

template <class T, class L>
struct traced_over;
template <class T, class... A>
struct traced_over<T, axes<A...>> {
  using type = traced<T, A...>;
  static constexpr std::array<std::string_view, sizeof...(A)> names{A::name...};
  static nax::shape shape() { return shape_of<T, A...>(); }
};

/// The traced type of T over axis list L.
template <class T, class L>
using traced_of = typename traced_over<T, L>::type;

/// Node v checked against the typed layer's axes `names` and dtype `type` (its axes lined up in
/// that order if they are a permutation of them); `shape` gives the typed layer's shape for the
/// message when they disagree. (Not a template: make_traced's work for every result type.)
NAX_RUNTIME_INLINE graph::value typed_node(graph::value v, dtype type,
                                           std::span<const std::string_view> names,
                                           nax::shape (*shape)());

/// Graph node v as a traced value over axis list L. The graph's shape inference and the typed
/// layer's axis rules agree; this checks that they did (and lines up a mere permutation).
template <class T, class L>
traced_of<T, L> make_traced(graph::value v) {
  using over = traced_over<T, L>;
  return traced_of<T, L>(typed_node(std::move(v), dtype_of<T>, over::names, &over::shape));
}

}  // namespace detail
}  // namespace nax

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::detail {

NAX_RUNTIME_INLINE graph::value typed_node(graph::value v, dtype type,
                                           std::span<const std::string_view> names,
                                           nax::shape (*shape)()) {
  const nax::shape& s = v.shape();
  bool same = s.rank() == names.size() && s.dtype() == type;
  for (std::size_t k = 0; same && k < names.size(); ++k) same = s[k].name().view() == names[k];
  if (same) return v;
  if (s.rank() != names.size() || s.dtype() != type)
    throw_shape_error("nax::jit: the graph made ", s.to_string(), " where the typed layer has ",
                      shape().to_string());
  std::vector<graph::axis_ref> perm(names.begin(), names.end());
  return v.owner().transpose(v, perm);
}

}  // namespace nax::NAX_ISA::detail
#endif  // NAX_RUNTIME_DEFINITIONS
