#pragma once
// A 128-bit hash of bytes, for the native tier's disk cache: the key of a kernel (its source, the
// compiler and the flags) and the check that a cached shared object is the one that was written.
// Not cryptographic: the cache directory is private to its user (disk_cache.hpp); the hash finds
// truncation, corruption and stale files, not an attacker who can write there.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::runtime::native {

class content_hash {
 public:
  content_hash& add(std::string_view bytes) noexcept {
    for (unsigned char c : bytes) {
      a_ = (a_ ^ c) * 0x100000001b3ULL;                               // FNV-1a
      b_ = (b_ + c + 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;  // a second, unrelated lane
      b_ ^= b_ >> 29;
    }
    size_ += bytes.size();
    return *this;
  }
  /// A separator, so that ("ab", "c") and ("a", "bc") differ.
  content_hash& end_field() noexcept { return add(std::string_view("\0\x1f", 2)); }

  /// 32 lowercase hex digits.
  [[nodiscard]] std::string hex() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (std::uint64_t v : {mix(a_ ^ size_), mix(b_ + size_)})
      for (int shift = 60; shift >= 0; shift -= 4) s += digits[(v >> shift) & 15];
    return s;
  }

 private:
  static std::uint64_t mix(std::uint64_t v) noexcept {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ULL;
    return v ^ (v >> 33);
  }
  std::uint64_t a_ = 0xcbf29ce484222325ULL, b_ = 0x6a09e667f3bcc909ULL, size_ = 0;
};

}  // namespace nax::runtime::native
