#pragma once
// Hugging Face's .safetensors files: an 8-byte little-endian header length, a JSON header
// (`{"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value"}}`) and the tensors' bytes, little-endian and row-major, as
// the safetensors library writes and reads them. Reading maps the file into memory: a tensor is
// read without copying it (its dyn_tensor keeps the mapping alive).
//
//     auto file = nax::load_safetensors("model.safetensors");
//     nax::dyn_tensor e = file.get("wte.weight");                    // no copy
//     auto w = file.load<float, vocab, model>("wte.weight");         // a typed copy, checked
//     nax::load_safetensors("model.safetensors", params);            // a struct, by field path
//     nax::save_safetensors("out.safetensors", params);
//
// The header is parsed by nlohmann-json (Debian's nlohmann-json3-dev): this header alone needs
// it, and <nax/nax.hpp> does not include it. A bad file is an io_error naming it and what is
// wrong (the header's length, its JSON, an entry's dtype, shape or offsets, overlapping or
// out-of-file data); nothing is read past the file's end.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/io/field_reader.hpp>
#include <nax/io/npy.hpp>
#include <nax/io/npz.hpp>
#include <nax/typed/fields.hpp>

namespace nax::NAX_ISA::io {
namespace detail {

// safetensors' name of a dtype, and back (F16, BF16, I8, ... are not nax dtypes: no value).
inline std::string_view safetensors_dtype(dtype t) {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::f64: return "F64";
    case dtype::i32: return "I32";
    case dtype::i64: return "I64";
    case dtype::u8: return "U8";
    case dtype::boolean: return "BOOL";
  }
  return "?";
}
inline bool dtype_from_safetensors(std::string_view s, dtype& out) {
  for (dtype t : {dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::u8, dtype::boolean})
    if (safetensors_dtype(t) == s) {
      out = t;
      return true;
    }
  return false;
}

// The header may not be larger than this (the safetensors library's own limit: 100 MB).
inline constexpr std::uint64_t max_safetensors_header = 100'000'000;

// A read-only view of a file's bytes, mapped privately (writes through a tensor change the
// process's copy only), unmapped when the last owner goes.
inline std::shared_ptr<std::byte> map_file(const std::string& path, std::size_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) nax::detail::throw_io_error("nax::load_safetensors: cannot open '", path, "'");
  struct ::stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    nax::detail::throw_io_error("nax::load_safetensors: '", path, "' is not a regular file");
  }
  size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return {};
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) nax::detail::throw_io_error("nax::load_safetensors: cannot map '", path, "'");
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                    [size](std::byte* q) { ::munmap(q, size); });
}

}  // namespace detail

/// A .safetensors file mapped into memory (see the file comment). Copies share the mapping.
class safetensors_file {
 public:
  struct entry {
    std::string name;
    nax::shape shape;  // dtype and extents; dims unnamed (the file has no axis names)
    std::size_t offset = 0;  // of its bytes, from the file's start
  };

  /// Maps and checks `path`; io_error naming it and what is wrong.
  explicit safetensors_file(std::string path) : path_(std::move(path)) {
    std::size_t size = 0;
    mapping_ = detail::map_file(path_, size);
    parse(size);
  }

