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
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/isa.hpp>
#include <nax/graph/grad.hpp>
#include <nax/jit/jit.hpp>

namespace nax::NAX_ISA {

/// What a value_and_grad function returns: the loss, and the gradients of the differentiated
/// inputs in their order (`auto [loss, grads] = step(...)`).
template <class Loss, class Grads>
struct value_and_grads {
  Loss value;
  Grads grads;
};

namespace detail {

// Whether input In gets a gradient: not declared with nax::data, and of floating elements.
template <class In>
inline constexpr bool differentiated_v = std::is_floating_point_v<typename In::value_type>;
template <class T, class... A>
inline constexpr bool differentiated_v<jit_data<T, A...>> = false;

template <class In>
using differentiated = std::bool_constant<differentiated_v<In>>;

template <class In>
using tensor_of_input = typename In::tensor_type;

}  // namespace detail

/// The callable value_and_grad returns: jit_function's, its results split into the loss and
/// the gradients.
template <class Loss, class Grads, class... Inputs>
class value_and_grad_function {
  using all = decltype(std::tuple_cat(std::declval<std::tuple<Loss>>(), std::declval<Grads>()));

 public:
  explicit value_and_grad_function(nax::executable ex) : fn_(std::move(ex)) {}

  template <class... X>
  requires(sizeof...(X) == sizeof...(Inputs)) value_and_grads<Loss, Grads>
  operator()(const X&... xs) const {
    all r = fn_(xs...);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return value_and_grads<Loss, Grads>{std::move(std::get<0>(r)),
                                          Grads(std::move(std::get<I + 1>(r))...)};
    }
    (std::make_index_sequence<std::tuple_size_v<Grads>>{});
  }

  nax::executable& executable() noexcept { return fn_.executable(); }
  const nax::executable& executable() const noexcept { return fn_.executable(); }

 private:
  jit_function<all, Inputs...> fn_;
};

/// Traces f once (as nax::jit does), adds the gradients of its loss by the differentiated
/// inputs (see the file comment) and compiles both; `options` go to nax::graph::compile.
template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto value_and_grad(graph::compile_options options,
                                                                  F&& f, const Inputs&... inputs) {
  graph::builder g;
  const std::tuple<typename Inputs::traced_type...> placeholders{
      typename Inputs::traced_type(g.parameter(
          inputs.name, detail::traced_over<typename Inputs::value_type,
                                           typename Inputs::traced_type::axes_type>::shape()))...};
  const auto traced = detail::traced_results(std::apply(f, placeholders));
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
  std::vector<graph::value> wrt;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((detail::differentiated_v<Inputs> ? wrt.push_back(std::get<I>(placeholders).node()) : void()),
     ...);
  }
  (std::index_sequence_for<Inputs...>{});
  const graph::value loss = std::get<0>(traced).node();
  std::vector<graph::value> outputs{loss};
  for (const graph::value& d : graph::grad(loss, wrt)) outputs.push_back(d);
  using gradients = boost::mp11::mp_rename<
      boost::mp11::mp_transform<
          detail::tensor_of_input,
          boost::mp11::mp_copy_if<boost::mp11::mp_list<Inputs...>, detail::differentiated>>,
      std::tuple>;
  return value_and_grad_function<loss_type, gradients, Inputs...>(
      graph::compile(g, outputs, options));
}

template <class F, class... Inputs>
requires(detail::is_jit_input_v<Inputs>&&...) auto value_and_grad(F&& f, const Inputs&... inputs) {
  return value_and_grad(graph::compile_options{}, std::forward<F>(f), inputs...);
}

}  // namespace nax
