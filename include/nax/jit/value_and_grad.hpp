#pragma once
// nax::value_and_grad: a typed function and its gradients, compiled as one graph. The function is
// traced as nax::jit traces it (one placeholder per input); it returns a loss (rank 0, float or
// double); nax::graph::grad adds the gradients by every input but those declared with
// nax::data (and those of integer elements), and the loss and the gradients are compiled
// together, so the backward is fused, specialized and cached with the forward it reads.
//
//     auto step = nax::value_and_grad(
//         [](auto x, auto y, auto w) { ... return nax::mean<batch>(nax::sum<out>(e * e)); },
//         nax::data<float, batch, in>("x"), nax::data<float, batch, out>("y"),
//         nax::input<float, in, out>("w"));
//     auto [loss, grads] = step(x, y, w);   // loss: tensor<float>; std::get<0>(grads): [in, out]

#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/isa.hpp>
#include <nax/core/unpack.hpp>
#include <nax/graph/grad.hpp>
#include <nax/jit/fields_input.hpp>
#include <nax/jit/jit.hpp>
#include <nax/typed/fields.hpp>

namespace nax::NAX_ISA {

/// What a value_and_grad function returns: the loss, and the gradients of the differentiated
/// inputs in their order (`auto [loss, grads] = step(...)`).
template <class Loss, class Grads>
struct value_and_grads {
  Loss value;
  Grads grads;
};

namespace detail {

// Whether input In gets a gradient: not declared with nax::data, and of floating elements; a
// struct input gets one for each of its floating tensors.
template <class In>
inline constexpr bool differentiated_v = std::is_floating_point_v<typename In::value_type>;
template <class T, class... A>
inline constexpr bool differentiated_v<jit_data<T, A...>> = false;
template <class P>
inline constexpr bool differentiated_v<jit_fields<P>> = true;

template <class In>
using differentiated = std::bool_constant<differentiated_v<In>>;
template <class In>
using is_fields_input = std::bool_constant<is_fields_input_v<In>>;
template <class X>
using is_field_struct = std::bool_constant<field_struct<X>>;
template <class In>
using differentiated_tensor = std::bool_constant<differentiated_v<In> && !is_fields_input_v<In>>;

template <class In>
using tensor_of_input = typename In::tensor_type;

template <class L>
using tuple_of = boost::mp11::mp_rename<L, std::tuple>;

// The gradients' types, in the inputs' order; the tensors' alone; the structs' alone.
template <class... Inputs>
using gradient_list = boost::mp11::mp_transform<
    tensor_of_input, boost::mp11::mp_copy_if<boost::mp11::mp_list<Inputs...>, differentiated>>;
template <class... Inputs>
using tensor_gradients = tuple_of<boost::mp11::mp_transform<
    tensor_of_input,
    boost::mp11::mp_copy_if<boost::mp11::mp_list<Inputs...>, differentiated_tensor>>>;
template <class... Inputs>
using struct_gradients = tuple_of<boost::mp11::mp_transform<
    tensor_of_input,
    boost::mp11::mp_copy_if<boost::mp11::mp_list<Inputs...>, is_fields_input>>>;

// What `grads` is: the struct itself when a struct is the one input differentiated, else a
// tuple of the gradients in the inputs' order.
template <class L>
struct grads_of {
  using type = tuple_of<L>;
};
template <field_struct P>
struct grads_of<boost::mp11::mp_list<P>> {
  using type = P;
};

// Result slot k of a run: a typed tensor, made when the run knows its shape.
struct leaf_slot {
  void* tensor;
  dyn_tensor (*make)(void* tensor, const nax::shape& s);
};
template <class T, class... A>
dyn_tensor make_leaf(void* p, const nax::shape& s) {
  auto& t = *static_cast<tensor<T, A...>*>(p);
  t = tensor<T, A...>(extents_from_shape<nax::extents<A...>>(s));
  return to_dyn(t);
}

// The results of a value_and_grad run: the loss and the tensor inputs' gradients (Fixed), then
// one slot per floating tensor of the struct inputs.
template <class Fixed>
struct gradient_results {
  result_slots<Fixed> fixed;
  std::vector<leaf_slot> leaves;

