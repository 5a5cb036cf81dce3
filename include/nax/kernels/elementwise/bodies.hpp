#pragma once
// The block bodies of the runtime elementwise kernel: one instruction over one block of a few
// hundred elements, as a plain function the planner resolves once per shape (op x dtype x which
// operands are one splatted value). Each runs its op's own body (nax::ops, ops/elementwise.hpp:
// the typed evaluator's) over the block, so an op gives the same bits in every layer.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/ops/dtype_rules.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels::detail {

/// One instruction over one block: n elements, one pointer per operand (a splatted operand's
/// points at its one value), the result's pointer.
using ew_fn = void (*)(std::size_t n, const void* const* args, void* out);

// bool is stored as one byte, 0 or 1.
template <class T>
using ew_storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

// Ops that read or write bools (comparisons, logic, where) run a scalar loop (ew_scalar_body).
template <class Op>
inline constexpr bool ew_scalar_op = Op::yields_bool || Op::selects;

// The type of operand J of Op over values T: where's mask is bool, the others are T.
template <class Op, class T, std::size_t J>
using ew_arg_t = std::conditional_t<Op::selects && J == 0, bool, T>;

/// Whether op Op runs on value type T (the type of its non-mask operands): the op's dtype rule
/// (ops/dtype_rules.hpp), asked at compile time.
template <class Op, class T>
inline constexpr bool ew_supports = [] {
  std::array<dtype, 3> types{};
  for (std::size_t j = 0; j < Op::arity; ++j)
    types[j] = Op::selects && j == 0 ? dtype::boolean : dtype_of<T>;
  return ops::check_dtypes(Op::id, std::span<const dtype>(types.data(), Op::arity)).ok();
}();

template <class T>
constexpr T ew_pad() {
  return T(1);  // a value every op takes (1 / 1, log 1, ...) for the lanes past a block's end
}

template <bool Splat, class T>
simd::vec<T> ew_load(const T* p, const simd::vec<T>& splat, std::size_t i) {
  if constexpr (Splat)
    return splat;
  else
    return simd::vec<T>::load_unaligned(p + i);
}

template <bool Splat, class T>
simd::vec<T> ew_load_tail(const T* p, const simd::vec<T>& splat, std::size_t i, std::size_t m) {
  if constexpr (Splat) {
    return splat;
  } else {
    alignas(64) T tmp[simd::width<T>];
    for (std::size_t j = 0; j < simd::width<T>; ++j) tmp[j] = j < m ? p[i + j] : ew_pad<T>();
    return simd::vec<T>::load_aligned(tmp);
  }
}

// Ops on values (f32, f64, i32, i64 in, the same out): the op's vector body, and for the tail a
// padded vector, so an element's value does not depend on where the block boundaries fall.
template <class Op, class T, unsigned Splat, std::size_t... J>
void ew_vector_body(std::size_t n, const void* const* args, void* out, std::index_sequence<J...>) {
  using V = simd::vec<T>;
  constexpr std::size_t w = V::size;
  const T* const p[] = {static_cast<const T*>(args[J])...};
  const V s[] = {V((Splat >> J & 1u) != 0 ? *p[J] : T(0))...};
  T* const o = static_cast<T*>(out);
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    Op::apply(ew_load<(Splat >> J & 1u) != 0>(p[J], s[J], i)...).store_unaligned(o + i);
  if (i < n) {
    const std::size_t m = n - i;
    alignas(64) T res[w];
    Op::apply(ew_load_tail<(Splat >> J & 1u) != 0>(p[J], s[J], i, m)...).store_aligned(res);
    std::copy_n(res, m, o + i);
  }
}

template <class A, class S>
A ew_read(const S& v) {
  if constexpr (std::is_same_v<A, bool>)
    return v != 0;
  else
    return v;
}

// Ops that read or write bools (comparisons, logic, where): a scalar loop over the block with the
// op's scalar body. Vectorizing them would mean widening and narrowing masks between one byte
// per element and the lanes of T; the compiler vectorizes some of these loops itself.
template <class Op, class T, unsigned Splat, std::size_t... J>
void ew_scalar_body(std::size_t n, const void* const* args, void* out, std::index_sequence<J...>) {
  using R = std::conditional_t<Op::yields_bool, bool, T>;
  const std::tuple<const ew_storage<ew_arg_t<Op, T, J>>*...> p{
      static_cast<const ew_storage<ew_arg_t<Op, T, J>>*>(args[J])...};
  auto* const o = static_cast<ew_storage<R>*>(out);
  for (std::size_t i = 0; i < n; ++i)
    o[i] = static_cast<ew_storage<R>>(
        Op::apply(ew_read<ew_arg_t<Op, T, J>>(std::get<J>(p)[(Splat >> J & 1u) != 0 ? 0 : i])...));
}

/// The block body of Op over values T, operand J read as one splatted value where bit J of
/// Splat is set.
template <class Op, class T, unsigned Splat>
void ew_body(std::size_t n, const void* const* args, void* out) {
  using seq = std::make_index_sequence<Op::arity>;
  if constexpr (ew_scalar_op<Op>)
    ew_scalar_body<Op, T, Splat>(n, args, out, seq{});
  else
    ew_vector_body<Op, T, Splat>(n, args, out, seq{});
}

/// Whether op `op` has a body that reads the operands of `mask` splatted: binary ops on values,
/// one operand (a scalar, a bias along rows, `x * 2`). Other splatted operands are filled into a
/// block buffer: fewer bodies to compile, and they are rare or cheap next to the op.
inline bool ew_takes_splat(ops::id op, unsigned mask) {
  return mask == 0 || (ops::arity(op) == 2 && mask != 3 &&
                       ops::with_op(op, [](auto o) { return !ew_scalar_op<decltype(o)>; }));
}

/// The body of op `op` over values of dtype `t` with splat mask `splat` (resolved once, at plan
/// time); nullptr if the op does not take `t`. Precondition: ew_takes_splat accepted the mask.
inline ew_fn ew_resolve(ops::id op, dtype t, unsigned splat) {
  return ops::with_op(op, [&](auto o) -> ew_fn {
    using Op = decltype(o);
    auto pick = [&]<class T>() -> ew_fn {
      if constexpr (!ew_supports<Op, T>)
        return nullptr;
      else if constexpr (Op::arity == 2 && !ew_scalar_op<Op>)
        return splat == 1   ? &ew_body<Op, T, 1>
               : splat == 2 ? &ew_body<Op, T, 2>
                            : &ew_body<Op, T, 0>;
      else
        return &ew_body<Op, T, 0>;
    };
    switch (t) {
      case dtype::f32: return pick.template operator()<float>();
      case dtype::f64: return pick.template operator()<double>();
      case dtype::i32: return pick.template operator()<std::int32_t>();
      case dtype::i64: return pick.template operator()<std::int64_t>();
      case dtype::boolean: return pick.template operator()<bool>();
      case dtype::u8: return nullptr;
    }
    return nullptr;
  });
}

}  // namespace nax::kernels::detail
