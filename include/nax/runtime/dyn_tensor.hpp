#pragma once
// nax::dyn_tensor: the runtime graph's data type: a concrete named shape (with its dtype) over a
// 64-byte aligned buffer whose ownership is shared, so that copies are cheap. Typed tensors
// convert to and from it without copying (nax/jit/typed_dyn.hpp: nax::to_dyn, nax::typed_view),
// checked by axis name.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA {

namespace detail {

/// `f32[batch=2, 3]`: unlike shape::to_string, which prints a static dim by its extent alone, a
/// dyn_tensor's dims are all static and the names are what tells them apart.
inline std::string concrete_string(const shape& s) {
  std::string out(name(s.dtype()));
  out += '[';
  for (std::size_t i = 0; i < s.rank(); ++i) {
    if (i) out += ", ";
    const dim& d = s[i];
    if (d.has_name()) {
      out += d.name().view();
      out += '=';
    }
    out += d.to_string();
  }
  return out += ']';
}

/// Elements of a concrete shape; shape_error on a dim with no extent, or on a size in bytes that
/// overflows std::size_t (a wrapped-around count would allocate too small a buffer).
inline std::size_t concrete_elements(const shape& s) {
  for (std::size_t i = 0; i < s.rank(); ++i) {
    const dim& d = s[i];
    if (d.is_static()) continue;
    if (d.has_name())
      throw_shape_error("dyn_tensor needs a concrete shape: dimension ", i, " (axis '",
                        d.name().view(), "') of ", s.to_string(),
                        " has no extent (give one: nax::dim::named(\"", d.name().view(), "\", n))");
    throw_shape_error("dyn_tensor needs a concrete shape: dimension ", i, " of ", s.to_string(),
                      " has no extent");
  }
  for (const dim& d : s.dims())
    if (d.extent() == 0) return 0;
  std::size_t n = 1;
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / size_of(s.dtype());
  for (const dim& d : s.dims()) {
    if (d.extent() > limit / n)
      throw_shape_error("dyn_tensor: ", concrete_string(s), " has more bytes than fit in size_t");
    n *= d.extent();
  }
  return n;
}

}  // namespace detail

/// A tensor whose dtype and shape are known at run time: what nax's runtime graph takes and
/// returns. Every dim has an extent; names are kept and are what typed views are checked by.
///
///     nax::dyn_tensor x(nax::shape::make(nax::dtype::f32, {nax::dim::named("batch", 2), 3}));
///     float* p = x.data<float>();                    // checked: the dtype
///     auto v = nax::typed_view<float, batch, hidden>(x);   // (jit/typed_dyn.hpp) zero copy
///
/// Copies share the buffer (clone() copies it). Constness is that of the handle, not of the
/// buffer: a copy of a const dyn_tensor may write to it.
class dyn_tensor {
 public:
  /// A scalar f32 zero (nax::shape() is a scalar f32), so that containers can default-construct.
  dyn_tensor() : dyn_tensor(nax::shape()) {}

  /// A new zeroed buffer, 64-byte aligned. nax::shape_error naming the dim if one has no extent.
  explicit dyn_tensor(nax::shape s)
      : shape_(std::move(s)), size_(detail::concrete_elements(shape_)) {
    const std::size_t n = bytes();
    if (n == 0) return;
    detail::aligned_ptr<std::byte> p = detail::allocate_aligned<std::byte>(n);
    std::memset(p.get(), 0, n);
    data_ = std::shared_ptr<std::byte>(std::move(p));
  }

  /// A view of memory the caller owns and keeps alive while any copy of the result is used: no
  /// copy, no ownership. nax::shape_error if `data` is null (for a non-empty shape) or is not
  /// aligned for the dtype.
  static dyn_tensor wrap(nax::shape s, void* data) {
    const std::size_t n = detail::concrete_elements(s);
    if (n != 0) check_wrapped(s, data);
    // An aliasing shared_ptr with no control block: it points at `data`, keeps nothing alive.
    std::shared_ptr<std::byte> view(std::shared_ptr<std::byte>(), static_cast<std::byte*>(data));
    return dyn_tensor(std::move(s), n, std::move(view));
  }

