// Fuzz target: the file readers (nax/io). The input is a file's bytes, read both as a .npy file
// (decode_npy, what load_npy reads) and as a .npz archive (zip::read, then decode_npy of each
// entry, what load_npz reads). A bad file must be a nax::io_error, never a crash, a read past the
// input, an allocation larger than the input, or a wrong tensor:
//  - a decoded tensor's bytes are the last bytes of its input, and encoding it and decoding
//    that gives it back (same dtype, extents and bytes);
//  - reading it as a typed tensor (what load_npy<T, Axes...> does) gives its bytes, or an
//    io_error when the type, rank or an extent does not fit;
//  - an archive's entries are views into the input that pass their CRC, and writing them
//    (zip::write) and reading that gives them back.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nax/core/axis.hpp>
#include <nax/io/io_error.hpp>
#include <nax/io/npy.hpp>
#include <nax/io/npz.hpp>
#include <nax/io/zip.hpp>
#include <nax/runtime/dyn_tensor.hpp>

#include "bytes.hpp"

namespace {

using fuzz::fail;

bool same(const nax::dyn_tensor& a, const nax::dyn_tensor& b) {
  return a.shape() == b.shape() && a.bytes() == b.bytes() &&
         (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

using any_a = nax::axis<"a">;
using any_b = nax::axis<"b">;
using three = nax::axis<"three", 3>;
using upto4 = nax::axis<"upto4", nax::upto(4)>;

// t read as nax::tensor<T, A...>: its bytes, or io_error if T, the rank or an extent differs.
template <class T, class... A>
void check_typed(const nax::dyn_tensor& t) {
  bool fits = t.dtype() == nax::dtype_of<T> && t.rank() == sizeof...(A);
  if (fits) {
    std::size_t i = 0;
    [[maybe_unused]] auto check = [&]<class Axis>(std::type_identity<Axis>) {
      const std::size_t e = t.shape()[i++].extent();
      if (Axis::is_static && e != Axis::static_extent) fits = false;
      if (Axis::is_bounded && e > Axis::bound) fits = false;
    };
    (check(std::type_identity<A>{}), ...);
  }
  try {
    const nax::tensor<T, A...> typed = nax::io::detail::as_typed<T, A...>(t, "fuzz.npy", "fuzz");
    if (!fits) fail("as_typed accepted ", t.to_string());
    if (t.bytes() && std::memcmp(typed.data(), t.data(), t.bytes()) != 0)
      fail("as_typed changed the elements of ", t.to_string());
  } catch (const nax::io_error&) {
    if (fits) fail("as_typed refused ", t.to_string());
  }
}

// decode_npy of `bytes`, and every check on what it gives.
void check_npy(std::span<const std::byte> bytes) {
  nax::dyn_tensor t;
  try {
    t = nax::io::decode_npy(bytes, "fuzz.npy");
  } catch (const nax::io_error&) {
    return;
  }
  if (t.bytes() > bytes.size()) fail("decode_npy made ", t.bytes(), " bytes of ", bytes.size());
  for (const nax::dim& d : t.shape().dims())
    if (d.is_dynamic() || d.has_name()) fail("decode_npy made ", t.shape().to_string());
  // The elements are the bytes right after the header (the format: magic, version, the
  // header's length in 2 bytes for version 1, else 4, the header).
  const std::size_t len_bytes = std::to_integer<unsigned>(bytes[6]) == 1 ? 2 : 4;
  std::size_t header_len = 0;
  for (std::size_t i = len_bytes; i-- > 0;)
    header_len = header_len << 8 | std::to_integer<std::size_t>(bytes[8 + i]);
  const std::size_t data_at = 8 + len_bytes + header_len;
  if (data_at > bytes.size() || t.bytes() > bytes.size() - data_at)
    fail("decode_npy read past the file");
  if (t.dtype() != nax::dtype::boolean && t.bytes() &&
      std::memcmp(t.data(), bytes.data() + data_at, t.bytes()) != 0)
    fail("decode_npy's elements are not the file's");
  if (t.dtype() == nax::dtype::boolean)
    for (std::size_t i = 0; i < t.size(); ++i)
      if (static_cast<const unsigned char*>(t.data())[i] > 1) fail("a bool that is not 0 or 1");
  const std::vector<std::byte> again = nax::io::encode_npy(t);
  nax::dyn_tensor back;
  try {
    back = nax::io::decode_npy(again, "again.npy");
  } catch (const nax::io_error& e) {
    fail("encode_npy of ", t.to_string(), " does not decode: ", e.what());
  }
  if (!same(t, back)) fail("encode_npy then decode_npy changed ", t.to_string());
  check_typed<float>(t);
  check_typed<float, any_a>(t);
  check_typed<double, three>(t);
  check_typed<std::int32_t, any_a, upto4>(t);
  check_typed<std::int64_t, three, any_b>(t);
  check_typed<bool, upto4>(t);
  check_typed<std::uint8_t, any_a, any_b, three>(t);
}

void check_npz(std::span<const std::byte> bytes) {
  std::vector<nax::io::zip::entry> entries;
  try {
    entries = nax::io::zip::read(bytes, "fuzz.npz");
  } catch (const nax::io_error&) {
    return;
  }
  std::vector<std::pair<std::string, std::vector<std::byte>>> copies;
  for (const nax::io::zip::entry& e : entries) {
    if (!e.data.empty() && (e.data.data() < bytes.data() ||
                            e.data.data() + e.data.size() > bytes.data() + bytes.size()))
      fail("an entry's data is not in the archive");
    copies.emplace_back(e.name, std::vector<std::byte>(e.data.begin(), e.data.end()));
    check_npy(e.data);
  }
  std::vector<std::byte> again;
  try {
    again = nax::io::zip::write(copies, "again.npz");
  } catch (const nax::io_error&) {
    return;  // more entries or bytes than nax writes
  }
  std::vector<nax::io::zip::entry> back;
  try {
    back = nax::io::zip::read(again, "again.npz");
  } catch (const nax::io_error& e) {
    fail("zip::write's archive does not read: ", e.what());
  }
  if (back.size() != entries.size()) fail("zip round trip: ", back.size(), " entries");
  for (std::size_t i = 0; i < back.size(); ++i)
    if (back[i].name != entries[i].name || back[i].data.size() != entries[i].data.size() ||
        (!back[i].data.empty() &&
         std::memcmp(back[i].data.data(), entries[i].data.data(), back[i].data.size()) != 0))
      fail("zip round trip changed entry ", i);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check_npy(bytes);
  check_npz(bytes);
  return 0;
}
