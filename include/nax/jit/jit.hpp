#pragma once
// nax::jit: the typed front end of the two-level JIT. It traces a function once with one
// nax::traced placeholder per nax::input, building a runtime graph (nax/graph/builder.hpp):
// dot, reductions, softmax and layer_norm become graph ops, and each maximal elementwise
// expression one node running its fused loop, instantiated at C++ compile time. It returns a
// callable that takes typed tensors or views, wraps them as dyn_tensors without copying, runs
// the executable (binding extraction, LRU cache, specialization happen there) and returns typed
// tensors, their type known at compile time from the trace.
//
//     auto dense = [](auto x, auto w, auto b) { return nax::gelu(nax::dot<hidden>(x, w) + b); };
//     auto mlp = nax::jit(dense, nax::input<float, batch, hidden>("x"),
//                         nax::input<float, hidden, out>("w"), nax::input<float, out>("b"));
//     nax::tensor<float, batch, out> y = mlp(x, w, b);

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/core/unpack.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/program.hpp>
#include <nax/jit/donate.hpp>
#include <nax/jit/fields_input.hpp>
#include <nax/jit/fused_expression.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/traced_creation.hpp>
#include <nax/jit/traced_cumsum.hpp>
#include <nax/jit/traced_ops.hpp>
#include <nax/jit/traced_take.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/runtime/compile.hpp>
#include <nax/typed/layout.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {

/// An input of a jitted function: its element type, its axes in order, and its name (used in
/// error messages and in to_dot).
template <class T, axis_type... Axes>
struct jit_input {
  using value_type = T;
  using traced_type = traced<T, Axes...>;
  using view_type = tensor_view<const T, Axes...>;
  using tensor_type = tensor<T, Axes...>;
  std::string name;
};

/// `nax::input<float, batch, hidden>("x")`: an input of nax::jit.
template <class T, axis_type... Axes>
jit_input<T, Axes...> input(std::string name) {
  return {std::move(name)};
}

/// An input that nax::value_and_grad gives no gradient (data, targets); to nax::jit, an input.
template <class T, axis_type... Axes>
struct jit_data : jit_input<T, Axes...> {};

/// `nax::data<float, batch, hidden>("x")`: see jit_data.
template <class T, axis_type... Axes>
jit_data<T, Axes...> data(std::string name) {
  return {{std::move(name)}};
}