  static dyn_tensor make(void* self, std::size_t k, const nax::shape& s) {
    auto& r = *static_cast<gradient_results*>(self);
    constexpr std::size_t n = std::tuple_size_v<Fixed>;
    if (k < n) return result_slots<Fixed>::make(&r.fixed, k, s);
    return r.leaves[k - n].make(r.leaves[k - n].tensor, s);
  }
};

/// dst's vectors resized as src's, recursively (dst's tensors left as they are).
template <class X>
void resize_like(X& dst, const X& src) {
  if constexpr (field_struct<X>) {
    dst.nax_zip_fields([](std::string_view, auto& d, const auto& s) { resize_like(d, s); }, src);
  } else if constexpr (is_std_vector_v<X> || is_std_array_v<X>) {
    if constexpr (is_std_vector_v<X>) dst.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) resize_like(dst[i], src[i]);
  }
}

/// Appends a slot for each floating tensor of g to `leaves`.
template <class P>
void gradient_slots(P& g, std::vector<leaf_slot>& leaves) {
  nax::for_each_field(g, [&]<class T, class... A>(std::string_view, tensor<T, A...>& t) {
    if constexpr (std::is_floating_point_v<T>) leaves.push_back({&t, &make_leaf<T, A...>});
  });
}

}  // namespace detail

/// The callable value_and_grad returns: a jit_function over the inputs, its results split into
/// the loss and the gradients (a struct input's gradient made as a struct of its type).
template <class Loss, class Grads, class... Inputs>
class value_and_grad_function {
  using fixed = decltype(std::tuple_cat(std::declval<std::tuple<Loss>>(),
                                        std::declval<detail::tensor_gradients<Inputs...>>()));
  using structs = detail::struct_gradients<Inputs...>;

 public:
  explicit value_and_grad_function(nax::executable ex,
                                   detail::input_paths<sizeof...(Inputs)> paths = {})
      : fn_(std::move(ex), std::move(paths)) {}

  template <class... X>
  requires(sizeof...(X) == sizeof...(Inputs)) value_and_grads<Loss, Grads>
  operator()(const X&... xs) const {
    detail::gradient_results<fixed> out;
    structs gs;  // the struct inputs' gradients, shaped as the arguments
    if constexpr (std::tuple_size_v<structs> > 0) {
      std::size_t s = 0;
      auto shape_one = [&]<class In, class A>(std::type_identity<In>, const A& x) {
        if constexpr (detail::is_fields_input_v<In> && std::is_same_v<A, typename In::tensor_type>) {
          boost::mp11::mp_with_index<std::tuple_size_v<structs>>(s++, [&](auto k) {
            auto& g = std::get<decltype(k)::value>(gs);
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(g)>, A>) {
              detail::resize_like(g, x);
              detail::gradient_slots(g, out.leaves);
            }
          });
        }
      };
      (shape_one(std::type_identity<Inputs>{}, xs), ...);
    }
    std::vector<dyn_tensor> out_dyn(std::tuple_size_v<fixed> + out.leaves.size());
    fn_.run(std::span<dyn_tensor>(out_dyn), &detail::gradient_results<fixed>::make, &out, xs...);
    fixed r = out.fixed.take();
    if constexpr (field_struct<Grads>) {
      return {std::move(std::get<0>(r)), std::move(std::get<0>(gs))};
    } else {
      // The gradients in the inputs' order, each from the tensors' results or the structs'.
      using list = detail::gradient_list<Inputs...>;
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto pick = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) -> auto&& {
          using before = boost::mp11::mp_take_c<list, J>;
          constexpr std::size_t structs_before =
              boost::mp11::mp_count_if<before, detail::is_field_struct>::value;
          if constexpr (field_struct<boost::mp11::mp_at_c<list, J>>)
            return std::move(std::get<structs_before>(gs));
          else
            return std::move(std::get<1 + J - structs_before>(r));
        };
        return value_and_grads<Loss, Grads>{std::move(std::get<0>(r)),
                                            Grads(pick(std::integral_constant<std::size_t, I>{})...)};
      }
      (std::make_index_sequence<boost::mp11::mp_size<list>::value>{});
    }
  }

  nax::executable& executable() noexcept { return fn_.executable(); }
  const nax::executable& executable() const noexcept { return fn_.executable(); }

 private:
  jit_function<fixed, Inputs...> fn_;
};

