#pragma once
// NumPy's .npy files: one tensor, its dtype and shape in a small header, its elements in C order.
// nax reads versions 1.0 to 3.0 of the format, little-endian f4, f8, i4, i8, u1 and b1 in C order,
// and writes version 1.0 (2.0 for a header of 64 KiB or more). Typed tensors keep their axes'
// names in the program: a file has none, so loading one as nax::tensor<T, Axes...> checks the
// element type, the rank and every static extent, and takes the dynamic ones from the file.
//
//     nax::io::save_npy("w1.npy", w1);                             // a tensor, view or dyn_tensor
//     auto w = nax::io::load_npy<float, in, hid>("w1.npy");        // nax::tensor<float, in, hid>
//     nax::dyn_tensor any = nax::io::load_npy("w1.npy");           // its own dtype and shape
//
// A bad file is an io_error naming it and what is wrong: the magic string, the version, a
// header that does not parse, an element type nax has not, Fortran order, a big-endian file, a
// file shorter than its header says, a type or shape other than asked.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/io/io_error.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>

namespace nax::NAX_ISA::io {
namespace detail {

// NumPy's name of a dtype (its little-endian form).
NAX_RUNTIME_INLINE std::string_view npy_descr(dtype t);

// The file's bytes; io_error naming the path if it cannot be read.
NAX_RUNTIME_INLINE std::vector<std::byte> read_file(const std::string& path, const char* op);

NAX_RUNTIME_INLINE void write_file(const std::string& path, std::span<const std::byte> bytes,
                                   const char* op);

// The value of key `key` in the header's dict (its text up to the next top-level comma or brace).
NAX_RUNTIME_INLINE std::string_view header_value(std::string_view header, std::string_view key);

}  // namespace detail

// The files are little-endian and their elements are copied as they are.
static_assert(std::endian::native == std::endian::little,
              "nax::io reads and writes .npy files on little-endian machines only");

/// A tensor decoded from the bytes of a .npy file (`path` names it in errors, which begin with
/// nax::io::`operation`): its dtype, and a shape of unnamed static dims.
NAX_RUNTIME_INLINE dyn_tensor decode_npy(std::span<const std::byte> bytes, const std::string& path,
                                         const char* operation = "load_npy");

/// The bytes of a .npy file of t (dense, row-major: a dyn_tensor is).
NAX_RUNTIME_INLINE std::vector<std::byte> encode_npy(const dyn_tensor& t);

/// Writes t to `path` as a .npy file.
NAX_RUNTIME_INLINE void save_npy(const std::string& path, const dyn_tensor& t);

/// A typed tensor or view, its elements in its axes' order (a strided view is written dense).
template <class T, class... A>
void save_npy(const std::string& path, const tensor<T, A...>& t) {
  save_npy(path, dyn_tensor::wrap(shape_of<T>(t.extents()), const_cast<T*>(t.data())));
}
template <class T, class... A>
void save_npy(const std::string& path, const tensor_view<T, A...>& v) {
  const tensor<std::remove_const_t<T>, A...> dense = v;
  save_npy(path, dense);
}

/// The tensor in `path`, of its own dtype and shape (unnamed static dims).
NAX_RUNTIME_INLINE dyn_tensor load_npy(const std::string& path);

namespace detail {

// The extents of t (decoded from `path`) as those of a nax::tensor whose shape is `want`
// (shape_of<T, A...>(): its dtype, axes, static extents and bounds), into `extents` (rank
// entries): io_error naming the file if its element type, rank or an extent does not fit.
NAX_RUNTIME_INLINE void fitting_extents(const dyn_tensor& t, const nax::shape& want,
                                        const std::string& path, const char* op,
                                        std::size_t* extents);

// A nax::tensor<T, A...> of `extents` (one per axis, as fitting_extents gives them) holding t's
// elements.
template <class T, class... A>
tensor<T, A...> tensor_of(const dyn_tensor& t, const std::size_t* extents) {
  tensor<T, A...> out = [&] {
    if constexpr (sizeof...(A) == 0)
      return tensor<T>();
    else
      return tensor<T, A...>(typename tensor<T, A...>::extents_type(
          std::span<const std::size_t, sizeof...(A)>(extents, sizeof...(A))));
  }();
  if (t.bytes()) std::memcpy(out.data(), t.data(), t.bytes());
  return out;
}

// t (decoded from `path`) as a nax::tensor<T, A...>: io_error naming the file if its element
// type, rank or an extent does not fit.
template <class T, class... A>
tensor<T, A...> as_typed(const dyn_tensor& t, const std::string& path, const char* op) {
  std::array<std::size_t, sizeof...(A) + 1> extents{};  // (+ 1: a scalar has none)
  fitting_extents(t, shape_of<T, A...>(), path, op, extents.data());
  return tensor_of<T, A...>(t, extents.data());
}

}  // namespace detail

/// The tensor in `path` as a nax::tensor<T, Axes...>: its element type T, its rank and static
/// extents those of the axes, its dynamic extents taken from the file.
template <class T, axis_type... Axes>
tensor<T, Axes...> load_npy(const std::string& path) {
  return detail::as_typed<T, Axes...>(load_npy(path), path, "load_npy");
}

}  // namespace nax::NAX_ISA::io

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::io {
namespace detail {

NAX_RUNTIME_INLINE std::string_view npy_descr(dtype t) {
  switch (t) {
    case dtype::f32: return "<f4";
    case dtype::f64: return "<f8";
    case dtype::i32: return "<i4";
    case dtype::i64: return "<i8";
    case dtype::u8: return "|u1";
    case dtype::boolean: return "|b1";
  }
  return "?";
}

NAX_RUNTIME_INLINE std::vector<std::byte> read_file(const std::string& path, const char* op) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) nax::detail::throw_io_error("nax::io::", op, ": cannot open '", path, "'");
  const std::streamsize n = in.tellg();
  std::vector<std::byte> bytes(static_cast<std::size_t>(n < 0 ? 0 : n));
  in.seekg(0);
  if (n > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), n))
    nax::detail::throw_io_error("nax::io::", op, ": cannot read '", path, "'");
  return bytes;
}