  const std::string& path() const noexcept { return path_; }
  /// The tensors, in the order of their bytes in the file.
  const std::vector<entry>& entries() const noexcept { return entries_; }
  /// The header's "__metadata__" (string to string; empty if it has none).
  const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }

  /// The entry `name`, or nullptr.
  const entry* find(std::string_view name) const {
    for (const entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  /// The tensor `name` over the mapped bytes (no copy: a copy only if its bytes are not aligned
  /// for its elements); io_error listing the file's names if it has no such tensor.
  dyn_tensor get(std::string_view name) const { return read(require(name)); }

  /// The tensor `name` as a nax::tensor<T, Axes...> (a copy): its dtype, rank and static
  /// extents checked as load_npy checks them, its dynamic extents from the file.
  template <class T, axis_type... Axes>
  tensor<T, Axes...> load(std::string_view name) const {
    return detail::as_typed<T, Axes...>(get(name), path_ + ":" + std::string(name),
                                        "load_safetensors");
  }

  /// The entry `name`, or an io_error listing the names the file has.
  const entry& require(std::string_view name) const {
    if (const entry* e = find(name)) return *e;
    std::string list;
    for (const entry& e : entries_) list += (list.empty() ? "" : ", ") + e.name;
    nax::detail::throw_io_error("nax::load_safetensors: '", path_, "' has no tensor '", name,
                                "' (it has: ", list, ")");
  }

  /// Entry e's tensor (see get).
  dyn_tensor read(const entry& e) const {
    const std::size_t n = e.shape.num_bytes();
    if (n == 0) return dyn_tensor(e.shape);
    std::byte* p = mapping_.get() + e.offset;
    if (reinterpret_cast<std::uintptr_t>(p) % size_of(e.shape.dtype()) != 0) {
      dyn_tensor copy(e.shape);
      std::memcpy(copy.data(), p, n);
      return copy;
    }
    return dyn_tensor::share(e.shape, std::shared_ptr<std::byte>(mapping_, p));
  }

 private:
  void parse(std::size_t size) {
    auto bad = [&](const auto&... what) -> void {
      nax::detail::throw_io_error("nax::load_safetensors: '", path_, "' ", what...);
    };
    if (size < 8) bad("is ", size, " bytes long: too short for the header's length (8 bytes)");
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i)
      header_size = (header_size << 8) | std::to_integer<std::uint64_t>(mapping_.get()[i]);
    if (header_size > detail::max_safetensors_header || header_size > size - 8)
      bad("declares a header of ", header_size, " bytes, but the file has ", size - 8,
          " after the length");
    const char* text = reinterpret_cast<const char*>(mapping_.get() + 8);
    nlohmann::json header =
        nlohmann::json::parse(text, text + header_size, nullptr, /*allow_exceptions=*/false);
    if (header.is_discarded()) bad("has a header that is not JSON");
    if (!header.is_object()) bad("has a header that is not a JSON object");
    const std::size_t data_start = 8 + static_cast<std::size_t>(header_size);
    const std::size_t data_size = size - data_start;
    for (const auto& item : header.items()) {
      const std::string& name = item.key();  // (not a structured binding: lambdas capture it)
      const nlohmann::json& value = item.value();
      if (name == "__metadata__") {
        if (!value.is_object()) bad("has a __metadata__ that is not an object");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) bad("has a __metadata__ value that is not a string ('", k, "')");
          metadata_.emplace(k, v.template get<std::string>());
        }
        continue;
      }
      auto bad_entry = [&](const auto&... what) -> void { bad("tensor '", name, "': ", what...); };
      if (!value.is_object()) bad_entry("is not a JSON object");
      const auto dt = value.find("dtype");
      const auto sh = value.find("shape");
      const auto off = value.find("data_offsets");
      if (dt == value.end() || sh == value.end() || off == value.end())
        bad_entry("needs \"dtype\", \"shape\" and \"data_offsets\"");
      dtype t{};
      if (!dt->is_string() || !detail::dtype_from_safetensors(dt->template get<std::string>(), t))
        bad_entry("dtype ", dt->dump(), " is not one nax reads (F32, F64, I32, I64, U8, BOOL)");
      if (!sh->is_array()) bad_entry("shape ", sh->dump(), " is not an array");
      std::vector<dim> dims;
      std::size_t elements = 1;
      bool overflow = false;
      for (const auto& d : *sh) {
        if (!d.is_number_unsigned()) bad_entry("shape ", sh->dump(), " holds a non-integer");
        const std::uint64_t e = d.template get<std::uint64_t>();
        if (e != 0 && elements > SIZE_MAX / e) overflow = true;
        elements *= static_cast<std::size_t>(e);
        dims.push_back(dim(static_cast<std::size_t>(e)));
      }
      if (overflow || elements > SIZE_MAX / size_of(t)) bad_entry("shape ", sh->dump(), " is too large");
      if (!off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
          !(*off)[1].is_number_unsigned())
        bad_entry("data_offsets ", off->dump(), " is not [begin, end]");
      const std::uint64_t begin = (*off)[0].template get<std::uint64_t>();
      const std::uint64_t end = (*off)[1].template get<std::uint64_t>();
      if (begin > end || end > data_size)
        bad_entry("data_offsets [", begin, ", ", end, "] are not within the ", data_size,
                  " bytes of data");
      if (end - begin != elements * size_of(t))
        bad_entry("holds ", end - begin, " bytes, but ", dt->template get<std::string>(), " ",
                  sh->dump(), " is ", elements * size_of(t));
      entries_.push_back({name, nax::shape::make(t, std::span<const dim>(dims)),
                          data_start + static_cast<std::size_t>(begin)});
    }
    std::sort(entries_.begin(), entries_.end(),
              [](const entry& a, const entry& b) { return a.offset < b.offset; });
    for (std::size_t i = 1; i < entries_.size(); ++i) {
      const entry& a = entries_[i - 1];
      if (a.offset + a.shape.num_bytes() > entries_[i].offset)
        bad("tensors '", a.name, "' and '", entries_[i].name, "' overlap");
    }
  }

  std::string path_;
  std::shared_ptr<std::byte> mapping_;
  std::vector<entry> entries_;
  std::map<std::string, std::string> metadata_;
};

