// Tensors made from a rule on traced values (jit/traced_creation.hpp): the same generic lambdas
// run eagerly and under nax::jit, with the same bits: a causal mask over a renamed axis, random
// tensors (on one and two threads), argmax and argmin, one_hot, iota, eye and the like forms.
#include "jit_helpers.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/threads.hpp"

using namespace jit_test;

namespace {

using kseq = nax::axis<"kseq", nax::upto(64)>;
using classes = nax::axis<"classes", 5>;

using nax_test::threads_guard;

template <class T, class... A>
void check_same_bits(const nax::tensor<T, A...>& got, const nax::tensor<T, A...>& want) {
  REQUIRE(got.extents() == want.extents());
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0);
}

// Causal self-attention over one input: keys are the input renamed, the mask is over the scores'
// [seq, kseq] with the extents they have (kseq bound as seq).
const auto causal_attention = [](auto x) {
  auto k = nax::rename<seq, kseq>(x);
  auto scores = nax::dot<head>(x, k) * 0.25f;                             // [seq, kseq]
  auto masked = nax::where(nax::tril<seq, kseq>(scores), scores, -1e9f);  // query i sees 0..i
  return nax::dot<kseq>(nax::softmax<kseq>(masked), k);                   // [seq, head]
};

const auto noisy = [](auto x) {
  return std::tuple(x + nax::uniform_like(x, 7, -0.5, 0.5), nax::normal_like(x, {7, 1}, 1.0, 2.0),
                    nax::truncated_normal_like(x * 2.f, 7, 0.0, 0.02));
};

const auto positions = [](auto x) {
  return std::tuple(nax::argmax<hidden>(x), nax::argmin<batch>(x * -1.f),
                    nax::iota<batch, float>(x) + nax::sum<hidden>(x),
                    nax::eye<batch, hidden>(x) + x,
                    nax::zeros_like(x) + nax::ones_like(x) * x + nax::full_like(x, 0.5f));
};

const auto encode = [](auto ids) {
  return std::tuple(nax::one_hot<classes>(ids), nax::one_hot<classes, double>(ids + 1, 5));
};

}  // namespace

TEST_CASE("jit: a causal mask over [seq, kseq] from the scores' extents") {
  auto f = nax::jit(causal_attention, nax::input<float, seq, head>("x"));
  std::size_t iotas = 0;
  for (g::op_kind k : step_kinds(f.executable())) iotas += k == g::op_kind::iota;
  CHECK(iotas == 2);  // one per axis of the mask
  for (std::size_t n : {1u, 5u, 9u}) {
    CAPTURE(n);
    nax::tensor<float, seq, head> x{seq(n)};
    fill(x, static_cast<std::uint32_t>(n));
    const nax::tensor<float, seq, head> y = f(x);
    const nax::tensor<float, seq, head> want(eager(causal_attention, x));
    check_close(y, want);
    // Row 0 sees key 0 alone: its output is key 0.
    for (std::size_t h = 0; h < 16; ++h) CHECK(y(0, h) == doctest::Approx(x(0, h)));
  }
  CHECK(f.executable().stats().misses == 3);
}

TEST_CASE("jit: random tensors have the eager bits on one and two threads") {
  threads_guard guard;
  auto f = nax::jit(noisy, nax::input<float, batch, hidden>("x"));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    nax::set_num_threads(threads);
    nax::tensor<float, batch, hidden> x{batch(3000)};  // 72000 elements: split over threads
    fill(x, 3);
    const auto [a, b, c] = f(x);
    nax::set_num_threads(1);
    const auto [ea, eb, ec] = eager(noisy, x);
    check_same_bits(a, nax::tensor<float, batch, hidden>(ea));
    check_same_bits(b, eb);
    check_same_bits(c, ec);
    for (float v : c) REQUIRE(std::abs(v) <= 0.04f);
  }
}

TEST_CASE("jit: argmax, argmin, iota, eye and the like forms equal the eager results") {
  auto f = nax::jit(positions, nax::input<float, batch, hidden>("x"));
  for (std::size_t n : {1u, 7u, 30u}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, static_cast<std::uint32_t>(n) + 11);
    x(0, 3) = x(0, 5) = 9.f;  // a tie: the first
    if (n > 1) x(1, 2) = std::numeric_limits<float>::quiet_NaN();
    const auto [am, an, io, ey, lk] = f(x);
    const auto [eam, ean, eio, eey, elk] = eager(positions, x);
    static_assert(
        std::is_same_v<std::remove_cvref_t<decltype(am)>, nax::tensor<std::int64_t, batch>>);
    static_assert(
        std::is_same_v<std::remove_cvref_t<decltype(an)>, nax::tensor<std::int64_t, hidden>>);
    check_same_bits(am, eam);
    check_same_bits(an, ean);
    CHECK(am(0) == 3);
    if (n > 1) CHECK(am(1) == 2);  // the NaN
    check_close(io, nax::tensor<float, batch>(eio));
    check_close(ey, nax::tensor<float, batch, hidden>(eey));
    check_close(lk, nax::tensor<float, batch, hidden>(elk));
  }
}

TEST_CASE("jit: one_hot of traced indices") {
  auto f = nax::jit(encode, nax::input<std::int64_t, batch>("ids"));
  const auto ids = nax::tensor<std::int64_t, batch>::from({0, 4, -1, 2, 5, 1}, batch(6));
  const auto [a, b] = f(ids);
  const auto [ea, eb] = eager(encode, ids);
  check_same_bits(a, ea);
  check_same_bits(b, eb);
  CHECK(a(1, 4) == 1.f);
  float zero_rows = 0;
  for (std::size_t c = 0; c < 5; ++c) zero_rows += a(2, c) + a(4, c);
  CHECK(zero_rows == 0.f);  // -1 and 5 are out of range
}

TEST_CASE("jit: errors of the traced forms name what is wrong") {
  const auto wrong_extent = [](auto ids) { return nax::one_hot<classes>(ids, 4); };
  CHECK_THROWS_WITH_AS(nax::jit(wrong_extent, nax::input<std::int32_t, batch>("ids")),
                       doctest::Contains("classes"), nax::shape_error);
  const auto bad_range = [](auto x) { return x + nax::uniform_like(x, 1, 1.0, 0.0); };
  CHECK_THROWS_WITH_AS(nax::jit(bad_range, nax::input<float, batch>("x")),
                       "nax::graph::random_uniform: lo (1.000000) exceeds hi (0.000000)",
                       std::invalid_argument);
}
