#pragma once
// Every op of the list (ops/list.hpp) in every layer that runs it: the typed eager expression
// (nax::<op>, generated from the list) and a one-instruction elementwise kernel plan give the
// op's scalar body's bits, element for element, for every element type its operand class takes,
// with tensor operands and with the last operand a scalar (splatted). The ops come from the list
// itself: a new op is tested here with no new test code.
//
// Each op's typed expressions are compiled for five element types, twice: part<K, N>() checks
// the ops whose position in the list is K modulo N, and part_K.cpp runs part K, so that the
// parts compile in parallel (tests/ops/every_op/part_*.cpp).
#include <nax/ops/list.hpp>

#include <nax/kernels/elementwise.hpp>
#include <nax/ops/dtype_rules.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/tensor.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "support/bits.hpp"

namespace every_op {

using n_ax = nax::axis<"n">;
namespace ops = nax::ops;

// Elements that span a few vectors, a partial one and more than one kernel block.
constexpr std::size_t length = 1037;

// The element type of operand J of Op over values T: a select op's mask is bool.
template <class Op, class T, std::size_t J>
using operand_t = std::conditional_t<Op::selects && J == 0, bool, T>;
template <class Op, class T>
using result_t = std::conditional_t<Op::yields_bool, bool, T>;

// Whether Op takes values T (the dtype rule, at compile time).
template <class Op, class T>
constexpr bool takes() {
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    return ops::check_dtypes(Op::id, {nax::dtype_of<operand_t<Op, T, J>>...}).ok();
  }
  (std::make_index_sequence<Op::arity>{});
}

// Values every op takes: floating ones in [0.625, 1.875] (log, sqrt, pow and 1 / x are defined;
// steps of 1/8 give ties for the comparisons), integers in +-[1, 9] (no division by zero).
template <class T>
T value(std::mt19937& rng) {
  std::uniform_int_distribution<int> k(1, 11), digit(1, 9), coin(0, 1);
  if constexpr (std::is_same_v<T, bool>)
    return coin(rng) != 0;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(4 + k(rng)) / T(8);
  else
    return static_cast<T>(digit(rng) * (coin(rng) != 0 ? 1 : -1));
}

template <class T>
nax::tensor<T, n_ax> random_tensor(std::mt19937& rng) {
  nax::tensor<T, n_ax> t(n_ax{length});
  for (T& x : t) x = value<T>(rng);
  return t;
}

using nax_test::same_bits;

// Element x, every digit shown (values that differ in their last bit print differently).
template <class T>
std::string show(T x) {
  std::ostringstream os;
  os << std::setprecision(std::numeric_limits<T>::max_digits10) << +x;
  return os.str();
}

// Checks `got` against `want` bit for bit, naming the first mismatches.
template <class R>
void check_bits(std::string_view layer, const nax::tensor<R, n_ax>& got,
                const nax::tensor<R, n_ax>& want) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < length; ++i)
    if (!same_bits(got.data()[i], want.data()[i]) && bad++ < 3)
      FAIL_CHECK(layer, ": element ", i, " is ", show(got.data()[i]), ", the scalar body gives ",
                 show(want.data()[i]));
  CHECK(bad == 0);
}

// Op over values T, its last operand a tensor or (Scalar) one value, in both layers.
template <class Op, class T, bool Scalar, class Typed, std::size_t... J>
void check_layers(Typed typed, std::mt19937& rng, std::index_sequence<J...>) {
  using R = result_t<Op, T>;
  constexpr std::size_t last = Op::arity - 1;
  const std::tuple<nax::tensor<operand_t<Op, T, J>, n_ax>...> x{
      random_tensor<operand_t<Op, T, J>>(rng)...};
  // Operand J at element i: the scalar operand is element 0 of its tensor everywhere.
  auto at = [&]<std::size_t I>(std::size_t i) {
    return std::get<I>(x).data()[Scalar && I == last ? 0 : i];
  };
  auto operand = [&]<std::size_t I>() -> decltype(auto) {
    if constexpr (Scalar && I == last)
      return std::get<I>(x).data()[0];
    else
      return std::get<I>(x);
  };

  nax::tensor<R, n_ax> want(n_ax{length});
  for (std::size_t i = 0; i < length; ++i)
    want.data()[i] = static_cast<R>(Op::apply(at.template operator()<J>(i)...));

  const nax::tensor<R, n_ax> eager = typed(operand.template operator()<J>()...);
  check_bits("typed", eager, want);

  const nax::dtype types[] = {nax::dtype_of<operand_t<Op, T, J>>...};
  const std::ptrdiff_t strides[] = {(Scalar && J == last ? 0 : 1)...};
  const std::size_t extents[] = {length};
  const auto plan = nax::kernels::plan_elementwise_op(Op::id, types, extents, strides);
  REQUIRE(plan.output_dtypes.size() == 1);
  CHECK(plan.output_dtypes[0] == nax::dtype_of<R>);
  const void* in[] = {std::get<J>(x).data()...};
  nax::tensor<R, n_ax> out(n_ax{length});
  void* outs[] = {out.data()};
  nax::kernels::run_elementwise(plan, in, outs);
  check_bits("kernel", out, want);
}

// Op in both layers over every element type it takes; `typed` calls nax::<op>.
template <class Op, class Typed>
void check_op(Typed typed) {
  std::mt19937 rng(static_cast<unsigned>(Op::id) + 1);
  std::size_t types = 0;
  auto over = [&]<class T>() {
    if constexpr (takes<Op, T>()) {
      CAPTURE(nax::name(nax::dtype_of<T>));
      ++types;
      check_layers<Op, T, false>(typed, rng, std::make_index_sequence<Op::arity>{});
      if constexpr (Op::arity > 1)
        check_layers<Op, T, true>(typed, rng, std::make_index_sequence<Op::arity>{});
    }
  };
  over.template operator()<float>();
  over.template operator()<double>();
  over.template operator()<std::int32_t>();
  over.template operator()<std::int64_t>();
  over.template operator()<bool>();
  CHECK(types > 0);  // every op takes one of them
}

// The ops whose position in the list is K modulo N, each in both layers over its types.
template <std::size_t K, std::size_t N>
void part() {
  std::size_t visited = 0;
#define NAX_CHECK_OP(op, arity, operands, result)                      \
  if constexpr (static_cast<std::size_t>(ops::op::id) % N == K) {      \
    CAPTURE(ops::op::name);                                            \
    check_op<ops::op>([](const auto&... x) { return nax::op(x...); }); \
    ++visited;                                                         \
  }
  NAX_ELEMENTWISE_OPS(NAX_CHECK_OP)
#undef NAX_CHECK_OP
  CHECK(visited == (ops::count + N - 1 - K) / N);
}

}  // namespace every_op