namespace detail {

template <class X>
inline constexpr bool is_jit_input_v = false;
template <class T, class... A>
inline constexpr bool is_jit_input_v<jit_input<T, A...>> = true;
template <class T, class... A>
inline constexpr bool is_jit_input_v<jit_data<T, A...>> = true;
template <class P>
inline constexpr bool is_jit_input_v<jit_fields<P>> = true;

template <class X>
inline constexpr bool is_fields_input_v = false;
template <class P>
inline constexpr bool is_fields_input_v<jit_fields<P>> = true;

/// Input's placeholder: one graph parameter, or a struct's traced mirror (its paths appended to
/// `paths`).
template <class In>
typename In::traced_type placeholder(graph::builder& g, const In& in,
                                     std::vector<std::string>& paths) {
  if constexpr (is_fields_input_v<In>) {
    return fields_placeholder(g, in, paths);
  } else {
    return typename In::traced_type(g.parameter(
        in.name,
        traced_over<typename In::value_type, typename In::traced_type::axes_type>::shape()));
  }
}

/// The traced paths of each input (empty but for struct inputs), for the calls' checks.
template <std::size_t N>
using input_paths = std::array<std::vector<std::string>, N>;

template <class X>
inline constexpr bool is_tuple_v = false;
template <class... X>
inline constexpr bool is_tuple_v<std::tuple<X...>> = true;

// The traced function's results as a tuple of traced values (an expression becomes its node).
template <class R>
auto traced_results(const R& r) {
  if constexpr (is_tuple_v<R>) {
    return unpack([](const auto&... x) { return std::tuple(to_traced(x)...); }, r);
  } else {
    // An error here means the traced function returns something that is not computed from its
    // inputs: a traced value or expression, or a std::tuple of them.
    static_assert(is_traced_v<R>,
                  "nax::jit: the function must return a value computed from its inputs (or a "
                  "std::tuple of them)");
    return std::tuple(to_traced(r));
  }
}

template <class X>
struct tensor_of_traced;
template <class T, class... A>
struct tensor_of_traced<traced<T, A...>> {
  using type = tensor<T, A...>;
};
template <class Tuple>
struct tensors_of;
template <class... X>
struct tensors_of<std::tuple<X...>> {
  using type = std::tuple<typename tensor_of_traced<X>::type...>;
};

/// The element type and axes of a nax::tensor or nax::tensor_view (is_tensor false otherwise).
template <class X>
struct argument_parts {
  static constexpr bool is_tensor = false;
  using value_type = void;
  using axes_type = axes<>;
};
template <class T, class... A>
struct argument_parts<tensor<T, A...>> {
  static constexpr bool is_tensor = true;
  using value_type = T;
  using axes_type = axes<A...>;
};
template <class T, class... A>
struct argument_parts<tensor_view<T, A...>> {
  static constexpr bool is_tensor = true;
  using value_type = std::remove_const_t<T>;
  using axes_type = axes<A...>;
};

template <class L>
struct axis_names_of;
template <class... A>
struct axis_names_of<axes<A...>> {
  using type = error::axis_names<axis_diagnostic_name<A>...>;
};

/// Whether axis lists L and M hold the same names, in any order.
template <class L, class M>
inline constexpr bool same_axis_names_v = false;
template <class... A, class M>
inline constexpr bool same_axis_names_v<axes<A...>, M> =
    sizeof...(A) == boost::mp11::mp_size<M>::value && (axes_contains_v<M, A> && ...);

/// The first axis of L whose type differs from M's axis of the same name (void if none).
template <class L, class M>
using first_differing_axis = boost::mp11::mp_at<
    boost::mp11::mp_push_back<
        boost::mp11::mp_remove_if_q<L, boost::mp11::mp_bind_front<boost::mp11::mp_contains, M>>,
        void>,
    boost::mp11::mp_size_t<0>>;

/// The view of argument I, x, as input In reads it: x is a nax::tensor or nax::tensor_view of
/// In's element type whose axes are In's in any order (a permuted one is read through a
/// permuted view, which the call then copies dense).
template <std::size_t I, class In, class X>
typename In::view_type input_view(const X& x) {
  using view = typename In::view_type;
  using T = typename In::value_type;
  if constexpr (is_donated_v<X>) {
    return input_view<I, In>(x.argument);
  } else if constexpr (std::is_same_v<X, typename In::tensor_type>) {
    return x.view();
  } else if constexpr (std::is_same_v<X, view> ||
                       std::is_convertible_v<const X&, view>) {  // a mutable view
    return view(x);
  } else {
    using parts = argument_parts<X>;
    using want = typename view::axes_type;
    using got = typename parts::axes_type;
    if constexpr (!parts::is_tensor) {
      // An error here means argument I (from 0) of a nax::jit function is not a nax::tensor or
      // nax::tensor_view.
      static_assert(raise<error::jit_argument_is_not_a_tensor<I>>);
      return view(nullptr, typename view::extents_type());
    } else if constexpr (!std::is_same_v<typename parts::value_type, T>) {
      // An error here means argument I has another element type than its nax::input.
      static_assert(
          raise<error::jit_argument_element_type_differs_from_input<I, T,
                                                                    typename parts::value_type>>);
      return view(nullptr, typename view::extents_type());
    } else if constexpr (!same_axis_names_v<want, got>) {
      // An error here means argument I's axes are not its nax::input's, in any order: the
      // input's names come first, then the argument's.
      static_assert(
          raise<error::jit_argument_axes_differ_from_input<I, typename axis_names_of<want>::type,
                                                           typename axis_names_of<got>::type>>);
      return view(nullptr, typename view::extents_type());
    } else if constexpr (!std::is_void_v<first_differing_axis<want, got>>) {
      // An error here means an axis of argument I has its input's name but another extent
      // (static, dynamic or bounded, or another static value).
      static_assert(raise<error::jit_argument_axis_extent_differs_from_input<
                        I, axis_diagnostic_name<first_differing_axis<want, got>>>>);
      return view(nullptr, typename view::extents_type());
    } else {
      return [&]<class... A>(axes<A...>) { return view(nax::permute<A...>(x)); }(want{});
    }
  }
}

/// The typed results of a run, made once the executable knows their shapes (by name: the
/// trace made each result's axes the typed layer's, in its order).
template <class Results>
struct result_slots;
template <class... R>
struct result_slots<std::tuple<R...>> {
  std::tuple<std::optional<R>...> made;
  std::array<void*, sizeof...(R)> donors{};  // per result: a donated R to take, or null

