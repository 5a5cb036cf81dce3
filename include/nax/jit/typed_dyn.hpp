#pragma once
// The bridge between typed tensors and the runtime's dyn_tensor, in both directions and without
// copying: nax::to_dyn (a typed tensor or view as a dyn_tensor), nax::typed_view (a dyn_tensor's
// elements as a typed view, checked by axis name) and nax::from_dyn (an owning typed copy).

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <nax/core/axis.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax {
namespace detail {

/// The extents of axes A... in dyn_tensor t, checked: the rank, each axis's name against the
/// dim's (an unnamed dim matches any), a static axis's extent and a bounded axis's bound.
template <axis_type... A>
nax::extents<A...> checked_extents(const dyn_tensor& t) {
  constexpr std::size_t n = sizeof...(A);
  constexpr std::array<std::string_view, n> names{A::name...};
  constexpr std::array<std::size_t, n> statics{A::static_extent...};
  constexpr std::array<std::size_t, n> bounds{A::bound...};
  if (t.rank() != n) {
    std::string list = "[";
    for (std::size_t i = 0; i < n; ++i) list += (i ? ", " : "") + std::string(names[i]);
    throw_shape_error("dyn_tensor: a view over ", list, "] has rank ", n, ", but ",
                              t.to_string(), " has rank ", t.rank());
  }
  std::array<std::size_t, n> values{};
  for (std::size_t i = 0; i < t.rank(); ++i) {
    const dim& d = t.shape()[i];
    const std::size_t e = d.extent();
    if (d.has_name() && d.name().view() != names[i])
      throw_shape_error("dyn_tensor: dimension ", i, " of ", t.to_string(), " is axis '",
                                d.name().view(), "', but the view has axis '", names[i],
                                "' there");
    if (statics[i] != dynamic_extent && e != statics[i])
      throw_shape_error("dyn_tensor: axis '", names[i], "' is static with extent ",
                                statics[i], ", but dimension ", i, " of ", t.to_string(), " has ",
                                e);
    if (e > bounds[i])
      throw_shape_error("dyn_tensor: axis '", names[i], "' is bounded by ", bounds[i],
                                ", but dimension ", i, " of ", t.to_string(), " has ", e);
    values[i] = e;
  }
  // extents<>'s span constructor leaves its parameter unused (-Wunused-but-set-parameter).
  if constexpr (n == 0)
    return nax::extents<A...>();
  else
    return nax::extents<A...>(std::span<const std::size_t, n>(values));
}

}  // namespace detail

/// A typed view of a dyn_tensor's elements (no copy). Checked, each failure a nax::shape_error
/// saying what differs: T against the dtype, the rank, each axis's name against the dim's (an
/// unnamed dim matches any), a static axis's extent or a bounded axis's bound against the dim's.
template <class T, axis_type... A>
tensor_view<T, A...> typed_view(dyn_tensor& d) {
  return {static_cast<T*>(d.data<std::remove_const_t<T>>()), detail::checked_extents<A...>(d)};
}
template <class T, axis_type... A>
tensor_view<const T, A...> typed_view(const dyn_tensor& d) {
  return {d.data<std::remove_const_t<T>>(), detail::checked_extents<A...>(d)};
}

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
  auto* p = reinterpret_cast<std::byte*>(owner->data());
  return dyn_tensor::share(std::move(s), std::shared_ptr<std::byte>(std::move(owner), p));
}

/// An owning typed copy of a dyn_tensor's elements, with the checks of dyn_tensor::view.
template <class T, axis_type... A>
tensor<T, A...> from_dyn(const dyn_tensor& d) {
  tensor_view<const T, A...> v = typed_view<T, A...>(d);
  tensor<T, A...> out(v.extents());
  if (v.size()) std::memcpy(out.data(), v.data(), v.size() * sizeof(T));
  return out;
}

}  // namespace nax