NAX_RUNTIME_INLINE void write_file(const std::string& path, std::span<const std::byte> bytes,
                                   const char* op) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) nax::detail::throw_io_error("nax::io::", op, ": cannot write '", path, "'");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) nax::detail::throw_io_error("nax::io::", op, ": cannot write '", path, "'");
}

NAX_RUNTIME_INLINE std::string_view header_value(std::string_view header, std::string_view key) {
  for (const char quote : {'\'', '"'}) {
    std::string k(1, quote);  // (appends only: see encode_npy)
    k.append(key);
    k.push_back(quote);
    std::size_t at = header.find(k);
    if (at == std::string_view::npos) continue;
    at = header.find(':', at + k.size());
    if (at == std::string_view::npos) return {};
    std::size_t begin = at + 1, end = begin;
    int depth = 0;
    while (begin < header.size() && header[begin] == ' ') ++begin;
    for (end = begin; end < header.size(); ++end) {
      const char c = header[end];
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth == 0 && (c == ',' || c == '}')) break;
    }
    return header.substr(begin, end - begin);
  }
  return {};
}

NAX_RUNTIME_INLINE void fitting_extents(const dyn_tensor& t, const nax::shape& want,
                                        const std::string& path, const char* op,
                                        std::size_t* extents) {
  auto bad = [&](const auto&... what) -> void {
    nax::detail::throw_io_error("nax::io::", op, ": '", path, "' ", what...);
  };
  if (t.dtype() != want.dtype())
    bad("holds ", name(t.dtype()), " elements, not ", name(want.dtype()));
  if (t.shape().rank() != want.rank())
    bad("holds a tensor of rank ", t.shape().rank(), " (", t.shape().to_string(), "), not ",
        want.rank());
  for (std::size_t i = 0; i < want.rank(); ++i) {
    const std::size_t e = t.shape()[i].extent();
    const dim& axis = want[i];
    if (axis.is_static() && e != axis.extent())
      bad("has ", e, " along axis ", i, " ('", axis.name().view(), "' is ", axis.extent(), ")");
    if (axis.has_bound() && e > axis.bound())
      bad("has ", e, " along axis ", i, ", past the bound ", axis.bound(), " of '",
          axis.name().view(), "'");
    extents[i] = e;
  }
}

}  // namespace detail

