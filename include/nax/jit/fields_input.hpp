#pragma once
// A struct of parameters as one input of nax::jit and nax::value_and_grad (typed/fields.hpp):
//
//     auto step = nax::value_and_grad(loss, nax::input(params), nax::data<int, seq>("tokens"));
//     auto [loss, grads] = step(params, tokens);   // grads: the struct's type
//
// The function is traced on the struct's mirror of traced values (the same fields and sizes; so
// it takes it as `const auto&`); each tensor is a graph input named by its path
// (`layers.1.attn.wq`, after the input's name and a '.' if it has one). A call takes a struct of
// the same type whose vectors have the sizes traced.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/graph/builder.hpp>
#include <nax/jit/traced.hpp>
#include <nax/jit/typed_dyn.hpp>
#include <nax/typed/fields.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {

/// The Map of nax::mapped_t whose leaves are traced values.
struct traced_leaf_map {
  template <class T, class... A>
  using leaf = traced<T, A...>;
};

/// A struct of parameters as an input of nax::jit (see the file comment). It refers to the
/// instance it was made from until nax::jit or nax::value_and_grad has traced the function.
template <field_struct P>
struct jit_fields {
  using tensor_type = P;
  using traced_type = mapped_t<P, traced_leaf_map>;
  const P* instance;
  std::string name;
};

/// `nax::input(params)`: the struct params as an input of nax::jit, its tensors named by their
/// field paths (after `name` and a '.' when a name is given).
template <field_struct P>
jit_fields<P> input(const P& params, std::string name = {}) {
  return {&params, std::move(name)};
}

namespace detail {

inline std::string field_input_name(const std::string& name, std::string_view path) {
  return name.empty() ? std::string(path) : name + "." + std::string(path);
}

/// The traced mirror of a struct input, one graph parameter per tensor in field order; the
/// tensors' paths are appended to `paths`.
template <class P>
mapped_t<P, traced_leaf_map> fields_placeholder(graph::builder& g, const jit_fields<P>& in,
                                              std::vector<std::string>& paths) {
  return map_fields<traced_leaf_map>(*in.instance, [&](std::string_view path, const auto& t) {
    using X = std::remove_cvref_t<decltype(t)>;
    using over = traced_over<typename X::value_type, typename X::axes_type>;
    paths.emplace_back(path);
    return typename over::type(g.parameter(field_input_name(in.name, path), over::shape()));
  });
}

/// Appends a dyn_tensor over each tensor of x (argument `arg` of a call) to `in`, checking that
/// x's tensors are those traced (`paths`, in order): a std::vector of another size is a
/// nax::shape_error naming the first path that differs.
template <class P, class Out>
void append_field_inputs(Out& in, const P& x, std::size_t arg,
                         const std::vector<std::string>& paths) {
  std::size_t k = 0;
  nax::for_each_field(x, [&](std::string_view path, const auto& t) {
    if (k >= paths.size() || paths[k] != path)
      nax::detail::throw_shape_error(
          "nax::jit: argument ", arg, " has the tensor '", path, "' where the struct traced had ",
          k < paths.size() ? "'" + paths[k] + "'" : std::string("no more tensors"),
          " (a std::vector of another size?)");
    in.push_back(to_dyn(t));
    ++k;
  });
  if (k != paths.size())
    nax::detail::throw_shape_error("nax::jit: argument ", arg, " has no tensor '", paths[k],
                                   "', which the struct traced had (a std::vector of another "
                                   "size?)");
}

}  // namespace detail
}  // namespace nax::NAX_ISA