  /// A tensor over memory that `owner` keeps alive (no copy): copies of the result share it.
  /// nax::shape_error as for wrap().
  static dyn_tensor share(nax::shape s, std::shared_ptr<std::byte> owner) {
    const std::size_t n = detail::concrete_elements(s);
    if (n != 0) check_wrapped(s, owner.get());
    return dyn_tensor(std::move(s), n, std::move(owner));
  }

  const nax::shape& shape() const noexcept { return shape_; }
  nax::dtype dtype() const noexcept { return shape_.dtype(); }
  std::size_t rank() const noexcept { return shape_.rank(); }
  /// Elements.
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * size_of(dtype()); }
  bool empty() const noexcept { return size_ == 0; }
  /// False for wrap() and for to_dyn of an lvalue: someone else keeps the memory alive.
  bool owns_data() const noexcept { return data_.use_count() > 0; }

  /// Null for an empty tensor.
  void* data() noexcept { return data_.get(); }
  const void* data() const noexcept { return data_.get(); }
  /// The elements as T; nax::shape_error naming both dtypes if T is not the tensor's.
  template <class T>
  T* data() {
    check_dtype<T>();
    return reinterpret_cast<T*>(data_.get());
  }
  template <class T>
  const T* data() const {
    check_dtype<T>();
    return reinterpret_cast<const T*>(data_.get());
  }

  /// Extent of dim i; nax::shape_error if there is none.
  std::size_t extent(std::size_t i) const {
    if (i >= rank())
      detail::throw_shape_error("dyn_tensor: dimension ", i, " is out of range for ", to_string(),
                                " (rank ", rank(), ")");
    return shape_[i].extent();
  }
  /// Extent of the dim named `axis`; nax::shape_error naming it and the shape if there is none.
  std::size_t extent(std::string_view axis) const {
    if (auto i = shape_.index_of(axis)) return shape_[*i].extent();
    detail::throw_shape_error("dyn_tensor: no axis '", axis, "' in ", to_string());
  }

  /// Sets every element; T must be the element type (no silent conversion, as with data<T>()).
  template <class T>
  void fill(const T& value) {
    T* p = data<T>();
    std::fill(p, p + size_, value);
  }

  /// A copy with its own new buffer.
  dyn_tensor clone() const {
    dyn_tensor out(shape_);
    if (size_) std::memcpy(out.data(), data(), bytes());
    return out;
  }

  /// `f32[batch=2, 3]`: dims by name=extent, unnamed ones by extent.
  std::string to_string() const { return detail::concrete_string(shape_); }

 private:
  dyn_tensor(nax::shape s, std::size_t size, std::shared_ptr<std::byte> data) noexcept
      : shape_(std::move(s)), size_(size), data_(std::move(data)) {}

  static void check_wrapped(const nax::shape& s, const void* data) {
    if (data == nullptr)
      detail::throw_shape_error("dyn_tensor::wrap: null data for ", detail::concrete_string(s));
    if (reinterpret_cast<std::uintptr_t>(data) % size_of(s.dtype()) != 0)
      detail::throw_shape_error("dyn_tensor::wrap: data for ", detail::concrete_string(s),
                                " is not aligned to ", size_of(s.dtype()), " bytes (",
                                name(s.dtype()), ")");
  }

  template <class T>
  void check_dtype() const {
    constexpr nax::dtype want = dtype_of<std::remove_const_t<T>>;
    if (want != dtype())
      detail::throw_shape_error("dyn_tensor: element type ", name(want), " requested, but ",
                                to_string(), " holds ", name(dtype()));
  }

  nax::shape shape_;
  std::size_t size_ = 0;
  std::shared_ptr<std::byte> data_;
};

}  // namespace nax