  /// Result k takes t's memory if the executable updates input `flat` in place as result k and
  /// t has result k's type.
  template <class Tensor>
  void offer(const nax::executable& ex, std::size_t flat, Tensor& t) {
    boost::mp11::mp_for_each<boost::mp11::mp_iota_c<sizeof...(R)>>([&](auto i) {
      using T = std::tuple_element_t<decltype(i)::value, std::tuple<R...>>;
      if constexpr (std::is_same_v<T, Tensor>)
        if (ex.in_place_input(i) == flat) donors[i] = &t;
    });
  }

  static dyn_tensor make(void* self, std::size_t k, const nax::shape& s) {
    auto& slots = *static_cast<result_slots*>(self);
    dyn_tensor d;
    boost::mp11::mp_with_index<sizeof...(R)>(k, [&](auto i) {
      using T = std::tuple_element_t<decltype(i)::value, std::tuple<R...>>;
      auto& slot = std::get<decltype(i)::value>(slots.made);
      const auto e = extents_from_shape<typename T::extents_type>(s);
      if (T* donor = static_cast<T*>(slots.donors[i]); donor && donor->extents() == e)
        slot.emplace(std::move(*donor));
      else
        slot.emplace(e);
      d = to_dyn(*slot);
    });
    return d;
  }

  std::tuple<R...> take() {
    return unpack([](auto&... r) { return std::tuple<R...>(std::move(*r)...); }, made);
  }
};

}  // namespace detail

/// What nax::jit returns: a callable over typed tensors (see the file comment). Calls are
/// thread-safe (the executable is). Result is a nax::tensor, or a std::tuple of them when the
/// traced function returns a std::tuple.
template <class Result, class... Inputs>
class jit_function {
  using results = std::conditional_t<detail::is_tuple_v<Result>, Result, std::tuple<Result>>;
  static constexpr bool has_fields = (detail::is_fields_input_v<Inputs> || ...);

 public:
  using result_type = Result;

  explicit jit_function(nax::executable ex, detail::input_paths<sizeof...(Inputs)> paths = {})
      : ex_(std::move(ex)), paths_(std::move(paths)) {}

  /// Runs on tensors or views of the inputs' element types and axes, the axes in any order (an
  /// argument whose axes are permuted, or a strided view, is copied dense), and on structs of
  /// the type of a struct input. nax::shape_error naming the input and axis if the extents do
  /// not bind.
  template <class... X>
  requires(sizeof...(X) == sizeof...(Inputs)) Result operator()(const X&... xs) const {
    detail::result_slots<results> out;
    if constexpr ((detail::is_donated_v<X> || ...)) offer_donated(out, xs...);
    std::array<dyn_tensor, std::tuple_size_v<results>> out_dyn;
    run(std::span<dyn_tensor>(out_dyn), &detail::result_slots<results>::make, &out, xs...);
    if constexpr (detail::is_tuple_v<Result>)
      return out.take();
    else
      return std::move(*std::get<0>(out.made));
  }

