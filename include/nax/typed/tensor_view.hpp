#pragma once
// nax::tensor_view: a non-owning view of elements laid out with any (non-negative) strides, so
// that permuted and sliced tensors are views, not copies.

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {

namespace detail {
template <class E>
std::array<std::ptrdiff_t, E::rank()> row_major_strides(const E& e) {
  std::array<std::size_t, E::rank()> ext{};
  for (std::size_t k = 0; k < E::rank(); ++k) ext[k] = e.extent(k);
  std::array<std::ptrdiff_t, E::rank()> s{};
  nax::core_detail::fill_row_major_strides(ext, s);
  return s;
}
}  // namespace detail

/// A view of elements of type T (const T for a read-only view) over `Axes...`, with a stride
/// per axis (in elements). Constructed row-major from a pointer and the dynamic extents by name:
///
///     nax::tensor_view<float, batch, hidden> v(ptr, batch(32));
///
/// A view is an expression (it can be read in any elementwise expression) and, when T is not
/// const, a destination: `v = x * 2` writes through it.
template <class T, axis_type... Axes>
class tensor_view : public detail::leaf_expression<tensor_view<T, Axes...>> {
  using element = std::remove_const_t<T>;

 public:
  using value_type = element;
  using axes_type = axes<Axes...>;
  using extents_type = nax::extents<Axes...>;
  using lane_type = detail::lane_of_value<element>;
  static constexpr std::size_t rank = sizeof...(Axes);

  /// Row-major over `data`, extents of the dynamic axes given by name. nax::shape_error if
  /// `data` is null (for a non-empty view) or is not aligned for T.
  template <axis_type... Given>
  explicit tensor_view(T* data, Given... given) : tensor_view(data, extents_type(given...)) {
    if (data == nullptr && size() != 0)
      detail::throw_shape_error("nax::tensor_view: null data for ", extents_.to_string());
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(element) != 0)
      detail::throw_shape_error("nax::tensor_view: data for ", extents_.to_string(),
                                " is not aligned to ", alignof(element), " bytes");
  }
  tensor_view(T* data, const extents_type& e)
      : data_(data), extents_(e), strides_(detail::row_major_strides(e)) {}
  tensor_view(T* data, const extents_type& e, const std::array<std::ptrdiff_t, rank>& strides)
      : data_(data), extents_(e), strides_(strides) {}

  /// A mutable view converts to a const one.
  operator tensor_view<const element, Axes...>() const  // NOLINT: implicit by design
      requires(!std::is_const_v<T>) {
    return {data_, extents_, strides_};
  }

  T* data() const noexcept { return data_; }
  const extents_type& extents() const noexcept { return extents_; }
  const std::array<std::ptrdiff_t, rank>& strides() const noexcept { return strides_; }
  std::size_t size() const noexcept { return extents_.size(); }
  std::size_t extent(std::size_t i) const noexcept { return extents_.extent(i); }
  template <class A>
  std::size_t extent() const noexcept {
    return extents_.template extent<A>();
  }
  template <class A>
  std::ptrdiff_t stride() const noexcept {
    return strides_[axes_index_of_v<axes_type, A>];
  }
  /// Whether the elements are dense and row-major in the listed axis order.
  bool is_contiguous() const noexcept { return strides_ == detail::row_major_strides(extents_); }

  /// Element at positional indices, one per axis in the listed order.
  template <std::integral... I>
  requires(sizeof...(I) == rank) T& operator()(I... index) const noexcept {
    std::size_t k = 0;
    std::ptrdiff_t offset = 0;
    ((assert(static_cast<std::size_t>(index) < extents_.extent(k)),
      offset += static_cast<std::ptrdiff_t>(index) * strides_[k++]),
     ...);
    return data_[offset];
  }

  /// Writes an expression (or a scalar, broadcast) through the view.
  template <class E, class Outcome = typename detail::checked_assign<axes_type, E>::outcome>
  const tensor_view& operator=(const E& e) const requires detail::writable<T> {
    detail::assign(*this, detail::as_expression<element>(e));
    return *this;
  }
  /// Writing an expression with an axis this view lacks, or whose shared axes disagree: declared,
  /// never defined; its return type is the error, so the assignment is the compile error, at
  /// the caller's line (core/diagnostics.hpp).
  template <class E, class Outcome = typename detail::checked_assign<axes_type, E>::outcome>
  Outcome operator=(const E& e) const requires(detail::writable<T>&& detail::fails<Outcome>);
  tensor_view& operator=(const tensor_view& other) requires(!std::is_const_v<T>) {
    detail::assign(*this, other);
    return *this;
  }
  tensor_view(const tensor_view&) = default;

  template <class E>
  const tensor_view& operator+=(const E& e) const requires(!std::is_const_v<T>) {
    detail::compound_assign<ops::add>(*this, e);
    return *this;
  }
  template <class E>
  const tensor_view& operator-=(const E& e) const requires(!std::is_const_v<T>) {
    detail::compound_assign<ops::sub>(*this, e);
    return *this;
  }
  template <class E>
  const tensor_view& operator*=(const E& e) const requires(!std::is_const_v<T>) {
    detail::compound_assign<ops::mul>(*this, e);
    return *this;
  }
  template <class E>
  const tensor_view& operator/=(const E& e) const requires(!std::is_const_v<T>) {
    detail::compound_assign<ops::div>(*this, e);
    return *this;
  }

  // Expression protocol (see expression.hpp).
  template <class D>
  auto cursor() const {
    return detail::make_leaf_cursor<D, Axes...>(static_cast<const element*>(data_), strides_);
  }

 private:
  T* data_;
  extents_type extents_;
  std::array<std::ptrdiff_t, rank> strides_;
};

namespace detail {

/// The view type of T over axis list L (`axes<A...>`).
template <class T, class L>
struct view_over;
template <class T, class... A>
struct view_over<T, axes<A...>> {
  using type = tensor_view<T, A...>;
};

template <class X>
inline constexpr bool is_tensor_view_v = false;
template <class T, class... A>
inline constexpr bool is_tensor_view_v<tensor_view<T, A...>> = true;

}  // namespace detail
}  // namespace nax
