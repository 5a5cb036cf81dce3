#pragma once
// nax::dyn_tensor: the runtime graph's data type: a concrete named shape (with its dtype) over a
// 64-byte aligned buffer whose ownership is shared, so that copies are cheap. Typed tensors
// convert to and from it without copying (nax::to_dyn, dyn_tensor::view), checked by axis name.

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

#include <nax/core/axis.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax {

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
///     auto v = x.view<float, batch, hidden>();      // zero copy, checked: dtype, rank, names
///     nax::dyn_tensor y = nax::to_dyn(typed);        // zero copy the other way
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
    auto* p = static_cast<std::byte*>(::operator new (n, std::align_val_t{64}));
    std::memset(p, 0, n);
    data_ = std::shared_ptr<std::byte>(p, detail::aligned_free{});
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

  /// A typed view of the same elements (no copy). Checked, each failure a nax::shape_error saying
  /// what differs: T against the dtype, the rank, each axis's name against the dim's (an unnamed
  /// dim matches any), a static axis's extent or a bounded axis's bound against the dim's extent.
  template <class T, axis_type... A>
  tensor_view<T, A...> view() {
    return {static_cast<T*>(data<std::remove_const_t<T>>()), checked_extents<A...>()};
  }
  template <class T, axis_type... A>
  tensor_view<const T, A...> view() const {
    return {data<std::remove_const_t<T>>(), checked_extents<A...>()};
  }

  /// `f32[batch=2, 3]`: dims by name=extent, unnamed ones by extent.
  std::string to_string() const { return detail::concrete_string(shape_); }

 private:
  template <class T, axis_type... A>
  friend dyn_tensor to_dyn(tensor<T, A...>&& t);

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

  template <axis_type... A>
  nax::extents<A...> checked_extents() const {
    constexpr std::size_t n = sizeof...(A);
    constexpr std::array<std::string_view, n> names{A::name...};
    constexpr std::array<std::size_t, n> statics{A::static_extent...};
    constexpr std::array<std::size_t, n> bounds{A::bound...};
    if (rank() != n) {
      std::string list = "[";
      for (std::size_t i = 0; i < n; ++i) list += (i ? ", " : "") + std::string(names[i]);
      detail::throw_shape_error("dyn_tensor: a view over ", list, "] has rank ", n, ", but ",
                                to_string(), " has rank ", rank());
    }
    std::array<std::size_t, n> values{};
    for (std::size_t i = 0; i < rank(); ++i) {
      const dim& d = shape_[i];
      const std::size_t e = d.extent();
      if (d.has_name() && d.name().view() != names[i])
        detail::throw_shape_error("dyn_tensor: dimension ", i, " of ", to_string(), " is axis '",
                                  d.name().view(), "', but the view has axis '", names[i],
                                  "' there");
      if (statics[i] != dynamic_extent && e != statics[i])
        detail::throw_shape_error("dyn_tensor: axis '", names[i], "' is static with extent ",
                                  statics[i], ", but dimension ", i, " of ", to_string(), " has ",
                                  e);
      if (e > bounds[i])
        detail::throw_shape_error("dyn_tensor: axis '", names[i], "' is bounded by ", bounds[i],
                                  ", but dimension ", i, " of ", to_string(), " has ", e);
      values[i] = e;
    }
    // extents<>'s span constructor leaves its parameter unused (-Wunused-but-set-parameter).
    if constexpr (n == 0)
      return nax::extents<A...>();
    else
      return nax::extents<A...>(std::span<const std::size_t, n>(values));
  }

  nax::shape shape_;
  std::size_t size_ = 0;
  std::shared_ptr<std::byte> data_;
};

namespace detail {

/// Row-major and dense, ignoring the strides of extent-1 axes (never stepped along) and of empty
/// views (nothing to step to): a slice or permutation can be contiguous with other strides.
template <class T, class... A>
bool is_dense_row_major(const tensor_view<T, A...>& v) {
  if (v.size() == 0) return true;
  std::ptrdiff_t next = 1;
  for (std::size_t k = sizeof...(A); k-- > 0;) {
    if (v.extent(k) != 1 && v.strides()[k] != next) return false;
    next *= static_cast<std::ptrdiff_t>(v.extent(k));
  }
  return true;
}

}  // namespace detail

/// A dyn_tensor over a view's elements, dims named by its axes (no copy, no ownership: the
/// viewed memory must outlive it). nax::shape_error if the view is not dense row-major.
template <class T, axis_type... A>
dyn_tensor to_dyn(const tensor_view<T, A...>& v) {
  using element = std::remove_const_t<T>;
  if (!detail::is_dense_row_major(v)) {
    std::string strides = "[";
    for (std::size_t k = 0; k < sizeof...(A); ++k)
      strides += (k ? ", " : "") + std::to_string(v.strides()[k]);
    detail::throw_shape_error("to_dyn: the view of ", v.extents().to_string(),
                              " is not contiguous row-major (strides ", strides,
                              "]); copy it into a nax::tensor first");
  }
  return dyn_tensor::wrap(shape_of<element>(v.extents()),
                          const_cast<element*>(static_cast<const element*>(v.data())));
}

/// A dyn_tensor over a typed tensor's elements (no copy, no ownership: `t` must outlive it, and
/// writes through the dyn_tensor change `t`). Move the tensor in to share ownership instead.
template <class T, axis_type... A>
dyn_tensor to_dyn(const tensor<T, A...>& t) {
  return to_dyn(t.view());
}

/// A dyn_tensor that takes over a typed tensor's buffer (no copy) and keeps it alive.
template <class T, axis_type... A>
dyn_tensor to_dyn(tensor<T, A...>&& t) {
  auto owner = std::make_shared<tensor<T, A...>>(std::move(t));
  nax::shape s = shape_of<T>(owner->extents());
  const std::size_t n = owner->size();
  auto* p = reinterpret_cast<std::byte*>(owner->data());
  return dyn_tensor(std::move(s), n, std::shared_ptr<std::byte>(std::move(owner), p));
}

/// An owning typed copy of a dyn_tensor's elements, with the checks of dyn_tensor::view.
template <class T, axis_type... A>
tensor<T, A...> from_dyn(const dyn_tensor& d) {
  tensor_view<const T, A...> v = d.view<T, A...>();
  tensor<T, A...> out(v.extents());
  if (v.size()) std::memcpy(out.data(), v.data(), v.size() * sizeof(T));
  return out;
}

}  // namespace nax
