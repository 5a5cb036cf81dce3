#pragma once
// What the fuzz targets share: a reader that turns the fuzzer's bytes into choices (never
// failing: past the end every read gives zero), and `fail`, which reports a finding and aborts
// (libFuzzer saves the input that aborted).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

namespace fuzz {

/// Reports a finding on stderr and aborts.
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  std::fprintf(stderr, "fuzz finding: %s\n", out.str().c_str());
  std::abort();
}

/// The input as a stream of choices.
class bytes {
 public:
  bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const noexcept { return at_ >= size_; }
  std::size_t left() const noexcept { return empty() ? 0 : size_ - at_; }

  std::uint8_t byte() noexcept { return empty() ? 0 : data_[at_++]; }

  /// `n` bytes (up to 8) as a little-endian integer.
  std::uint64_t word(int n) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t(byte()) << (8 * i);
    return v;
  }

  /// An integer in [lo, hi], from as few bytes as the range needs.
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) noexcept {
    if (hi <= lo) return lo;
    const std::uint64_t span = hi - lo;
    int n = 1;
    while (n < 8 && (span >> (8 * n)) != 0) ++n;
    const std::uint64_t v = word(n);
    return span == std::numeric_limits<std::uint64_t>::max() ? v : lo + v % (span + 1);
  }
  std::size_t below(std::size_t n) noexcept { return n == 0 ? 0 : range(0, n - 1); }
  bool flag() noexcept { return byte() & 1; }

  /// A double: one of the values that break arithmetic (zeros, infinities, NaN, the extremes)
  /// or a small number with a few digits.
  double real() noexcept {
    switch (byte() % 16) {
      case 0: return 0.0;
      case 1: return -0.0;
      case 2: return std::numeric_limits<double>::infinity();
      case 3: return -std::numeric_limits<double>::infinity();
      case 4: return std::numeric_limits<double>::quiet_NaN();
      case 5: return std::numeric_limits<double>::max();
      case 6: return std::numeric_limits<double>::denorm_min();
      case 7: return 1e30;
      default: return (static_cast<double>(word(2)) - 32768.0) / 1024.0;
    }
  }

  /// Up to `most` bytes as text.
  std::string text(std::size_t most) {
    const std::size_t n = below(most + 1);
    std::string out;
    for (std::size_t i = 0; i < n && !empty(); ++i) out.push_back(static_cast<char>(byte()));
    return out;
  }

  /// The rest of the input.
  std::string_view rest() noexcept {
    if (empty()) return {};
    const std::string_view r(reinterpret_cast<const char*>(data_ + at_), size_ - at_);
    at_ = size_;
    return r;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace fuzz
