#pragma once
// The ZIP archive as NumPy's .npz files use it: entries stored (not compressed), each checked by
// its CRC-32. Reading follows the central directory, ZIP64 fields included (np.savez writes
// them); a compressed entry (np.savez_compressed) is an error naming it, and so are entries that
// overlap. Writing stores entries below 4 GiB. Every malformed archive is an io_error naming the
// file and what is wrong.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/io/io_error.hpp>

namespace nax::NAX_ISA::io::zip {

/// The CRC-32 (ISO-HDLC, as ZIP has it) of `data`.
NAX_RUNTIME_INLINE std::uint32_t crc32(std::span<const std::byte> data);

/// An entry of an archive read in memory: its name and its bytes (a view into the archive).
struct entry {
  std::string name;
  std::span<const std::byte> data;
};

/// The entries of the archive `bytes` (read from `path`, for messages), in the central
/// directory's order.
NAX_RUNTIME_INLINE std::vector<entry> read(std::span<const std::byte> bytes,
                                           const std::string& path);

/// An archive of the entries (name, bytes), stored, in order. Without ZIP64 records: every
/// count, size and offset must stay below the values (all ones) that announce them.
NAX_RUNTIME_INLINE std::vector<std::byte> write(
    std::span<const std::pair<std::string, std::vector<std::byte>>> entries,
    const std::string& path);

}  // namespace nax::NAX_ISA::io::zip

#if NAX_RUNTIME_DEFINITIONS
namespace nax::NAX_ISA::io::zip {

namespace detail {

inline std::uint64_t read_le(std::span<const std::byte> s, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = v << 8 | std::to_integer<std::uint64_t>(s[at + i]);
  return v;
}

inline void put_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(std::byte(v >> (8 * i) & 0xFF));
}

}  // namespace detail

