#pragma once
// nax::shape: a runtime shape: a dtype and a list of dimensions that are static, dynamic or
// bounded (`seq<=512`: at most 512), named or not.

#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nax/core/bindings.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>

namespace nax {

/// A runtime shape. `shape::make(dtype::f32, {"batch", nax::dim::bounded("seq", 512), 768})`
/// prints as `f32[batch, seq<=512, 768]`: a named dynamic axis by its name, a bounded one as
/// `name<=bound`, a static one by its extent (named or not), an unnamed dynamic one as `?`.
/// Ranks up to 6 are stored inline.
class shape {
 public:
  /// A scalar f32.
  shape() noexcept = default;
  shape(nax::dtype type, std::initializer_list<dim> dims) : dtype_(type) {
    dims_.assign(dims.begin(), dims.end());
  }
  shape(nax::dtype type, std::span<const dim> dims) : dtype_(type) {
    dims_.assign(dims.begin(), dims.end());
  }
  static shape make(nax::dtype type, std::initializer_list<dim> dims) { return shape(type, dims); }
  static shape make(nax::dtype type, std::span<const dim> dims) { return shape(type, dims); }

  nax::dtype dtype() const noexcept { return dtype_; }
  std::size_t rank() const noexcept { return dims_.size(); }
  std::span<const dim> dims() const noexcept { return {dims_.data(), dims_.size()}; }
  const dim& operator[](std::size_t i) const noexcept { return dims_[i]; }
  /// Dimension i; nax::shape_error if the shape has no such dimension.
  const dim& at(std::size_t i) const {
    if (i >= rank())
      core_detail::throw_shape_error("dimension ", i, " is out of range for ", to_string(), " (rank ",
                                rank(), ")");
    return dims_[i];
  }

  /// Some dimension's extent is unknown (dynamic, bounded or not).
  bool is_dynamic() const noexcept {
    for (const dim& d : dims_)
      if (d.is_dynamic()) return true;
    return false;
  }
  /// Some dimension has a name.
  bool has_named_axes() const noexcept {
    for (const dim& d : dims_)
      if (d.has_name()) return true;
    return false;
  }
  /// Every extent is known.
  bool is_fully_concrete() const noexcept { return !is_dynamic(); }

  /// Position of the first dimension named `name`.
  std::optional<std::size_t> index_of(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < rank(); ++i)
      if (dims_[i].name().view() == name && !name.empty()) return i;
    return std::nullopt;
  }

  /// The number of elements; nax::shape_error naming the first dynamic axis if it is unknown,
  /// or if it does not fit in std::size_t (a count wrapped around would size buffers too small).
  std::size_t num_elements() const {
    for (std::size_t i = 0; i < rank(); ++i)
      if (dims_[i].is_dynamic())
        core_detail::throw_shape_error("the element count of ", to_string(), " is unknown: dimension ",
                                  i, " (", dims_[i].describe(), ") is dynamic");
    for (const dim& d : dims_)
      if (d.extent() == 0) return 0;
    return checked_product(1, "element");
  }
  /// Bytes of the elements (num_elements() * size_of(dtype())); nax::shape_error as there, or
  /// if the bytes do not fit in std::size_t.
  std::size_t num_bytes() const {
    const std::size_t n = num_elements();
    return n == 0 ? 0 : checked_product(size_of(dtype_), "byte");
  }

  /// Replaces each named dynamic axis bound in `b` by its extent (keeping the name); axes not
  /// in `b` stay dynamic. An extent above an axis's bound throws nax::shape_error.
  shape resolve(const bindings& b) const {
    shape out = *this;
    for (dim& d : out.dims_)
      if (d.is_dynamic() && d.has_name())
        if (auto v = b.find(d.name())) d = d.resolved(*v);
    return out;
  }

  /// `f32[batch, seq<=512, 768]`; a scalar is `f32[]`.
  std::string to_string() const {
    std::string out(name(dtype_));
    out += '[';
    for (std::size_t i = 0; i < rank(); ++i) {
      if (i) out += ", ";
      out += dims_[i].to_string();
    }
    return out += ']';
  }

  friend bool operator==(const shape& a, const shape& b) noexcept {
    if (a.dtype_ != b.dtype_ || a.rank() != b.rank()) return false;
    for (std::size_t i = 0; i < a.rank(); ++i)
      if (!(a.dims_[i] == b.dims_[i])) return false;
    return true;
  }

 private:
  // first times every extent (all static, none 0); shape_error if it overflows std::size_t.
  std::size_t checked_product(std::size_t first, const char* what) const {
    std::size_t n = first;
    for (const dim& d : dims_) {
      if (n > std::numeric_limits<std::size_t>::max() / d.extent())
        core_detail::throw_shape_error("the ", what, " count of ", to_string(),
                                  " does not fit in std::size_t");
      n *= d.extent();
    }
    return n;
  }

  nax::dtype dtype_ = nax::dtype::f32;
  core_detail::small_vector<dim, 6> dims_;
};

}  // namespace nax
