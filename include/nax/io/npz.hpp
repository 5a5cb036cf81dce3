#pragma once
// NumPy's .npz files: a named set of tensors, each a .npy file "<name>.npy" stored in a ZIP
// archive (io/zip.hpp), as np.savez writes it and np.load reads it. For checkpoints:
//
//     nax::io::save_npz("mlp.npz", {{"w1", nax::io::to_dyn(w1)}, {"b1", nax::io::to_dyn(b1)}});
//     std::vector<nax::io::named_tensor> all = nax::io::load_npz("mlp.npz");   // in file order
//     auto w1 = nax::io::load_npz<float, in, hid>("mlp.npz", "w1");            // one, typed
//
// A struct of parameters (typed/fields.hpp) saves and loads whole, each tensor named by its field
// path (`layers.1.attn.wq`):
//
//     nax::save_npz("gpt.npz", params);
//     nax::load_npz("gpt.npz", params);   // every tensor, or (on an error) none
//
// A bad file is an io_error naming it and what is wrong (the archive's structure, an entry's
// CRC, a compressed entry, a missing name, the .npy inside: io/npy.hpp).

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/io/field_reader.hpp>
#include <nax/io/npy.hpp>
#include <nax/io/zip.hpp>
#include <nax/typed/fields.hpp>

namespace nax::NAX_ISA::io {

/// A tensor and its name in a .npz file.
struct named_tensor {
  std::string name;
  dyn_tensor value;
};

/// t as a dyn_tensor over its elements (no copy; t must outlive it): for save_npz.
template <class T, class... A>
dyn_tensor to_dyn(const tensor<T, A...>& t) {
  return dyn_tensor::wrap(shape_of<T>(t.extents()), const_cast<T*>(t.data()));
}

/// Writes the tensors to `path` as a .npz file, in order. Names must be unique and not empty.
NAX_RUNTIME_INLINE void save_npz(const std::string& path, const std::vector<named_tensor>& tensors);

/// Every tensor of the .npz file `path`, in the archive's order, named without ".npy".
NAX_RUNTIME_INLINE std::vector<named_tensor> load_npz(const std::string& path);

namespace detail {

// The tensor `name` of the .npz file `path`, decoded (the others are not).
NAX_RUNTIME_INLINE dyn_tensor load_npz_entry(const std::string& path, const std::string& name);

// A .npz file's tensors as a struct's fields read them (io/field_reader.hpp): by field path, each
// taken once, none left over.
class npz_fields final : public field_source {
 public:
  NAX_RUNTIME_INLINE explicit npz_fields(const std::string& path);
  NAX_RUNTIME_INLINE dyn_tensor take(std::string_view field, const nax::shape& want,
                                     std::size_t* extents) override;
  NAX_RUNTIME_INLINE void check_rest() override;

 private:
  std::string path_;
  std::map<std::string, dyn_tensor, std::less<>> entries_;
};

}  // namespace detail

/// The tensor `name` of the .npz file `path` as a nax::tensor<T, Axes...> (see load_npy).
/// Only that entry is decoded: the others may hold what nax does not read.
template <class T, axis_type... Axes>
tensor<T, Axes...> load_npz(const std::string& path, const std::string& name) {
  return detail::as_typed<T, Axes...>(detail::load_npz_entry(path, name), path + ":" + name,
                                      "load_npz");
}

}  // namespace nax::NAX_ISA::io

namespace nax::NAX_ISA {

/// Writes every tensor of params to the .npz file `path`, named by its field path.
template <field_struct P>
void save_npz(const std::string& path, const P& params) {
  std::vector<io::named_tensor> all;
  for_each_field(params, [&](std::string_view name, const auto& t) {
    all.push_back({std::string(name), io::to_dyn(t)});
  });
  io::save_npz(path, all);
}

/// Reads every tensor of params from the .npz file `path` by its field path. A tensor the file
/// lacks, one it holds that params has not, or one of another element type or extents is a
/// nax::io_error naming it; then params is left as it was.
template <field_struct P>
void load_npz(const std::string& path, P& params) {
  io::detail::npz_fields file(path);
  io::detail::read_fields(params, file);
}

}  // namespace nax::NAX_ISA

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::io {

NAX_RUNTIME_INLINE void save_npz(const std::string& path,
                                 const std::vector<named_tensor>& tensors) {
  std::vector<std::pair<std::string, std::vector<std::byte>>> entries;
  for (const named_tensor& t : tensors) {
    if (t.name.empty())
      nax::detail::throw_io_error("nax::io::save_npz: '", path, "': a tensor has no name");
    for (const auto& e : entries)
      if (e.first == t.name + ".npy")
        nax::detail::throw_io_error("nax::io::save_npz: '", path, "': two tensors are named '",
                                    t.name, "'");
    entries.emplace_back(t.name + ".npy", encode_npy(t.value));
  }
  detail::write_file(path, zip::write(entries, path), "save_npz");
}

NAX_RUNTIME_INLINE std::vector<named_tensor> load_npz(const std::string& path) {
  const std::vector<std::byte> bytes = detail::read_file(path, "load_npz");
  std::vector<named_tensor> out;
  for (const zip::entry& e : zip::read(bytes, path)) {
    std::string name = e.name;
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    out.push_back({name, decode_npy(e.data, path + ":" + e.name, "load_npz")});
  }
  return out;
}

namespace detail {

NAX_RUNTIME_INLINE dyn_tensor load_npz_entry(const std::string& path, const std::string& name) {
  const std::vector<std::byte> bytes = read_file(path, "load_npz");
  const std::vector<zip::entry> entries = zip::read(bytes, path);
  std::string list;
  for (const zip::entry& e : entries) {
    const std::string_view stem = std::string_view(e.name).substr(
        0, e.name.ends_with(".npy") ? e.name.size() - 4 : e.name.size());
    if (stem == name) return decode_npy(e.data, path + ":" + e.name, "load_npz");
    if (!list.empty()) list.append(", ");
    list.append(stem);
  }
  nax::detail::throw_io_error("nax::io::load_npz: '", path, "' has no tensor '", name,
                              "' (it has: ", list, ")");
}

NAX_RUNTIME_INLINE npz_fields::npz_fields(const std::string& path) : path_(path) {
  for (named_tensor& e : io::load_npz(path)) entries_.emplace(e.name, std::move(e.value));
}

NAX_RUNTIME_INLINE dyn_tensor npz_fields::take(std::string_view field, const nax::shape& want,
                                               std::size_t* extents) {
  const auto it = entries_.find(field);
  if (it == entries_.end())
    nax::detail::throw_io_error("nax::load_npz: '", path_, "' has no tensor '", field,
                                "', which the struct has");
  fitting_extents(it->second, want, path_ + ":" + std::string(field), "load_npz", extents);
  dyn_tensor t = std::move(it->second);
  entries_.erase(it);
  return t;
}

NAX_RUNTIME_INLINE void npz_fields::check_rest() {
  if (entries_.empty()) return;
  std::string extra;
  for (const auto& [name, value] : entries_) extra += (extra.empty() ? "'" : ", '") + name + "'";
  nax::detail::throw_io_error("nax::load_npz: '", path_,
                              "' has tensors the struct has not: ", extra);
}

}  // namespace detail

}  // namespace nax::NAX_ISA::io
#endif  // NAX_RUNTIME_DEFINITIONS
