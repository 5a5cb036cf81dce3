#pragma once
// nax::donate: an argument of a nax::jit function whose memory a result may take. A result that
// is a dynamic_update_slice of that input, which nothing else in the function reads (a KV cache
// written at one position), is then computed in the argument's own buffer: the call writes the
// update alone instead of copying the whole tensor into a new one, and the returned tensor owns
// that buffer. The argument is left empty (moved from) when its memory was taken, unchanged
// otherwise; either way it is not to be read again, only assigned (typically the result). A
// struct of tensors (NAX_FIELDS) is donated tensor by tensor.
//
//     auto [y, k] = step(x, nax::donate(cache), at);
//     cache = std::move(k);   // the same memory, the new position written

#include <cstddef>
#include <functional>
#include <type_traits>

#include <nax/core/isa.hpp>
#include <nax/typed/fields.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA {

/// What nax::donate returns: a reference to the donated tensor or struct (see the file comment).
template <class Argument>
struct donated {
  Argument& argument;
};

/// Marks t as an argument a nax::jit function's result may take the memory of.
template <class T, class... A>
donated<tensor<T, A...>> donate(tensor<T, A...>& t) noexcept {
  return {t};
}
/// The same for each tensor of a struct of tensors (NAX_FIELDS).
template <field_struct S>
donated<S> donate(S& s) noexcept {
  return {s};
}

namespace detail {

template <class X>
inline constexpr bool is_donated_v = false;
template <class Argument>
inline constexpr bool is_donated_v<donated<Argument>> = true;

/// An argument as the function reads it: a donated one's tensor or struct.
template <class X>
const X& undonated(const X& x) noexcept {
  return x;
}
template <class X>
const X& undonated(const donated<X>& x) noexcept {
  return x.argument;
}

/// The bytes a tensor or view spans, [first, last), from its extents and strides (empty: none).
struct byte_span {
  const std::byte* first = nullptr;
  const std::byte* last = nullptr;
  bool overlaps(const byte_span& o) const noexcept {
    return first != last && o.first != o.last && std::less<>{}(first, o.last) &&
           std::less<>{}(o.first, last);
  }
};
template <class V>
byte_span bytes_of(const V& v) {
  using element = std::remove_const_t<typename V::value_type>;
  if (v.size() == 0) return {};
  std::ptrdiff_t lo = 0, hi = 0;
  const auto& strides = v.strides();
  for (std::size_t i = 0; i < strides.size(); ++i) {
    const std::ptrdiff_t reach = static_cast<std::ptrdiff_t>(v.extent(i) - 1) * strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto* base = reinterpret_cast<const std::byte*>(v.data());
  return {base + lo * static_cast<std::ptrdiff_t>(sizeof(element)),
          base + (hi + 1) * static_cast<std::ptrdiff_t>(sizeof(element))};
}

}  // namespace detail
}  // namespace nax::NAX_ISA
