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
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA {
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
    throw_shape_error("dyn_tensor: a view over ", list, "] has rank ", n, ", but ", t.to_string(),
                      " has rank ", t.rank());
  }
  std::array<std::size_t, n> values{};
  for (std::size_t i = 0; i < t.rank(); ++i) {
    const dim& d = t.shape()[i];
    const std::size_t e = d.extent();
    if (d.has_name() && d.name().view() != names[i])
      throw_shape_error("dyn_tensor: dimension ", i, " of ", t.to_string(), " is axis '",
                        d.name().view(), "', but the view has axis '", names[i], "' there");
    if (statics[i] != dynamic_extent && e != statics[i])
      throw_shape_error("dyn_tensor: axis '", names[i], "' is static with extent ", statics[i],
                        ", but dimension ", i, " of ", t.to_string(), " has ", e);
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

/// A dyn_tensor of shape s (concrete) over the elements at `data`, addressed with `strides` (in
/// elements, one per dim): the memory itself when it is dense row-major (strides of extent-1
/// axes and of empty tensors never matter), else a dense copy if `copy_if_strided`, else
/// nax::shape_error naming the strides. Not a template, so that each typed tensor type a program
/// passes costs it no copy loop: the compiled component holds the one definition.
NAX_RUNTIME_INLINE dyn_tensor dyn_over(nax::shape s, const void* data,
                                       std::span<const std::ptrdiff_t> strides,
                                       bool copy_if_strided);

}  // namespace detail

/// A dyn_tensor over a view's elements, dims named by its axes (no copy, no ownership: the
/// viewed memory must outlive it). nax::shape_error if the view is not dense row-major.
template <class T, axis_type... A>
dyn_tensor to_dyn(const tensor_view<T, A...>& v) {
  using element = std::remove_const_t<T>;
  return detail::dyn_over(shape_of<element>(v.extents()), v.data(),
                          std::span<const std::ptrdiff_t>(v.strides()), false);
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

#if NAX_RUNTIME_DEFINITIONS
#include <vector>

#include <nax/kernels/copy.hpp>

namespace nax::NAX_ISA::detail {

NAX_RUNTIME_INLINE dyn_tensor dyn_over(nax::shape s, const void* data,
                                       std::span<const std::ptrdiff_t> strides,
                                       bool copy_if_strided) {
  const std::size_t rank = s.rank();
  small_vector<std::size_t, 8> extents;  // no allocation on a jit call's path
  std::size_t count = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    extents.push_back(s[k].extent());
    count *= extents[k];
  }
  bool dense = true;
  std::ptrdiff_t next = 1;
  for (std::size_t k = rank; count != 0 && k-- > 0;) {
    if (extents[k] != 1 && strides[k] != next) dense = false;
    next *= static_cast<std::ptrdiff_t>(extents[k]);
  }
  if (dense) return dyn_tensor::wrap(std::move(s), const_cast<void*>(data));
  if (!copy_if_strided) {
    std::string list = "[";
    for (std::size_t k = 0; k < rank; ++k) list += (k ? ", " : "") + std::to_string(strides[k]);
    const std::string text = concrete_string(s);
    throw_shape_error("to_dyn: the view of ", text.substr(text.find('[')),
                      " is not contiguous row-major (strides ", list,
                      "]); copy it into a nax::tensor first");
  }
  dyn_tensor out(std::move(s));
  const std::span<const std::size_t> ext(extents.data(), rank);
  const std::vector<std::ptrdiff_t> to = kernels::dense_strides(ext);
  kernels::run_copy(kernels::plan_copy(size_of(out.dtype()), ext, strides, to), data, out.data());
  return out;
}

}  // namespace nax::detail
#endif  // NAX_RUNTIME_DEFINITIONS