/// Traces f once (as nax::jit does), adds the gradients of its loss by the differentiated
/// inputs (see the file comment) and compiles both; `options` go to nax::graph::compile.
template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto value_and_grad(graph::compile_options options,
                                                                  F&& f, const Inputs&... inputs) {
  graph::builder g;
  detail::input_paths<sizeof...(Inputs)> paths;
  const std::tuple<typename Inputs::traced_type...> placeholders = [&]<std::size_t... I>(
      std::index_sequence<I...>) {
    return std::tuple<typename Inputs::traced_type...>{
        detail::placeholder(g, std::get<I>(std::tie(inputs...)), paths[I])...};
  }
  (std::index_sequence_for<Inputs...>{});
  const auto traced = detail::traced_results(core_detail::unpack(f, placeholders));
  using traced_tuple = std::remove_cvref_t<decltype(traced)>;
  // An error here means the function given to nax::value_and_grad returns more than one value:
  // it returns its loss alone.
  static_assert(std::tuple_size_v<traced_tuple> == 1,
                "nax::value_and_grad: the function returns one value, its loss");
  using loss_type = std::tuple_element_t<0, typename detail::tensors_of<traced_tuple>::type>;
  // An error here means the loss has axes: reduce it to a scalar (nax::sum, nax::mean).
  static_assert(loss_type::rank == 0, "nax::value_and_grad: the loss must have no axes");
  static_assert(std::is_floating_point_v<typename loss_type::value_type>,
                "nax::value_and_grad: the loss must be float or double");
  // The gradients by the tensor inputs first, then by the structs' floating tensors (the order
  // of the run's results: value_and_grad_function).
  std::vector<graph::value> wrt;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto tensor_one = [&]<class In>(std::type_identity<In>, const auto& p) {
      if constexpr (detail::differentiated_tensor<In>::value) wrt.push_back(p.node());
    };
    (tensor_one(std::type_identity<Inputs>{}, std::get<I>(placeholders)), ...);
    auto struct_one = [&]<class In>(std::type_identity<In>, const auto& p) {
      if constexpr (detail::is_fields_input_v<In>)
        nax::for_each_field(p, [&]<class T, class... A>(std::string_view, const nax::traced<T, A...>& t) {
          if constexpr (std::is_floating_point_v<T>) wrt.push_back(t.node());
        });
    };
    (struct_one(std::type_identity<Inputs>{}, std::get<I>(placeholders)), ...);
  }
  (std::index_sequence_for<Inputs...>{});
  const graph::value loss = std::get<0>(traced).node();
  std::vector<graph::value> outputs{loss};
  for (const graph::value& d : graph::grad(loss, wrt)) outputs.push_back(d);
  using gradients = typename detail::grads_of<detail::gradient_list<Inputs...>>::type;
  return value_and_grad_function<loss_type, gradients, Inputs...>(
      graph::compile(g, outputs, options), std::move(paths));
}

template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto value_and_grad(F&& f, const Inputs&... inputs) {
  return value_and_grad(graph::compile_options{}, std::forward<F>(f), inputs...);
}

}  // namespace nax
