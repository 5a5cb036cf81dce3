#pragma once
// Row readers of the typed layer's leaves: contiguous, strided, and one splatted value.

#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/kernels/row_io.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

// A cursor positioned at a row hands out a reader: a small value (pointers, a stride, splatted
// values) with `load(i)` (the vector at positions [i, i + width) of the row) and `scalar(i)`.
// Kernels copy it into a local, so the compiler keeps its pointers in registers: a store to the
// destination cannot alias a local whose address is never taken.

/// How the rows of every non-broadcast leaf are laid out: any stride, or unit stride.
enum class row_access { strided, contiguous };

/// A leaf read at unit stride.
template <class L, class T>
struct contiguous_reader {
  const T* p;
  loaded_t<L, T> load(std::size_t i) const { return simd::load<loaded_t<L, T>>(p + i); }
  /// A row kernel's wider vector W of T (load_as, kernels/row_io.hpp).
  template <class W>
  W load_as(std::size_t i) const {
    return simd::load<W>(p + i);
  }
  T scalar(std::size_t i) const { return p[i]; }
};

/// A leaf read at any stride (0 through a splat buffer, 1 directly, else gathered: a branch the
/// predictor gets right within a row).
template <class L, class T>
struct strided_reader {
  const T* p;
  std::ptrdiff_t step;
  loaded_t<L, T> load(std::size_t i) const {
    const T* at = p + static_cast<std::ptrdiff_t>(i) * step;
    if (step > 1) [[unlikely]]
      return load_partial<L>(at, step, loaded_t<L, T>::size);
    return simd::load<loaded_t<L, T>>(at);
  }
  template <class W>
  W load_as(std::size_t i) const {
    const T* at = p + static_cast<std::ptrdiff_t>(i) * step;
    if (step > 1) [[unlikely]]
      return load_partial_as<W>(at, step, W::size);
    return simd::load<W>(at);
  }
  T scalar(std::size_t i) const { return p[static_cast<std::ptrdiff_t>(i) * step]; }
};

/// One value in every position (a scalar, or a leaf broadcast along the row): splatted once.
template <class L, class T>
struct splat_reader {
  T value;
  loaded_t<L, T> v;
  explicit splat_reader(T x) : value(x), v(x) {}
  loaded_t<L, T> load(std::size_t) const { return v; }
  template <class W>
  W load_as(std::size_t) const {
    return W(value);
  }
  T scalar(std::size_t) const { return value; }
};

}  // namespace nax::detail
