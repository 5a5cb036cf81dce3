#pragma once
// nax's random numbers: counter-based, so element i of a random tensor is a pure function of the
// key (seed, stream), the distribution and its parameters, and i, its linear index in row-major
// order of the result. Nothing is sequential: every thread count, every tiling, the typed layer
// and the graph's kernel give the same bits (they call the one sample() below).
//
// The stream, in full (docs/tensors.md, "Random tensors"):
//   mix(z)           = splitmix64's finalizer: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
//                      z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31
//   key(seed, s)     = mix(mix(seed ^ 0x243F6A8885A308D3) ^ (s * 0x9E3779B97F4A7C15 + 1))
//   bits(key, i, k)  = mix(mix(key + (i + 1) * 0x9E3779B97F4A7C15) ^ (k * 0xD1B54A32D192ED03)
//                          ^ (key >> 32 | key << 32))         (draw k of element i; wrapping u64)
//   u01(b)           = (b >> 11) * 2^-53         in [0, 1)
//   u01_open(b)      = ((b >> 11) + 1) * 2^-53   in (0, 1]
// Computed in double (fused multiply-adds written out, so no compiler contracts them differently),
// then rounded to T:
//   uniform(lo, hi)  = fma(hi - lo, u01(bits(i, 0)), lo); a value that rounds to hi in T is the
//                      largest T below hi, so the result is in [lo, hi)
//   normal(m, s)     = fma(s, z, m), z = sqrt(-2 log u01_open(bits(i, 0))) * cos(2 pi u01(bits(i,
//   1)))
//                      (Box-Muller, the cosine half)
//   truncated_normal = normal resampled within 2 standard deviations: pair p = 0, 1, ... takes
//                      draws 2p and 2p + 1 and tries r cos(t), then r sin(t); the first with
//                      |z| <= 2 is taken (after 16 pairs, about 1e-43 likely, z = 0).

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA {

/// The key of a random stream: a seed and a stream number. Tensors made with one key and one
/// distribution agree element by element; another stream of the same seed is independent.
struct rng {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  constexpr rng() = default;
  constexpr rng(std::uint64_t s, std::uint64_t st = 0) noexcept : seed(s), stream(st) {}  // NOLINT
  friend constexpr bool operator==(const rng&, const rng&) = default;
};

namespace ops {

/// The distributions of random tensors; `a` and `b` are (lo, hi) or (mean, stddev).
enum class distribution : std::uint8_t { uniform, normal, truncated_normal };

constexpr std::string_view name(distribution d) noexcept {
  switch (d) {
    case distribution::uniform: return "uniform";
    case distribution::normal: return "normal";
    case distribution::truncated_normal: return "truncated_normal";
  }
  return "?";
}

/// std::invalid_argument naming `op` unless (a, b) are parameters of d: lo <= hi, or a
/// non-negative stddev; all finite.
inline void check_random_parameters(std::string_view op, distribution d, double a, double b) {
  auto text = [](double v) {
    std::string s = std::to_string(v);
    return s;
  };
  if (!std::isfinite(a) || !std::isfinite(b))
    throw std::invalid_argument(std::string(op) + ": the parameters must be finite, not " +
                                text(a) + " and " + text(b));
  if (d == distribution::uniform && a > b)
    throw std::invalid_argument(std::string(op) + ": lo (" + text(a) + ") exceeds hi (" + text(b) +
                                ")");
  if (d != distribution::uniform && b < 0)
    throw std::invalid_argument(std::string(op) + ": stddev (" + text(b) + ") is negative");
}

namespace random_detail {

inline constexpr std::uint64_t golden = 0x9E3779B97F4A7C15ull;

constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

inline double u01(std::uint64_t b) noexcept { return static_cast<double>(b >> 11) * 0x1p-53; }
inline double u01_open(std::uint64_t b) noexcept {
  return static_cast<double>((b >> 11) + 1) * 0x1p-53;
}

}  // namespace random_detail

/// The 64-bit key of stream r (see the file comment).
constexpr std::uint64_t random_key(rng r) noexcept {
  using namespace random_detail;
  return mix(mix(r.seed ^ 0x243F6A8885A308D3ull) ^ (r.stream * golden + 1));
}

/// Draw k of element i of the stream with key `key`.
constexpr std::uint64_t random_bits(std::uint64_t key, std::uint64_t i, std::uint64_t k) noexcept {
  using namespace random_detail;
  return mix(mix(key + (i + 1) * golden) ^ (k * 0xD1B54A32D192ED03ull) ^
             ((key >> 32) | (key << 32)));
}

/// Element i of a random tensor of T (float or double): distribution d with parameters a, b.
template <class T>
T random_sample(std::uint64_t key, distribution d, double a, double b, std::uint64_t i) noexcept {
  using namespace random_detail;
  constexpr double two_pi = 2 * std::numbers::pi;
  switch (d) {
    case distribution::uniform: {
      const T v = static_cast<T>(std::fma(b - a, u01(random_bits(key, i, 0)), a));
      return v >= static_cast<T>(b) && a < b
                 ? std::nextafter(static_cast<T>(b), -std::numeric_limits<T>::infinity())
                 : v;
    }
    case distribution::normal: {
      const double r = std::sqrt(-2 * std::log(u01_open(random_bits(key, i, 0))));
      const double z = r * std::cos(two_pi * u01(random_bits(key, i, 1)));
      return static_cast<T>(std::fma(b, z, a));
    }
    case distribution::truncated_normal: {
      double z = 0;
      for (std::uint64_t p = 0; p < 16; ++p) {
        const double r = std::sqrt(-2 * std::log(u01_open(random_bits(key, i, 2 * p))));
        const double t = two_pi * u01(random_bits(key, i, 2 * p + 1));
        const double c = r * std::cos(t);
        if (std::fabs(c) <= 2) {
          z = c;
          break;
        }
        const double s = r * std::sin(t);
        if (std::fabs(s) <= 2) {
          z = s;
          break;
        }
      }
      return static_cast<T>(std::fma(b, z, a));
    }
  }
  return T(0);
}

}  // namespace ops
}  // namespace nax
