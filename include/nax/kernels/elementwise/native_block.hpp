#pragma once
// What the native tier's generated code is written in (kernels/elementwise/native_source.hpp
// writes it; runtime/native/ compiles it): a whole elementwise program over one block, every
// instruction's value kept in registers, a chunk of `chunk` elements at a time. The ops are
// nax::ops' bodies, run as the interpreter's block bodies run them (bodies.hpp): value ops on
// vectors; ops that read or write bools on scalars, lane by lane; in the last, partial chunk the
// lanes past the block's end padded with 1 before each value op. So every element gets the bits
// the interpreter and the typed evaluator give it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::kernels::native {

/// A whole program over one block of n elements: in[i] points at input i's n elements (or at its
/// one value, if the program was generated with it splatted), out[o] at output o's; `stream`
/// non-zero: write the outputs with non-temporal stores (each out[o] then vector-aligned).
using block_fn = void (*)(std::size_t n, const void* const* in, void* const* out, int stream);

/// Elements per chunk: a vector of floats (two vectors per chunk spill registers in long
/// programs: a 12-op chain ran 1.3x slower).
inline constexpr std::size_t chunk = simd::width<float>;

/// A chunk of values of T (bool: one byte per element, 0 or 1).
template <class T>
struct chunk_of {
  static constexpr std::size_t vectors = chunk / simd::width<T>;
  simd::vec<T> v[vectors];
};
template <>
struct chunk_of<bool> {
  alignas(64) std::uint8_t b[chunk];
};

template <class T>
using storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

/// Chunk [i, i + m) of p (Tail: m < chunk, the lanes past m padded with 1, as the interpreter's
/// tail).
template <bool Tail, class T>
chunk_of<T> load(const storage<T>* p, std::size_t i, std::size_t m) {
  chunk_of<T> c;
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (Tail) {
      std::fill(c.b, c.b + chunk, std::uint8_t{1});
      std::copy_n(p + i, m, c.b);
    } else {
      std::copy_n(p + i, chunk, c.b);
    }
  } else if constexpr (Tail) {
    alignas(64) T tmp[chunk];
    std::fill(tmp, tmp + chunk, T(1));
    std::copy_n(p + i, m, tmp);
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      c.v[k] = simd::vec<T>::load_aligned(tmp + k * simd::width<T>);
  } else {
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      c.v[k] = simd::vec<T>::load_unaligned(p + i + k * simd::width<T>);
  }
  return c;
}

/// A chunk of one value everywhere.
template <class T>
chunk_of<T> splat(const storage<T>* p) {
  chunk_of<T> c;
  if constexpr (std::is_same_v<T, bool>) {
    std::fill(c.b, c.b + chunk, *p);
  } else {
    for (auto& v : c.v) v = simd::vec<T>(*p);
  }
  return c;
}

/// Writes chunk c to [i, i + m) of p.
template <bool Tail, class T>
void store(storage<T>* p, std::size_t i, std::size_t m, const chunk_of<T>& c, int stream) {
  if constexpr (std::is_same_v<T, bool>) {
    std::copy_n(c.b, Tail ? m : chunk, p + i);
  } else if constexpr (Tail) {
    alignas(64) T tmp[chunk];
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      c.v[k].store_aligned(tmp + k * simd::width<T>);
    std::copy_n(tmp, m, p + i);
  } else if (stream != 0) {
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      simd::stream_store(p + i + k * simd::width<T>, c.v[k]);
  } else {
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      c.v[k].store_unaligned(p + i + k * simd::width<T>);
  }
}

namespace detail {

template <class T>
struct lanes {
  alignas(64) storage<T> e[chunk];
  explicit lanes(const chunk_of<T>& c) {
    if constexpr (std::is_same_v<T, bool>)
      std::copy_n(c.b, chunk, e);
    else
      for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
        c.v[k].store_aligned(e + k * simd::width<T>);
  }
  auto operator[](std::size_t j) const {
    if constexpr (std::is_same_v<T, bool>)
      return e[j] != 0;
    else
      return e[j];
  }
};

template <class T>
chunk_of<T> from_lanes(const storage<T>* e) {
  chunk_of<T> c;
  if constexpr (std::is_same_v<T, bool>)
    std::copy_n(e, chunk, c.b);
  else
    for (std::size_t k = 0; k < chunk_of<T>::vectors; ++k)
      c.v[k] = simd::vec<T>::load_aligned(e + k * simd::width<T>);
  return c;
}

// The lanes past m set to 1 (the interpreter's tail pad), so that no op sees what an earlier op
// made of the padding (an integer division by zero, say).
template <class T>
chunk_of<T> padded(const chunk_of<T>& c, std::size_t m) {
  lanes<T> l(c);
  std::fill(l.e + m, l.e + chunk, storage<T>(1));
  return from_lanes<T>(l.e);
}

}  // namespace detail

/// Op over the chunks of its operands. R is the result's element type. Ops that read or write
/// bools run lane by lane on scalars, as the interpreter's ew_scalar_body; the others on vectors.
template <class Op, class R, bool Tail, class... T>
chunk_of<R> apply(std::size_t m, const chunk_of<T>&... x) {
  if constexpr (Op::yields_bool || Op::selects) {
    const std::tuple<detail::lanes<T>...> l{detail::lanes<T>(x)...};
    alignas(64) storage<R> out[chunk];
    for (std::size_t j = 0; j < chunk; ++j)
      out[j] = std::apply(
          [&](const auto&... a) { return static_cast<storage<R>>(Op::apply(a[j]...)); }, l);
    return detail::from_lanes<R>(out);
  } else if constexpr (Tail) {
    return apply<Op, R, false>(m, detail::padded(x, m)...);
  } else {
    chunk_of<R> r;
    for (std::size_t k = 0; k < chunk_of<R>::vectors; ++k)
      r.v[k] = simd::op_result(Op::apply(x.v[k]...));  // (rounded apart from the next op's)
    return r;
  }
}

/// Calls body(tail, i, m) for the chunks [i, i + m) of [0, n): tail a std::bool_constant, true
/// for a last chunk of m < chunk elements.
template <class Body>
void for_each_chunk(std::size_t n, Body&& body) {
  std::size_t i = 0;
  for (; i + chunk <= n; i += chunk) body(std::false_type{}, i, chunk);
  if (i < n) body(std::true_type{}, i, n - i);
}

}  // namespace nax::kernels::native