NAX_RUNTIME_INLINE dyn_tensor decode_npy(std::span<const std::byte> bytes, const std::string& path,
                                         const char* operation) {
  auto bad = [&](const auto&... what) -> void {
    nax::detail::throw_io_error("nax::io::", operation, ": '", path, "' ", what...);
  };
  static constexpr char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    bad("is not a .npy file (no \\x93NUMPY magic string)");
  const auto major = std::to_integer<unsigned>(bytes[6]);
  if (major < 1 || major > 3)
    bad("has .npy format version ", major, ".", std::to_integer<unsigned>(bytes[7]),
        "; nax reads 1.0 to 3.0");
  const std::size_t len_bytes = major == 1 ? 2 : 4, start = 8 + len_bytes;
  if (bytes.size() < start) bad("is truncated in its header");
  std::size_t header_len = 0;
  for (std::size_t i = len_bytes; i-- > 0;)
    header_len = header_len << 8 | std::to_integer<std::size_t>(bytes[8 + i]);
  if (bytes.size() - start < header_len) bad("is truncated in its header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + start), header_len);
  const std::string_view descr = detail::header_value(header, "descr"),
                         fortran = detail::header_value(header, "fortran_order"),
                         shape_text = detail::header_value(header, "shape");
  if (descr.size() < 2 || fortran.empty() || shape_text.empty())
    bad("has a header that does not parse: ", header);
  const std::string_view d = descr.substr(1, descr.size() - 2);
  dtype type = dtype::f32;
  if (d == "<f4")
    type = dtype::f32;
  else if (d == "<f8")
    type = dtype::f64;
  else if (d == "<i4")
    type = dtype::i32;
  else if (d == "<i8")
    type = dtype::i64;
  else if (d == "|u1")
    type = dtype::u8;
  else if (d == "|b1")
    type = dtype::boolean;
  else if (!d.empty() && d[0] == '>')
    bad("is big-endian ('", d, "'); nax reads little-endian files");
  else
    bad("holds elements of type '", d, "'; nax reads <f4, <f8, <i4, <i8, |u1 and |b1");
  if (fortran.starts_with("True")) bad("is in Fortran order; nax reads C order");
  if (!fortran.starts_with("False")) bad("has a header that does not parse: ", header);
  // (n0, n1, ...): the extents.
  if (shape_text.front() != '(' || shape_text.back() != ')')
    bad("has a header that does not parse: ", header);
  std::vector<dim> dims;
  std::size_t count = 1;
  const std::string_view inner = shape_text.substr(1, shape_text.size() - 2);
  for (std::size_t i = 0; i < inner.size();) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i == inner.size()) break;
    std::size_t v = 0, digits = 0;
    for (; i < inner.size() && inner[i] >= '0' && inner[i] <= '9'; ++i, ++digits) {
      if (v > (std::size_t(1) << 48)) bad("has an extent too large: ", shape_text);
      v = v * 10 + std::size_t(inner[i] - '0');
    }
    if (digits == 0) bad("has a shape that does not parse: ", shape_text);
    if (v != 0 && count > (std::size_t(1) << 48) / v) bad("has too many elements: ", shape_text);
    count *= v;
    dims.push_back(dim(v));
  }
  const nax::shape s(type, std::span<const dim>(dims));
  const std::size_t payload = count * size_of(type), have = bytes.size() - start - header_len;
  if (have < payload)
    bad("is truncated: its header says ", count, " elements (", payload, " bytes), it holds ", have,
        " bytes");
  dyn_tensor t(s);
  if (payload) std::memcpy(t.data(), bytes.data() + start + header_len, payload);
  // A bool is 0 or 1; a file may hold any nonzero byte for true (reading another would be UB).
  if (type == dtype::boolean) {
    auto* b = static_cast<unsigned char*>(t.data());
    for (std::size_t i = 0; i < count; ++i) b[i] = b[i] != 0;
  }
  return t;
}

NAX_RUNTIME_INLINE std::vector<std::byte> encode_npy(const dyn_tensor& t) {
  // (Appends only: g++ 12 -O3 warns, falsely, with -Wrestrict on `"literal" + string`.)
  std::string header = "{'descr': '";
  header.append(detail::npy_descr(t.dtype()));
  header.append("', 'fortran_order': False, 'shape': (");
  for (std::size_t i = 0; i < t.shape().rank(); ++i) {
    header.append(std::to_string(t.shape()[i].extent()));
    header.append(t.shape().rank() == 1 ? "," : (i + 1 < t.shape().rank() ? ", " : ""));
  }
  header.append("), }");
  // Padded with spaces and ended by a newline so that the data starts 64-byte aligned.
  const std::size_t len_bytes = header.size() + 1 + 10 < 65536 ? 2 : 4, start = 8 + len_bytes;
  header.append((64 - (start + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out;
  for (char c : std::string_view("\x93NUMPY", 6)) out.push_back(std::byte(c));
  out.push_back(std::byte(len_bytes == 2 ? 1 : 2));
  out.push_back(std::byte(0));
  for (std::size_t i = 0; i < len_bytes; ++i)
    out.push_back(std::byte(header.size() >> (8 * i) & 0xFF));
  for (char c : header) out.push_back(std::byte(c));
  const auto* p = static_cast<const std::byte*>(t.data());
  out.insert(out.end(), p, p + t.bytes());
  return out;
}

NAX_RUNTIME_INLINE void save_npy(const std::string& path, const dyn_tensor& t) {
  detail::write_file(path, encode_npy(t), "save_npy");
}

NAX_RUNTIME_INLINE dyn_tensor load_npy(const std::string& path) {
  return decode_npy(detail::read_file(path, "load_npy"), path);
}

}  // namespace nax::NAX_ISA::io
#endif  // NAX_RUNTIME_DEFINITIONS
