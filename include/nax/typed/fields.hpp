#pragma once
// Parameters as structs: NAX_FIELDS(a, b, ...) in a struct's body lists its fields, which may be
// nax::tensors, other such structs, or std::vector / std::array of them, nested at will:
//
//     struct attention {
//       nax::tensor<float, model, proj> wq, wk, wv;
//       nax::tensor<float, proj, model> wo;
//       NAX_FIELDS(wq, wk, wv, wo)
//     };
//     struct gpt {
//       nax::tensor<float, vocab, model> embed;
//       std::vector<attention> layers;
//       NAX_FIELDS(embed, layers)
//     };
//     nax::for_each_field(params, [](std::string_view path, auto& t) { ... });  // "layers.1.wq"
//
// A tensor's path is its field names and element indices joined by '.'. The struct stays an
// aggregate. NAX_FIELDS also declares, for the library, the struct's mirror over other leaves
// (`nax::mapped_t<S, Map>`: the same fields, each tensor replaced by Map's leaf for it): nax::jit
// traces a function on the mirror of traced values, an optimizer keeps its state in the mirror of
// its per-tensor states, and both keep the field names.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/tensor.hpp>

// NAX_DETAIL_FOR_EACH(m, a, b, c) is m(a) m(b) m(c): up to 256 arguments (rescans by the four
// nested expansions), with __VA_OPT__ ending the recursion.
#define NAX_DETAIL_PARENS ()
#define NAX_DETAIL_EXPAND(...) \
  NAX_DETAIL_EXPAND3(NAX_DETAIL_EXPAND3(NAX_DETAIL_EXPAND3(NAX_DETAIL_EXPAND3(__VA_ARGS__))))
#define NAX_DETAIL_EXPAND3(...) \
  NAX_DETAIL_EXPAND2(NAX_DETAIL_EXPAND2(NAX_DETAIL_EXPAND2(NAX_DETAIL_EXPAND2(__VA_ARGS__))))
#define NAX_DETAIL_EXPAND2(...) \
  NAX_DETAIL_EXPAND1(NAX_DETAIL_EXPAND1(NAX_DETAIL_EXPAND1(NAX_DETAIL_EXPAND1(__VA_ARGS__))))
#define NAX_DETAIL_EXPAND1(...) __VA_ARGS__
#define NAX_DETAIL_FOR_EACH(m, ...) \
  __VA_OPT__(NAX_DETAIL_EXPAND(NAX_DETAIL_FOR_EACH_STEP(m, __VA_ARGS__)))
#define NAX_DETAIL_FOR_EACH_STEP(m, a, ...) \
  m(a) __VA_OPT__(NAX_DETAIL_FOR_EACH_AGAIN NAX_DETAIL_PARENS(m, __VA_ARGS__))
#define NAX_DETAIL_FOR_EACH_AGAIN() NAX_DETAIL_FOR_EACH_STEP

#define NAX_DETAIL_FIELD_NAME(f) #f,
#define NAX_DETAIL_FIELD_TYPE(f) using nax_field_type_##f = decltype(f);
#define NAX_DETAIL_MAPPED_FIELD(f) ::nax::mapped_t<nax_field_type_##f, NaxMap> f;
#define NAX_DETAIL_ZIP_FIELD(f) nax_f(#f, f, nax_ys.f...);
#define NAX_DETAIL_BUILD_FIELD(f) nax_f(::std::string_view(#f), f),

