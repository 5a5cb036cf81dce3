#pragma once
// Bit-for-bit equality, the check of every test that says two tiers, widths or runs agree
// (docs/architecture.md: fused and unfused execution give the same bits). Written once for the
// three kinds of operand the tests compare:
// - a dyn_tensor (anything with shape(), bytes() and data()): the same shape and the same bytes;
// - a contiguous range (a typed tensor, a std::vector: size() and data()): the same elements
//   (and the same extents(), where it has them);
// - one value: its object representation (bool: one byte).
// Empty operands compare equal without reading their data (memcmp's pointers must not be null,
// and an empty tensor's data is).

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace nax_test {

template <class X>
concept bytes_with_shape = requires(const X& x) {
  x.shape();
  x.bytes();
  x.data();
};

template <class X>
concept contiguous_elements = !bytes_with_shape<X> && requires(const X& x) {
  x.size();
  x.data();
};

template <bytes_with_shape X>
bool same_bits(const X& a, const X& b) {
  return a.shape() == b.shape() && a.bytes() == b.bytes() &&
         (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

template <contiguous_elements X>
bool same_bits(const X& a, const X& b) {
  using element = std::remove_cvref_t<decltype(*a.data())>;
  if constexpr (requires { a.extents() == b.extents(); })
    if (!(a.extents() == b.extents())) return false;  // (a typed tensor: its axes' extents too)
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(element)) == 0);
}

template <class X>
concept single_value =
    std::is_trivially_copyable_v<X> && !bytes_with_shape<X> && !contiguous_elements<X>;

template <single_value T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace nax_test
