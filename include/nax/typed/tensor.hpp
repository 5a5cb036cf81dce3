#pragma once
// nax::tensor: an owning, 64-byte aligned, row-major tensor over named axes.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

#include <nax/core/aligned_memory.hpp>
#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
namespace detail {

/// The extents of an expression along the axes of list L (each must be an axis of it).
template <class L>
struct extents_over;
template <class... A>
struct extents_over<axes<A...>> {
  template <class E>
  static nax::extents<A...> of(const E& e) {
    return nax::extents<A...>(axis<A::fixed_name, dynamic>(e.template extent<A>())...);
  }
};

// The extents of an expression, in the order of `Axes...` (which must be the expression's axes).
template <class T, class... Axes>
extents<Axes...> extents_from(const auto& e) {
  static_assert(check_assignable<axes<Axes...>,
                                 typename std::remove_cvref_t<decltype(e)>::axes_type, true>());
  return extents_over<axes<Axes...>>::of(e);
}

/// The elements of a tensor of T over extents e; nax::shape_error if its bytes do not fit in
/// std::size_t (a count that wrapped around would allocate too small a buffer, or none).
template <class T, class E>
std::size_t checked_elements(const E& e) {
  for (std::size_t i = 0; i < E::rank(); ++i)
    if (e.extent(i) == 0) return 0;
  std::size_t n = 1;
  for (std::size_t i = 0; i < E::rank(); ++i) {
    if (e.extent(i) > std::numeric_limits<std::size_t>::max() / sizeof(T) / n)
      throw_shape_error("nax::tensor: ", e.to_string(), " of ", sizeof(T),
                        "-byte elements has more bytes than fit in size_t");
    n *= e.extent(i);
  }
  return n;
}

}  // namespace detail

/// An owning tensor of T over `Axes...`, row-major in the listed order, 64-byte aligned.
/// Dynamic extents are given by name, in any order: `tensor<float, batch, seq, hidden> x(batch(32),
/// seq(128))`. Elements start uninitialized (use fill, or construct from values or an expression).
template <class T, axis_type... Axes>
class tensor : public detail::leaf_expression<tensor<T, Axes...>> {
  static_assert(std::is_trivially_copyable_v<T>, "nax::tensor holds trivially copyable elements");
  static_assert(check_unique_axes<axes<Axes...>>);

 public:
  using value_type = T;
  using axes_type = axes<Axes...>;
  using extents_type = nax::extents<Axes...>;
  using lane_type = detail::lane_of_value<T>;
  static constexpr std::size_t rank = sizeof...(Axes);

 private:
  static constexpr std::array<std::size_t, rank> empty_extents{
      (Axes::is_static ? Axes::static_extent : std::size_t{0})...};

 public:

  /// All-static tensors need no extents.
  tensor() requires(extents_type::rank_dynamic() == 0) : tensor(extents_type()) {}
  /// With dynamic axes, empty: extent 0 on each (as a std::vector is; a struct of parameters
  /// default-constructs so before it is loaded or assigned).
  tensor() requires(extents_type::rank_dynamic() != 0)
      : tensor(extents_type(std::span<const std::size_t, rank>(empty_extents))) {}
  /// Dynamic extents by name (a missing one is a compile error naming it).
  template <axis_type... Given>
  requires(sizeof...(Given) > 0) explicit tensor(Given... given) : tensor(extents_type(given...)) {}
  explicit tensor(const extents_type& e)
      : extents_(e), data_(detail::allocate_aligned<T>(detail::checked_elements<T>(e))) {}

  /// Values in row-major order; their count must be the tensor's size.
  template <axis_type... Given>
  tensor(std::span<const T> values, Given... given) : tensor(given...) {
    if (values.size() != size())
      detail::throw_shape_error("a tensor of ", extents_.to_string(), " needs ", size(),
                                " values, got ", values.size());
    std::copy(values.begin(), values.end(), data());
  }

  /// An all-static tensor from a braced list of its values in row-major order:
  /// `tensor<float, hidden> b{0.5f, 1.5f, 2.5f}` (nax::shape_error if the count is not its size).
  tensor(std::initializer_list<T> values) requires(extents_type::rank_dynamic() == 0)
      : tensor(std::span<const T>(values.begin(), values.size())) {}