// The members NAX_FIELDS declares (in the struct and in its mirror): the field names in order;
// nax_zip_fields(f, ys...), which calls f(name, field, ys.field...) for each field in order (ys
// are structs with the same field names: mirrors); and nax_build<M>(f), an M braced from
// f(name, field) in field order; nax_field_count(). Plain calls, no tuple of references: each
// costs the compiler one instantiation per field type. (It ends with the definition of a
// function that is not a template, so that a semicolon after NAX_FIELDS(...) is allowed, and
// none is needed.)
#define NAX_DETAIL_FIELD_MEMBERS(...)                                      \
  static constexpr std::string_view nax_field_names[] = {                  \
      NAX_DETAIL_FOR_EACH(NAX_DETAIL_FIELD_NAME, __VA_ARGS__)};            \
  template <class NaxF, class... NaxY>                                     \
  void nax_zip_fields(NaxF&& nax_f, NaxY&... nax_ys) {                     \
    NAX_DETAIL_FOR_EACH(NAX_DETAIL_ZIP_FIELD, __VA_ARGS__)                 \
  }                                                                        \
  template <class NaxF, class... NaxY>                                     \
  void nax_zip_fields(NaxF&& nax_f, NaxY&... nax_ys) const {               \
    NAX_DETAIL_FOR_EACH(NAX_DETAIL_ZIP_FIELD, __VA_ARGS__)                 \
  }                                                                        \
  template <class NaxM, class NaxF>                                        \
  NaxM nax_build(NaxF&& nax_f) const {                                     \
    return NaxM{NAX_DETAIL_FOR_EACH(NAX_DETAIL_BUILD_FIELD, __VA_ARGS__)}; \
  }                                                                        \
  static constexpr std::size_t nax_field_count() noexcept { return std::size(nax_field_names); }

/// Lists a struct's fields (see the file comment): NAX_FIELDS(wq, wk, wv, wo), after them, in a
/// struct at namespace scope (a local class cannot hold the members it declares).
#define NAX_FIELDS(...)                                                   \
  NAX_DETAIL_FOR_EACH(NAX_DETAIL_FIELD_TYPE, __VA_ARGS__)                 \
  template <class NaxMap>                                                 \
  struct nax_mapped {                                                     \
    NAX_DETAIL_FOR_EACH(NAX_DETAIL_MAPPED_FIELD, __VA_ARGS__)             \
    NAX_DETAIL_FIELD_MEMBERS(__VA_ARGS__)                                 \
  };                                                                      \
  NAX_DETAIL_FIELD_MEMBERS(__VA_ARGS__)

