#pragma once
// Reading a struct of parameters (typed/fields.hpp) from a file's named tensors, as
// nax::load_npz and nax::load_safetensors do: every field's tensor is found and checked first
// (its dtype, rank, static extents and bounds), and the struct is written only when all of them
// fit, so that bad input loses nothing. The file's side is a field_source, not a template: its
// lookups and messages are compiled once (in nax::runtime for .npz), and a field's type costs only
// the copy into its tensor.

#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/io/npy.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/typed/fields.hpp>
#include <nax/typed/tensor.hpp>

namespace nax::NAX_ISA::io::detail {

/// Where a struct's tensors come from.
class field_source {
 public:
  /// The tensor for the field at `path`, whose type's shape is `want` (shape_of<T, A...>()), its
  /// extents written to `extents` (one per axis): an io_error naming the file and the tensor if
  /// the file has none or it does not fit (fitting_extents).
  virtual dyn_tensor take(std::string_view path, const nax::shape& want, std::size_t* extents) = 0;
  /// An io_error naming the file's tensors that no field took, where that is an error.
  virtual void check_rest() = 0;

 protected:
  ~field_source() = default;
};

/// Every tensor of params read from `source` (see the file comment).
template <class P>
void read_fields(P& params, field_source& source) {
  std::vector<dyn_tensor> tensors;
  std::vector<std::size_t> extents;
  for_each_field(std::as_const(params),
                 [&]<class T, class... A>(std::string_view path, const tensor<T, A...>&) {
                   const std::size_t at = extents.size();
                   extents.resize(at + sizeof...(A));
                   tensors.push_back(source.take(path, shape_of<T, A...>(), extents.data() + at));
                 });
  source.check_rest();
  std::size_t k = 0, at = 0;
  for_each_field(params, [&]<class T, class... A>(std::string_view, tensor<T, A...>& t) {
    t = tensor_of<T, A...>(tensors[k++], extents.data() + at);
    at += sizeof...(A);
  });
}

}  // namespace nax::NAX_ISA::io::detail