NAX_RUNTIME_INLINE std::uint32_t crc32(std::span<const std::byte> data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::byte b : data) c = table[(c ^ std::to_integer<std::uint32_t>(b)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

NAX_RUNTIME_INLINE std::vector<entry> read(std::span<const std::byte> bytes,
                                           const std::string& path) {
  using detail::read_le;
  auto bad = [&](const auto&... what) -> void {
    nax::detail::throw_io_error("nax::io: '", path, "' is not a valid .npz (ZIP) file: ", what...);
  };
  auto need = [&](std::uint64_t at, std::uint64_t n, const char* what) {
    if (at > bytes.size() || n > bytes.size() - at) bad(what, " runs past the end of the file");
  };
  // The end of central directory record: the last one in the final 64 KiB + 22 bytes.
  constexpr std::size_t eocd_size = 22;
  if (bytes.size() < eocd_size) bad("too short (", bytes.size(), " bytes) to be an archive");
  std::size_t eocd = bytes.size() - eocd_size;
  const std::size_t lowest =
      bytes.size() > 65535 + eocd_size ? bytes.size() - 65535 - eocd_size : 0;
  while (read_le(bytes, eocd, 4) != 0x06054b50) {
    if (eocd == lowest) bad("no end of central directory record");
    --eocd;
  }
  std::uint64_t count = read_le(bytes, eocd + 10, 2), dir_size = read_le(bytes, eocd + 12, 4),
                dir_at = read_le(bytes, eocd + 16, 4);
  if (count == 0xFFFF || dir_size == 0xFFFFFFFF || dir_at == 0xFFFFFFFF) {  // ZIP64
    if (eocd < 20 || read_le(bytes, eocd - 20, 4) != 0x07064b50) bad("no ZIP64 locator");
    const std::uint64_t z = read_le(bytes, eocd - 20 + 8, 8);
    need(z, 56, "the ZIP64 end of central directory");
    if (read_le(bytes, z, 4) != 0x06064b50) bad("no ZIP64 end of central directory");
    count = read_le(bytes, z + 32, 8);
    dir_size = read_le(bytes, z + 40, 8);
    dir_at = read_le(bytes, z + 48, 8);
  }
  need(dir_at, dir_size, "the central directory");
  std::vector<entry> out;
  std::vector<std::array<std::uint64_t, 3>> records;  // each entry's [local header, data end)
  std::vector<std::uint64_t> crcs;
  std::uint64_t at = dir_at;
  for (std::uint64_t k = 0; k < count; ++k) {
    need(at, 46, "a central directory entry");
    if (read_le(bytes, at, 4) != 0x02014b50)
      bad("entry ", k, " of the central directory is damaged");
    const std::uint64_t flags = read_le(bytes, at + 8, 2), method = read_le(bytes, at + 10, 2),
                        crc = read_le(bytes, at + 16, 4), name_len = read_le(bytes, at + 28, 2),
                        extra_len = read_le(bytes, at + 30, 2),
                        comment_len = read_le(bytes, at + 32, 2);
    std::uint64_t packed = read_le(bytes, at + 20, 4), size = read_le(bytes, at + 24, 4),
                  local = read_le(bytes, at + 42, 4);
    need(at + 46, name_len + extra_len + comment_len, "a central directory entry");
    const auto* name_at = reinterpret_cast<const char*>(bytes.data() + at + 46);
    std::string name(name_at, name_at + name_len);
    // ZIP64: the fields that are all ones are in the extra field 0x0001, in this order.
    const std::uint64_t extra_end = at + 46 + name_len + extra_len;
    for (std::uint64_t e = at + 46 + name_len; e + 4 <= extra_end;) {
      const std::uint64_t id = read_le(bytes, e, 2), len = read_le(bytes, e + 2, 2);
      if (e + 4 + len > extra_end)
        bad("entry '", name, "' has an extra field of ", len, " bytes that runs past its end");
      if (id == 0x0001) {
        std::uint64_t f = e + 4;
        for (std::uint64_t* field : {&size, &packed, &local})
          if (*field == 0xFFFFFFFF) {
            if (f + 8 > e + 4 + len) bad("entry '", name, "' has a short ZIP64 field");
            *field = read_le(bytes, f, 8);
            f += 8;
          }
      }
      e += 4 + len;
    }
    if (flags & 1) bad("entry '", name, "' is encrypted");
    if (method != 0)
      nax::detail::throw_io_error("nax::io: entry '", name, "' of '", path,
                                  "' is compressed (method ", method,
                                  ", as np.savez_compressed writes); nax reads stored entries, "
                                  "as np.savez writes them");
    if (packed != size) bad("entry '", name, "' is stored with ", packed, " bytes for ", size);
    need(local, 30, "a local file header");
    if (read_le(bytes, local, 4) != 0x04034b50) bad("entry '", name, "' has no local header");
    const std::uint64_t data_at =
        local + 30 + read_le(bytes, local + 26, 2) + read_le(bytes, local + 28, 2);
    need(data_at, size, "an entry's data");
    out.push_back({std::move(name), bytes.subspan(data_at, size)});
    records.push_back({local, data_at + size, k});
    crcs.push_back(crc);
    at += 46 + name_len + extra_len + comment_len;
  }
  // Entries share no bytes: directory entries pointing at one record again would each be
  // checked and decoded again, and a file of n bytes could make n^2 / 46 bytes of tensors.
  std::sort(records.begin(), records.end());
  for (std::size_t i = 1; i < records.size(); ++i)
    if (records[i][0] < records[i - 1][1])
      bad("entries '", out[records[i - 1][2]].name, "' and '", out[records[i][2]].name,
          "' overlap");
  for (std::size_t k = 0; k < out.size(); ++k)
    if (crc32(out[k].data) != crcs[k])
      bad("entry '", out[k].name, "' fails its CRC-32 check (the file is damaged)");
  return out;
}

NAX_RUNTIME_INLINE std::vector<std::byte> write(
    std::span<const std::pair<std::string, std::vector<std::byte>>> entries,
    const std::string& path) {
  using detail::put_le;
  auto too_large = [&](const auto&... what) {
    nax::detail::throw_io_error("nax::io: '", path, "': ", what...,
                                "; nax writes archives below 4 GiB, of 65534 entries or fewer");
  };
  if (entries.size() >= 0xFFFF) too_large(entries.size(), " entries");
  std::vector<std::byte> out, dir;
  for (const auto& [name, data] : entries) {
    if (name.size() > 0xFFFF)
      nax::detail::throw_io_error("nax::io: '", path, "': an entry's name has ", name.size(),
                                  " bytes; a ZIP name has at most 65535");
    if (data.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu)
      too_large("entry '", name, "' would pass 4 GiB");
    const std::uint32_t crc = crc32(data);
    const std::size_t local = out.size();
    // A name beyond ASCII is UTF-8 (general purpose flag bit 11), as Python's zipfile reads it.
    bool ascii = true;
    for (char c : name) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    const std::uint64_t flags = ascii ? 0 : 0x0800;
    // Local file header: version 2.0, the flags, stored, no time, the sizes, the name.
    put_le(out, 0x04034b50, 4);
    put_le(out, 20, 2);
    put_le(out, flags, 2);
    put_le(out, 0, 2);
    put_le(out, 0, 4);
    put_le(out, crc, 4);
    put_le(out, data.size(), 4);
    put_le(out, data.size(), 4);
    put_le(out, name.size(), 2);
    put_le(out, 0, 2);
    for (char c : name) out.push_back(std::byte(c));
    out.insert(out.end(), data.begin(), data.end());
    // Its central directory entry.
    put_le(dir, 0x02014b50, 4);
    put_le(dir, 20, 2);
    put_le(dir, 20, 2);
    put_le(dir, flags, 2);
    put_le(dir, 0, 2);
    put_le(dir, 0, 4);
    put_le(dir, crc, 4);
    put_le(dir, data.size(), 4);
    put_le(dir, data.size(), 4);
    put_le(dir, name.size(), 2);
    put_le(dir, 0, 2);
    put_le(dir, 0, 2);
    put_le(dir, 0, 2);
    put_le(dir, 0, 2);
    put_le(dir, 0, 4);
    put_le(dir, local, 4);
    for (char c : name) dir.push_back(std::byte(c));
  }
  const std::size_t dir_at = out.size();
  if (dir_at >= 0xFFFFFFFFu || dir.size() >= 0xFFFFFFFFu - dir_at)
    too_large("its ", dir_at, " bytes of entries and directory would pass 4 GiB");
  out.insert(out.end(), dir.begin(), dir.end());
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, entries.size(), 2);
  put_le(out, entries.size(), 2);
  put_le(out, dir.size(), 4);
  put_le(out, dir_at, 4);
  put_le(out, 0, 2);
  return out;
}

}  // namespace nax::NAX_ISA::io::zip
#endif  // NAX_RUNTIME_DEFINITIONS
