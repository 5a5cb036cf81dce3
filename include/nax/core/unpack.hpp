#pragma once
// unpack(f, t): f(get<0>(t), ..., get<n-1>(t)), as std::apply does, in one function template
// instead of std::apply's chain of four (apply, __apply_impl, __invoke, __invoke_impl) for each
// call, and without its noexcept clause (libstdc++ computes is_nothrow_invocable for it). The
// typed layer unpacks the operands of every node of every expression it compiles, and each link
// of that chain is one more function for the compiler to instantiate, inline and, at -O0, emit.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace nax::core_detail {

template <class F, class Tuple>
constexpr decltype(auto) unpack(F&& f, Tuple&& t) {
  constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<Tuple>>;
  using std::get;
  if constexpr (n == 0) {
    return static_cast<F&&>(f)();
  } else if constexpr (n == 1) {
    return static_cast<F&&>(f)(get<0>(static_cast<Tuple&&>(t)));
  } else if constexpr (n == 2) {
    return static_cast<F&&>(f)(get<0>(static_cast<Tuple&&>(t)), get<1>(static_cast<Tuple&&>(t)));
  } else if constexpr (n == 3) {
    return static_cast<F&&>(f)(get<0>(static_cast<Tuple&&>(t)), get<1>(static_cast<Tuple&&>(t)),
                               get<2>(static_cast<Tuple&&>(t)));
  } else {
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      return static_cast<F&&>(f)(get<I>(static_cast<Tuple&&>(t))...);
    }
    (std::make_index_sequence<n>{});
  }
}

}  // namespace nax::core_detail