/// Writes the tensors to `path` as a .safetensors file, in order, with `metadata` as the
/// header's "__metadata__" (none if empty). Names must be unique, not empty and not
/// "__metadata__".
inline void save_safetensors(const std::string& path, const std::vector<named_tensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {}) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (const named_tensor& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      nax::detail::throw_io_error("nax::save_safetensors: '", path, "': a tensor may not be named '",
                                  t.name, "'");
    if (header.contains(t.name))
      nax::detail::throw_io_error("nax::save_safetensors: '", path, "': two tensors are named '",
                                  t.name, "'");
    std::vector<std::uint64_t> shape;
    for (std::size_t k = 0; k < t.value.rank(); ++k) shape.push_back(t.value.shape()[k].extent());
    header[t.name] = {{"dtype", detail::safetensors_dtype(t.value.dtype())},
                      {"shape", shape},
                      {"data_offsets", {offset, offset + t.value.bytes()}}};
    offset += t.value.bytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::vector<std::byte> bytes(8 + text.size() + offset);
  for (std::size_t i = 0; i < 8; ++i)
    bytes[i] = static_cast<std::byte>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);
  std::memcpy(bytes.data() + 8, text.data(), text.size());
  std::size_t at = 8 + text.size();
  for (const named_tensor& t : tensors) {
    if (t.value.bytes()) std::memcpy(bytes.data() + at, t.value.data(), t.value.bytes());
    at += t.value.bytes();
  }
  detail::write_file(path, bytes, "save_safetensors");
}

}  // namespace nax::NAX_ISA::io

namespace nax::NAX_ISA {

/// `nax::load_safetensors(path)`: the file, mapped (io::safetensors_file).
inline io::safetensors_file load_safetensors(const std::string& path) {
  return io::safetensors_file(path);
}

/// How a struct's tensors are found in a checkpoint.
struct safetensors_names {
  /// A checkpoint's own name for a field path (`{"embed", "transformer.wte.weight"}`); a path
  /// not in the map is looked up as itself.
  std::map<std::string, std::string, std::less<>> names;
  /// Whether tensors of the file that no field reads are allowed (else an io_error names them).
  bool ignore_extra = false;
};

namespace io::detail {

// A .safetensors file's tensors as a struct's fields read them (io/field_reader.hpp): by field
// path or the name options.names gives it, the tensors no field reads refused unless
// options.ignore_extra.
class safetensors_fields final : public field_source {
 public:
  safetensors_fields(const std::string& path, const safetensors_names& options)
      : file_(path), options_(options) {}

  dyn_tensor take(std::string_view field, const nax::shape& want, std::size_t* extents) override {
    const auto renamed = options_.names.find(field);
    const std::string name = renamed == options_.names.end() ? std::string(field) : renamed->second;
    const safetensors_file::entry* e = file_.find(name);
    if (!e)
      nax::detail::throw_io_error("nax::load_safetensors: '", file_.path(), "' has no tensor '",
                                  name, "'", name == field ? "" : " (field '",
                                  name == field ? "" : field, name == field ? "" : "')",
                                  ", which the struct has");
    dyn_tensor t = file_.read(*e);
    fitting_extents(t, want, file_.path() + ":" + name, "load_safetensors", extents);
    read_.push_back(name);
    return t;
  }

  void check_rest() override {
    if (options_.ignore_extra) return;
    std::string extra;
    for (const auto& e : file_.entries())
      if (std::find(read_.begin(), read_.end(), e.name) == read_.end())
        extra += (extra.empty() ? "'" : ", '") + e.name + "'";
    if (!extra.empty())
      nax::detail::throw_io_error("nax::load_safetensors: '", file_.path(),
                                  "' has tensors the struct has not: ", extra,
                                  " (safetensors_names::ignore_extra allows them)");
  }

 private:
  safetensors_file file_;
  const safetensors_names& options_;
  std::vector<std::string> read_;
};

}  // namespace io::detail

/// Reads every tensor of params from the .safetensors file `path`, by field path (or the name
/// `options.names` gives it). A tensor the file lacks, one of another dtype or extents, or (unless
/// options.ignore_extra) one the struct has not, is an io_error naming it; then params is left as
/// it was.
template <field_struct P>
void load_safetensors(const std::string& path, P& params, const safetensors_names& options = {}) {
  io::detail::safetensors_fields file(path, options);
  io::detail::read_fields(params, file);
}

/// Writes every tensor of params to the .safetensors file `path`, named by its field path.
template <field_struct P>
void save_safetensors(const std::string& path, const P& params,
                      const std::map<std::string, std::string>& metadata = {}) {
  std::vector<io::named_tensor> all;
  for_each_field(params, [&](std::string_view name, const auto& t) {
    all.push_back({std::string(name), io::to_dyn(t)});
  });
  io::save_safetensors(path, all, metadata);
}

}  // namespace nax::NAX_ISA