  /// Runs on xs (as operator() takes them), the results made by make(self, k, shape).
  template <class... X>
  requires(sizeof...(X) == sizeof...(Inputs)) void run(
      std::span<dyn_tensor> out, dyn_tensor (*make)(void*, std::size_t, const nax::shape&),
      void* self, const X&... xs) const {
    // A strided view is copied dense, by the runtime's copy kernel.
    auto wrap = [](const auto& v) {
      using element = std::remove_const_t<typename std::remove_cvref_t<decltype(v)>::value_type>;
      return detail::dyn_over(shape_of<element>(v.extents()), v.data(),
                              std::span<const std::ptrdiff_t>(v.strides()), true);
    };
    if constexpr (!has_fields) {
      const std::tuple<typename Inputs::view_type...> views = [&]<std::size_t... I>(
          std::index_sequence<I...>) {
        return std::tuple<typename Inputs::view_type...>(detail::input_view<I, Inputs>(xs)...);
      }
      (std::index_sequence_for<Inputs...>{});
      std::array<dyn_tensor, sizeof...(Inputs)> in;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((in[I] = wrap(std::get<I>(views))), ...);
      }
      (std::index_sequence_for<Inputs...>{});
      ex_.run(std::span<const dyn_tensor>(in), out, make, self);
    } else {
      std::vector<dyn_tensor> in;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto one = [&]<std::size_t K, class In, class Arg>(std::integral_constant<std::size_t, K>,
                                                           std::type_identity<In>, const Arg& x) {
          if constexpr (detail::is_fields_input_v<In>) {
            // An error here means argument K of a nax::jit function made from nax::input(params)
            // is not a struct of params' type (or one donated with nax::donate).
            static_assert(std::is_same_v<std::remove_cvref_t<decltype(detail::undonated(x))>,
                                         typename In::tensor_type>,
                          "nax::jit: a struct input takes a struct of the type it was made from");
            detail::append_field_inputs(in, detail::undonated(x), K, paths_[K]);
          } else {
            in.push_back(wrap(detail::input_view<K, In>(x)));
          }
        };
        (one(std::integral_constant<std::size_t, I>{}, std::type_identity<Inputs>{}, xs), ...);
      }
      (std::index_sequence_for<Inputs...>{});
      ex_.run(std::span<const dyn_tensor>(in), out, make, self);
    }
  }

  /// The compiled graph: stats(), to_dot(), program(), pre_specialize().
  nax::executable& executable() noexcept { return ex_; }
  const nax::executable& executable() const noexcept { return ex_; }

 private:
  /// Offers each donated argument (nax::donate) to the result that updates it in place, unless
  /// its memory is also another argument's (that argument would read it while it is written).
  template <class... X>
  void offer_donated(detail::result_slots<results>& out, const X&... xs) const {
    std::vector<detail::byte_span> spans;  // every argument's bytes, in input order
    std::vector<std::size_t> first;        // per argument: its first input's position
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto one = [&]<std::size_t K, class In, class Arg>(std::integral_constant<std::size_t, K>,
                                                         std::type_identity<In>, const Arg& x) {
        first.push_back(spans.size());
        if constexpr (detail::is_fields_input_v<In>)
          nax::for_each_field(detail::undonated(x), [&](std::string_view, const auto& t) {
            spans.push_back(detail::bytes_of(t.view()));
          });
        else
          spans.push_back(detail::bytes_of(detail::input_view<K, In>(x)));
      };
      (one(std::integral_constant<std::size_t, I>{}, std::type_identity<Inputs>{}, xs), ...);
      // Input `at`'s tensor t, offered if no other input's memory overlaps it.
      auto offer_one = [&](std::size_t at, auto& t) {
        for (std::size_t j = 0; j < spans.size(); ++j)
          if (j != at && spans[j].overlaps(spans[at])) return;
        out.offer(ex_, at, t);
      };
      auto offer = [&]<std::size_t K, class Arg>(std::integral_constant<std::size_t, K>,
                                                 const Arg& x) {
        if constexpr (detail::is_donated_v<Arg>) {
          if constexpr (nax::field_struct<std::remove_cvref_t<decltype(x.argument)>>) {
            std::size_t at = first[K];
            nax::for_each_field(x.argument, [&](std::string_view, auto& t) { offer_one(at++, t); });
          } else {
            offer_one(first[K], x.argument);
          }
        }
      };
      (offer(std::integral_constant<std::size_t, I>{}, xs), ...);
    }
    (std::index_sequence_for<Inputs...>{});
  }

  mutable nax::executable ex_;  // runs are thread-safe
  detail::input_paths<sizeof...(Inputs)> paths_;
};

/// Traces f once on one nax::traced placeholder per input (in order) and compiles the graph it
/// builds; see the file comment. `options` go to nax::graph::compile.
template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto jit(graph::compile_options options, F&& f,
                                                       const Inputs&... inputs) {
  graph::builder g;
  detail::input_paths<sizeof...(Inputs)> paths;
  // Braced: the parameters are made in order.
  const std::tuple<typename Inputs::traced_type...> placeholders = [&]<std::size_t... I>(
      std::index_sequence<I...>) {
    return std::tuple<typename Inputs::traced_type...>{
        detail::placeholder(g, std::get<I>(std::tie(inputs...)), paths[I])...};
  }
  (std::index_sequence_for<Inputs...>{});
  const auto traced = detail::traced_results(core_detail::unpack(f, placeholders));
  using traced_tuple = std::remove_cvref_t<decltype(traced)>;
  using results = typename detail::tensors_of<traced_tuple>::type;
  using result = std::conditional_t<std::tuple_size_v<results> == 1,
                                    std::tuple_element_t<0, results>, results>;
  std::vector<graph::value> outputs;
  detail::unpack([&](const auto&... r) { (outputs.push_back(r.node()), ...); }, traced);
  return jit_function<result, Inputs...>(graph::compile(g, outputs, options), std::move(paths));
}

template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto jit(F&& f, const Inputs&... inputs) {
  return jit(graph::compile_options{}, std::forward<F>(f), inputs...);
}

}  // namespace nax