namespace nax::NAX_ISA {

/// A struct whose fields NAX_FIELDS lists (or the mirror of one).
template <class S>
concept field_struct = requires {
  S::nax_field_names;
};

namespace detail {

template <class X>
inline constexpr bool is_std_vector_v = false;
template <class X, class A>
inline constexpr bool is_std_vector_v<std::vector<X, A>> = true;
template <class X>
inline constexpr bool is_std_array_v = false;
template <class X, std::size_t N>
inline constexpr bool is_std_array_v<std::array<X, N>> = true;

template <class X, class Map>
struct mapped_impl {
  // An error here means a field listed by NAX_FIELDS is not a nax::tensor, a struct with
  // NAX_FIELDS, or a std::vector or std::array of them.
  static_assert(sizeof(X) == 0,
                "NAX_FIELDS: a field must be a nax::tensor, a struct with NAX_FIELDS, or a "
                "std::vector or std::array of them");
};
template <class T, class... A, class Map>
struct mapped_impl<tensor<T, A...>, Map> {
  using type = typename Map::template leaf<T, A...>;
};
template <class X, class Al, class Map>
struct mapped_impl<std::vector<X, Al>, Map> {
  using type = std::vector<typename mapped_impl<X, Map>::type>;
};
template <class X, std::size_t N, class Map>
struct mapped_impl<std::array<X, N>, Map> {
  using type = std::array<typename mapped_impl<X, Map>::type, N>;
};
template <field_struct S, class Map>
struct mapped_impl<S, Map> {
  using type = typename S::template nax_mapped<Map>;
};

}  // namespace detail

/// X's mirror over Map's leaves: each nax::tensor<T, A...> in X becomes
/// `Map::template leaf<T, A...>`; structs, vectors and arrays keep their fields and sizes.
template <class X, class Map>
using mapped_t = typename detail::mapped_impl<X, Map>::type;

namespace detail {

// The path's steps and the walk's one error: out of line (one copy per program, not inlined at
// each of the walks' many instantiations: a model file compiles them once).
[[gnu::noinline]] inline void append_path(std::string& path, std::string_view part) {
  if (!path.empty()) path.push_back('.');
  path.append(part);
}
[[gnu::noinline]] inline void append_index(std::string& path, std::size_t i) {
  append_path(path, std::to_string(i));
}
[[noreturn, gnu::noinline]] inline void throw_element_count(const char* what,
                                                            const std::string& path,
                                                            std::size_t got, std::size_t want) {
  nax::detail::throw_shape_error(what, ": '", path.empty() ? "(the whole)" : path, "' has ", got,
                                 " elements where ", want, " were expected");
}

/// Walks x and the same-shaped ys (mirrors of x's type, or x's type) in step, calling
/// f(path, x_leaf, y_leaf...) at each leaf in field order. Vectors of different sizes are a
/// nax::shape_error naming the path and both sizes (`what` names the caller).
template <class F, class X, class... Y>
void walk_fields(std::string& path, const char* what, F&& f, X& x, Y&... ys) {
  using plain = std::remove_const_t<X>;
  if constexpr (field_struct<plain>) {
    x.nax_zip_fields(
        [&](std::string_view name, auto& xf, auto&... yf) {
          const std::size_t at = path.size();
          append_path(path, name);
          walk_fields(path, what, f, xf, yf...);
          path.resize(at);
        },
        ys...);
  } else if constexpr (is_std_vector_v<plain> || is_std_array_v<plain>) {
    if constexpr (is_std_vector_v<plain>) {
      auto check = [&](const auto& y) {
        if (y.size() != x.size()) throw_element_count(what, path, y.size(), x.size());
      };
      (check(ys), ...);
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t at = path.size();
      append_index(path, i);
      walk_fields(path, what, f, x[i], ys[i]...);
      path.resize(at);
    }
  } else {
    f(std::string_view(path), x, ys...);
  }
}

/// The mirror of x over Map's leaves, each leaf make(path, x_leaf), built in field order.
template <class Map, class X, class Make>
mapped_t<X, Map> build_mirror(std::string& path, const X& x, Make& make) {
  using M = mapped_t<X, Map>;
  auto at_part = [&](const auto& part, const auto& field) {  // a field's name or an index
    const std::size_t at = path.size();
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(part)>, std::size_t>)
      append_index(path, part);
    else
      append_path(path, part);
    auto r = build_mirror<Map>(path, field, make);
    path.resize(at);
    return r;
  };
  if constexpr (field_struct<X>) {
    return x.template nax_build<M>(at_part);  // (braced: in field order)
  } else if constexpr (is_std_vector_v<X>) {
    M out;
    out.reserve(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out.push_back(at_part(i, x[i]));
    return out;
  } else if constexpr (is_std_array_v<X>) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return M{at_part(std::size_t{I}, x[I])...};
    }
    (std::make_index_sequence<std::tuple_size_v<X>>{});
  } else {
    return make(std::string_view(path), x);
  }
}

}  // namespace detail

/// Calls f(path, tensor) for every tensor of params, in field order (`layers.1.attn.wq`); the
/// tensor is const if params is.
template <class P, class F>
void for_each_field(P& params, F&& f) {
  std::string path;
  detail::walk_fields(path, "nax::for_each_field", f, params);
}

/// How many tensors params holds.
template <class P>
std::size_t field_count(const P& params) {
  std::size_t n = 0;
  for_each_field(params, [&](std::string_view, const auto&) { ++n; });
  return n;
}

/// The mirror of params over Map's leaves (nax::mapped_t<P, Map>), each made by
/// make(path, tensor) in field order.
template <class Map, class P, class Make>
mapped_t<P, Map> map_fields(const P& params, Make&& make) {
  std::string path;
  return detail::build_mirror<Map>(path, params, make);
}

/// The Map whose leaves are the tensors themselves: mapped_t<P, tensor_leaf_map> is P's mirror of
/// nax::tensors (for a struct, its nax_mapped: use P itself where P is wanted).
struct tensor_leaf_map {
  template <class T, class... A>
  using leaf = tensor<T, A...>;
};

}  // namespace nax::NAX_ISA
