#pragma once
// Optimizers over typed tensors: a parameter updated in place from its gradient, one pass over
// the parameter, its gradient and its state (kernels/optimizer.hpp), as PyTorch's torch.optim
// SGD, Adam and AdamW compute it.
//
//     nax::optim::adamw opt{.lr = 1e-3, .weight_decay = 0.01};
//     auto s = opt.init(w);                          // the moments, zeros like w
//     auto [loss, grads] = step(x, y, w);            // nax::value_and_grad
//     opt.step(w, std::get<0>(grads), s);            // w, s updated in place
//
// Parameters as a struct (typed/fields.hpp) step as a whole: `auto st = opt.init(params);
// opt.step(params, grads, st);`, the state a mirror of params (the same fields, each tensor's
// state in its place). Every extent is checked before anything is written.

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/kernels/optimizer.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/fields.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::optim {
namespace detail {

// The kernels write w.size() elements of every tensor they are given: a gradient or a state of
// other extents (a state made for another parameter) is an error before anything is written.
// `path` names the tensor within a struct of parameters (empty for one tensor).
template <class T, class... A>
void check_extents(const char* op, const tensor<T, A...>& w, const tensor<T, A...>& other,
                   const char* what, std::string_view path = {}) {
  std::size_t i = 0;
  auto same = [&](std::string_view name) {
    const std::size_t a = w.extents().extent(i), b = other.extents().extent(i);
    ++i;
    if (a != b)
      nax::detail::throw_shape_error("nax::optim::", op, ": ", path.empty() ? "" : "'",
                                     path, path.empty() ? "" : "': ", "axis '", name, "' is ",
                                     a, " in the parameter but ", b, " in ", what);
  };
  (same(A::name), ...);
}

/// A struct (or vector, or array) of parameters rather than one tensor.
template <class P>
concept parameter_tree =
    field_struct<P> || nax::detail::is_std_vector_v<P> || nax::detail::is_std_array_v<P>;

/// Opt's states as a Map of nax::mapped_t: each tensor's state in its place.
template <class Opt>
struct state_leaf_map {
  template <class T, class... A>
  using leaf = typename Opt::template state<T, A...>;
};

/// opt.step over every floating tensor of a struct: all extents checked first (naming the
/// tensor's path), then each tensor stepped in field order.
template <class Opt, class P, class S>
void step_fields(const Opt& opt, const char* op, const char* what, P& params, const P& grads,
                 S& states) {
  std::string path;
  // Tensors of integers (token tables, masks) are not trained: they are skipped.
  auto check = [&]<class T, class... A>(std::string_view at, const tensor<T, A...>& w,
                                        const auto& g, const auto& s) {
    if constexpr (std::is_floating_point_v<T>) {
      check_extents(op, w, g, "its gradient", at);
      s.for_each_moment([&](const auto& m, const char* what) { check_extents(op, w, m, what, at); });
    }
  };
  nax::detail::walk_fields(path, what, check, std::as_const(params), grads, std::as_const(states));
  auto update = [&]<class T, class... A>(std::string_view, tensor<T, A...>& w, const auto& g,
                                         auto& s) {
    if constexpr (std::is_floating_point_v<T>) opt.step(w, g, s);
  };
  nax::detail::walk_fields(path, what, update, params, grads, states);
}

}  // namespace detail

/// Stochastic gradient descent with momentum (torch.optim.SGD).
struct sgd {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;

  /// A parameter's state: its velocity (used with momentum).
  template <class T, class... A>
  struct state {
    tensor<T, A...> velocity;
    std::size_t steps = 0;
    template <class F>
    void for_each_moment(F&& f) const {
      f(velocity, "its state's velocity");
    }
  };

  template <class T, class... A>
  state<T, A...> init(const tensor<T, A...>& w) const {
    return {nax::zeros_like(w), 0};
  }

  /// w -= lr times the gradient (with momentum and weight decay as torch.optim.SGD).
  /// Throws std::invalid_argument for Nesterov momentum without momentum or with dampening
  /// (as torch.optim.SGD does).
  template <class T, class... A>
  void step(tensor<T, A...>& w, const tensor<T, A...>& grad, state<T, A...>& s) const {
    if (nesterov && (momentum <= 0 || dampening != 0))
      throw std::invalid_argument(nax::detail::message(
          "nax::optim::sgd: Nesterov momentum needs a momentum above 0 and no dampening (momentum ",
          momentum, ", dampening ", dampening, ")"));
    detail::check_extents("sgd", w, grad, "its gradient");
    detail::check_extents("sgd", w, s.velocity, "its state's velocity");
    kernels::sgd_coefficients c{lr, momentum, dampening, weight_decay, nesterov, s.steps == 0};
    kernels::sgd_update(w.data(), grad.data(), s.velocity.data(), w.size(), c);
    ++s.steps;
  }

  /// The states of a struct of parameters: a mirror of it (see the file comment).
  template <detail::parameter_tree P>
  mapped_t<P, detail::state_leaf_map<sgd>> init(const P& params) const {
    return map_fields<detail::state_leaf_map<sgd>>(
        params, [&](std::string_view, const auto& w) { return init(w); });
  }

  /// Steps every tensor of params by its gradient in grads (a struct of the same type).
  template <detail::parameter_tree P>
  void step(P& params, const P& grads, mapped_t<P, detail::state_leaf_map<sgd>>& s) const {
    detail::step_fields(*this, "sgd", "nax::optim::sgd", params, grads, s);
  }
};

/// Adam (Decoupled false: torch.optim.Adam, weight decay added to the gradient) and AdamW
/// (Decoupled: torch.optim.AdamW, weight decay applied to the parameter apart from the moments).
template <bool Decoupled>
struct adam_family {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weight_decay = Decoupled ? 0.01 : 0.0;  // PyTorch's defaults

  /// A parameter's state: its first and second moments, and how many steps it has taken.
  template <class T, class... A>
  struct state {
    tensor<T, A...> m, v;
    std::size_t steps = 0;
    template <class F>
    void for_each_moment(F&& f) const {
      f(m, "its state's first moment");
      f(v, "its state's second moment");
    }
  };

  template <class T, class... A>
  state<T, A...> init(const tensor<T, A...>& w) const {
    return {nax::zeros_like(w), nax::zeros_like(w), 0};
  }

  template <class T, class... A>
  void step(tensor<T, A...>& w, const tensor<T, A...>& grad, state<T, A...>& s) const {
    const char* op = Decoupled ? "adamw" : "adam";
    detail::check_extents(op, w, grad, "its gradient");
    detail::check_extents(op, w, s.m, "its state's first moment");
    detail::check_extents(op, w, s.v, "its state's second moment");
    ++s.steps;
    const double t = static_cast<double>(s.steps);
    const kernels::adam_coefficients c{lr,
                                       beta1,
                                       beta2,
                                       eps,
                                       weight_decay,
                                       Decoupled,
                                       1 - std::pow(beta1, t),
                                       1 - std::pow(beta2, t)};
    kernels::adam_update(w.data(), grad.data(), s.m.data(), s.v.data(), w.size(), c);
  }

  /// The states of a struct of parameters: a mirror of it (see the file comment).
  template <detail::parameter_tree P>
  mapped_t<P, detail::state_leaf_map<adam_family>> init(const P& params) const {
    return map_fields<detail::state_leaf_map<adam_family>>(
        params, [&](std::string_view, const auto& w) { return init(w); });
  }

  /// Steps every tensor of params by its gradient in grads (a struct of the same type).
  template <detail::parameter_tree P>
  void step(P& params, const P& grads, mapped_t<P, detail::state_leaf_map<adam_family>>& s) const {
    detail::step_fields(*this, Decoupled ? "adamw" : "adam",
                        Decoupled ? "nax::optim::adamw" : "nax::optim::adam", params, grads, s);
  }
};

using adam = adam_family<false>;
using adamw = adam_family<true>;

}  // namespace nax::optim
