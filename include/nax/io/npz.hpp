#pragma once
// NumPy's .npz files: a named set of tensors, each a .npy file "<name>.npy" stored in a ZIP
// archive (io/zip.hpp), as np.savez writes it and np.load reads it. For checkpoints:
//
//     nax::io::save_npz("mlp.npz", {{"w1", nax::io::to_dyn(w1)}, {"b1", nax::io::to_dyn(b1)}});
//     std::vector<nax::io::named_tensor> all = nax::io::load_npz("mlp.npz");   // in file order
//     auto w1 = nax::io::load_npz<float, in, hid>("mlp.npz", "w1");            // one, typed
//
// A bad file is an io_error naming it and what is wrong (the archive's structure, an entry's
// CRC, a compressed entry, a missing name, the .npy inside: io/npy.hpp).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/io/npy.hpp>
#include <nax/io/zip.hpp>

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
inline void save_npz(const std::string& path, const std::vector<named_tensor>& tensors) {
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

/// Every tensor of the .npz file `path`, in the archive's order, named without ".npy".
inline std::vector<named_tensor> load_npz(const std::string& path) {
  const std::vector<std::byte> bytes = detail::read_file(path, "load_npz");
  std::vector<named_tensor> out;
  for (const zip::entry& e : zip::read(bytes, path)) {
    std::string name = e.name;
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    out.push_back({name, decode_npy(e.data, path + ":" + e.name, "load_npz")});
  }
  return out;
}

/// The tensor `name` of the .npz file `path` as a nax::tensor<T, Axes...> (see load_npy).
/// Only that entry is decoded: the others may hold what nax does not read.
template <class T, axis_type... Axes>
tensor<T, Axes...> load_npz(const std::string& path, const std::string& name) {
  const std::vector<std::byte> bytes = detail::read_file(path, "load_npz");
  const std::vector<zip::entry> entries = zip::read(bytes, path);
  std::string list;
  for (const zip::entry& e : entries) {
    const std::string_view stem = std::string_view(e.name).substr(
        0, e.name.ends_with(".npy") ? e.name.size() - 4 : e.name.size());
    if (stem == name)
      return detail::as_typed<T, Axes...>(decode_npy(e.data, path + ":" + e.name, "load_npz"),
                                          path + ":" + name, "load_npz");
    if (!list.empty()) list.append(", ");
    list.append(stem);
  }
  nax::detail::throw_io_error("nax::io::load_npz: '", path, "' has no tensor '", name,
                              "' (it has: ", list, ")");
}

}  // namespace nax::io
