// One step of an online softmax: the running maximum and sum after every score equal a two-pass
// softmax's (in double), the weights it returns rebuild the weighted average, and a vector's
// lanes have the bits of the scalar form.
#include <nax/kernels/online_softmax.hpp>
#include <nax/simd/math.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

namespace {

std::vector<float> scores(std::size_t n, std::size_t seed) {
  std::vector<float> s(n);
  for (std::size_t i = 0; i < n; ++i)
    s[i] = float(int((i * 7919 + seed * 104729) % 61) - 30) / 4.0f;
  return s;
}

const auto exp_of = [](const auto& x) { return nax::simd::exp(x); };

}  // namespace

TEST_CASE("the running maximum and sum are a two-pass softmax's; the weights average values") {
  const std::vector<float> s = scores(37, 1), x = scores(37, 2);
  float most = -std::numeric_limits<float>::infinity(), total = 0, acc = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto w = nax::detail::online_softmax_step(s[i], most, total, exp_of);
    acc = acc * w.scale + w.weight * x[i];
  }
  double m = -1e300, sum = 0, dot = 0;
  for (float v : s) m = std::max(m, double(v));
  for (std::size_t i = 0; i < s.size(); ++i) {
    sum += std::exp(double(s[i]) - m);
    dot += std::exp(double(s[i]) - m) * double(x[i]);
  }
  CHECK(double(most) == m);
  CHECK(double(total) == doctest::Approx(sum).epsilon(1e-6));
  CHECK(double(acc / total) == doctest::Approx(dot / sum).epsilon(1e-5));
}

TEST_CASE("a new maximum rescales; a NaN score makes the sum NaN") {
  float most = -std::numeric_limits<float>::infinity(), total = 0;
  auto w = nax::detail::online_softmax_step(1.0f, most, total, exp_of);
  CHECK(w.weight == 1.0f);  // the first score is the maximum: its weight is exp(0)
  CHECK(total == 1.0f);
  w = nax::detail::online_softmax_step(3.0f, most, total, exp_of);
  CHECK(w.weight == 1.0f);
  CHECK(w.scale == doctest::Approx(std::exp(-2.0)));
  CHECK(most == 3.0f);
  w = nax::detail::online_softmax_step(2.0f, most, total, exp_of);
  CHECK(w.scale == 1.0f);
  CHECK(w.weight == doctest::Approx(std::exp(-1.0)));
  (void)nax::detail::online_softmax_step(std::numeric_limits<float>::quiet_NaN(), most, total,
                                         exp_of);
  CHECK(std::isnan(total));
}

TEST_CASE("each lane of a vector has the bits of the scalar form") {
  using vec = nax::simd::vec<float>;
  constexpr std::size_t w = vec::size;
  const std::size_t n = 29;
  std::vector<float> s(n * w);
  for (std::size_t lane = 0; lane < w; ++lane) {
    const std::vector<float> column = scores(n, lane + 3);
    for (std::size_t i = 0; i < n; ++i) s[i * w + lane] = column[i];
  }
  vec most(-std::numeric_limits<float>::infinity()), total(0.0f);
  for (std::size_t i = 0; i < n; ++i)
    (void)nax::detail::online_softmax_step(vec::load_unaligned(s.data() + i * w), most, total,
                                           exp_of);
  alignas(64) float lanes[w];
  total.store_aligned(lanes);
  for (std::size_t lane = 0; lane < w; ++lane) {
    float m = -std::numeric_limits<float>::infinity(), t = 0;
    for (std::size_t i = 0; i < n; ++i)
      (void)nax::detail::online_softmax_step(s[i * w + lane], m, t, exp_of);
    CHECK(std::memcmp(&lanes[lane], &t, sizeof(float)) == 0);
  }
}