  /// A tensor of `values` (a span, a std::vector, a braced list) in row-major order, dynamic
  /// extents by name: `auto w = tensor<float, in, hidden>::from(v)`. A factory, because the
  /// constructor spelled `tensor<...> w(std::span<const float>(v));` declares a function.
  template <axis_type... Given>
  static tensor from(std::span<const T> values, Given... given) {
    return tensor(values, given...);
  }
  template <axis_type... Given>
  static tensor from(std::initializer_list<T> values, Given... given) {
    return tensor(std::span<const T>(values.begin(), values.size()), given...);
  }

  /// The value of an expression whose axes are a permutation of this tensor's.
  template <expression E>
  requires(!std::is_same_v<std::remove_cvref_t<E>, tensor>)
      tensor(const E& e)  // NOLINT: implicit, so that `tensor<...> y = x * 2;` works
      : tensor(detail::extents_from<T, Axes...>(e)) {
    detail::assign(view(), e);
  }

  tensor(const tensor& other) : tensor(other.extents_) {
    if (size()) std::memcpy(data(), other.data(), size() * sizeof(T));
  }
  tensor(tensor&&) noexcept = default;
  tensor& operator=(tensor&& other) noexcept = default;
  tensor& operator=(const tensor& other) {
    if (this != &other) view() = other.view();
    return *this;
  }

  /// Evaluates an expression (or a broadcast scalar) into this tensor, with one fused loop. The
  /// expression's axes must be a permutation of this tensor's, with the same extents
  /// (nax::shape_error otherwise, and the tensor is left untouched).
  template <class E, class Outcome = typename detail::checked_assign<axes_type, E>::outcome>
  requires detail::not_same_as<E, tensor> tensor& operator=(const E& e) {
    view() = e;
    return *this;
  }
  /// Assigning an expression with an axis this tensor lacks, or whose shared axes disagree:
  /// declared, never defined; its return type is the error, so the assignment is the compile
  /// error, at the caller's line (core/diagnostics.hpp).
  template <class E, class Outcome = typename detail::checked_assign<axes_type, E>::outcome>
  requires(detail::not_same_as<E, tensor>&& detail::fails<Outcome>) Outcome operator=(const E& e);
  template <class E>
  tensor& operator+=(const E& e) {
    view() += e;
    return *this;
  }
  template <class E>
  tensor& operator-=(const E& e) {
    view() -= e;
    return *this;
  }
  template <class E>
  tensor& operator*=(const E& e) {
    view() *= e;
    return *this;
  }
  template <class E>
  tensor& operator/=(const E& e) {
    view() /= e;
    return *this;
  }

  const extents_type& extents() const noexcept { return extents_; }
  std::size_t size() const noexcept { return extents_.size(); }
  std::size_t extent(std::size_t i) const noexcept { return extents_.extent(i); }
  template <class A>
  std::size_t extent() const noexcept {
    return extents_.template extent<A>();
  }
  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size(); }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size(); }

  /// Element at positional indices, one per axis in the listed order.
  template <std::integral... I>
  requires(sizeof...(I) == rank) T& operator()(I... index) noexcept { return view()(index...); }
  template <std::integral... I>
  requires(sizeof...(I) == rank) const T& operator()(I... index) const noexcept {
    return view()(index...);
  }

  void fill(const T& value) { std::fill(begin(), end(), value); }

  tensor_view<T, Axes...> view() noexcept { return {data(), extents_}; }
  tensor_view<const T, Axes...> view() const noexcept { return {data(), extents_}; }

  // Expression protocol (see expression.hpp).
  template <class D>
  auto cursor() const {
    return view().template cursor<D>();
  }

 private:
  extents_type extents_;
  std::unique_ptr<T, detail::aligned_free> data_;
};

namespace detail {
template <class T, class... Axes>
inline constexpr bool is_owning_tensor_v<tensor<T, Axes...>> = true;
}  // namespace detail

}  // namespace nax

#include <nax/typed/evaluate.hpp>
