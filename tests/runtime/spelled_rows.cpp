// Softmax and layer_norm spelled from primitives, fused into one step (kernels/spelled_rows.hpp),
// give the bits of the same graph unfused: every spelling the passes take, along the last axis
// and another, rows shorter than a vector, of whole and partial vectors, longer than the cache
// and long enough for the reduction to cut them into parts, on values that include zeros of
// both signs, infinities, NaN and the largest floats. An empty axis is refused by both.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "program_kinds.hpp"
#include "support/sanitizers.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

template <class T>
dyn_tensor values(const shape& s, std::mt19937& rng, bool special) {
  dyn_tensor t(s);
  T* p = static_cast<T*>(t.data());
  std::uniform_real_distribution<double> u(-4, 4);
  std::uniform_int_distribution<int> pick(0, 15);
  for (std::size_t i = 0; i < t.size(); ++i) {
    p[i] = static_cast<T>(u(rng));
    if (!special) continue;
    switch (pick(rng)) {
      case 0: p[i] = T(0); break;
      case 1: p[i] = -T(0); break;
      case 2: p[i] = std::numeric_limits<T>::infinity(); break;
      case 3: p[i] = -std::numeric_limits<T>::infinity(); break;
      case 4: p[i] = std::numeric_limits<T>::quiet_NaN(); break;
      case 5: p[i] = std::numeric_limits<T>::max(); break;
      default: break;
    }
  }
  return t;
}

// The same bits, but that any NaN equals any NaN (their payloads and signs are not specified).
template <class T>
bool same_bits(const dyn_tensor& a, const dyn_tensor& b) {
  if (!(a.shape() == b.shape())) return false;
  const T* x = static_cast<const T*>(a.data());
  const T* y = static_cast<const T*>(b.data());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(x[i]) && std::isnan(y[i])) && std::memcmp(x + i, y + i, sizeof(T)) != 0)
      return false;
  return true;
}

template <class T>
void check_same_bits(const g::builder& b, g::value y, const std::vector<dyn_tensor>& in,
                     const std::string& want_kind) {
  const g::value outs[] = {y};
  auto fused = g::compile(b, outs);
  auto plain = g::compile(b, outs, {.fusion = false});
  REQUIRE(program_kinds(fused.program()) == want_kind);
  const std::vector<dyn_tensor> got = fused.run(in), want = plain.run(in);
  CHECK(same_bits<T>(got[0], want[0]));
}

struct row_shape {
  std::size_t outer, n, inner;
};

// Lengths along the axis: shorter than a vector, whole vectors and a tail, past four vectors,
// longer than a cached row, long enough for parts; along another axis, a few of them.
const row_shape last_axis[] = {{3, 1, 1},  {5, 3, 1},    {4, 8, 1},    {3, 37, 1},
                               {2, 40, 1}, {2, 9000, 1}, {1, 70000, 1}};
const row_shape other_axis[] = {{2, 1, 5}, {3, 7, 13}, {2, 40, 33}, {1, 9000, 3}};

template <class T>
void softmax_spellings(std::mt19937& rng) {
  const dtype t = nax::dtype_of<T>;
  for (const bool last : {true, false}) {
    for (const row_shape& z :
         last ? std::span<const row_shape>(last_axis) : std::span<const row_shape>(other_axis)) {
      g::builder b;
      auto x = b.parameter("x", shape::make(t, {dim::named("o", z.outer), dim::named("a", z.n),
                                                dim::named("i", z.inner)}));
      for (const bool subtract_max : {true, false}) {
        for (const bool divide : {true, false}) {
          for (const bool special : {false, true}) {
            const std::size_t n = z.n, inner = z.inner;  // (clang 14: CAPTURE lambdas)
            CAPTURE(nax::name(t));
            CAPTURE(n);
            CAPTURE(inner);
            CAPTURE(subtract_max);
            CAPTURE(divide);
            CAPTURE(special);
            auto e = g::exp(subtract_max ? x - g::reduce_max(x, {"a"}) : x);
            auto y = divide ? e / g::sum(e, {"a"}) : e * (1.0 / g::sum(e, {"a"}));
            check_same_bits<T>(b, y, {values<T>(x.shape(), rng, special)}, "fused_softmax");
          }
        }
      }
    }
  }
}

template <class T>
void layer_norm_spellings(std::mt19937& rng) {
  const dtype t = nax::dtype_of<T>;
  for (const bool last : {true, false}) {
    for (const row_shape& z :
         last ? std::span<const row_shape>(last_axis) : std::span<const row_shape>(other_axis)) {
      g::builder b;
      const dim a = dim::named("a", z.n);
      auto x =
          b.parameter("x", shape::make(t, {dim::named("o", z.outer), a, dim::named("i", z.inner)}));
      auto gamma = b.parameter("gamma", shape::make(t, {a}));
      auto beta = b.parameter("beta", shape::make(t, {a}));
      // Bits of `form`: the square by pow, the division by sqrt, gamma, beta; eps unless 0.
      // Under a sanitizer every third form (0, 3, 6, 9, 12, 15: each choice both ways).
      for (int form = 0; form < 16; form += int(nax_test::sweep(1, 3))) {
        for (const bool special : {false, true}) {
          const bool by_pow = form & 1, by_sqrt = form & 2, with_gamma = form & 4,
                     with_beta = form & 8;
          const std::size_t n = z.n, inner = z.inner;  // (clang 14: CAPTURE lambdas)
          CAPTURE(nax::name(t));
          CAPTURE(n);
          CAPTURE(inner);
          CAPTURE(form);
          CAPTURE(special);
          auto d = x - g::mean(x, {"a"});
          auto var = g::mean(by_pow ? g::pow(d, 2.0) : d * d, {"a"});
          auto ve = form == 0 ? var : var + b.constant(1e-5, t);
          auto y = by_sqrt ? d / g::sqrt(ve) : d * g::rsqrt(ve);
          // (gamma * y would be [a, o, i]: by name, gamma's axis first.)
          if (with_gamma) y = y * gamma;
          if (with_beta) y = y + beta;
          check_same_bits<T>(
              b, y,
              {values<T>(x.shape(), rng, special), values<T>(gamma.shape(), rng, special),
               values<T>(beta.shape(), rng, special)},
              "fused_layer_norm");
        }
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("spelled softmax: the bits of its primitives", T, float, double) {
  std::mt19937 rng(21);
  softmax_spellings<T>(rng);
}

TEST_CASE_TEMPLATE("spelled layer_norm: the bits of its primitives", T, float, double) {
  std::mt19937 rng(22);
  layer_norm_spellings<T>(rng);
}

TEST_CASE("spelled softmax and layer_norm over an empty axis: refused as their primitives are") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"rows", "a"}));
  auto e = g::exp(x - g::reduce_max(x, {"a"}));
  auto soft = e / g::sum(e, {"a"});
  auto d = x - g::mean(x, {"a"});
  auto norm = d * g::rsqrt(g::mean(d * d, {"a"}) + b.constant(1e-5, dtype::f32));
  auto plain_e = g::exp(x);
  auto soft_no_max = plain_e / g::sum(plain_e, {"a"});
  const std::vector<dyn_tensor> in = {
      dyn_tensor(shape::make(dtype::f32, {dim::named("rows", 3), dim::named("a", 0)}))};
  for (const auto& [y, why] :
       {std::pair{soft, "max over an empty axis"}, std::pair{norm, "mean over an empty axis"}}) {
    const g::value outs[] = {y};
    auto fused = g::compile(b, outs);
    auto plain = g::compile(b, outs, {.fusion = false});
    CHECK_THROWS_WITH_AS(fused.run(in), doctest::Contains(why), nax::shape_error);
    CHECK_THROWS_WITH_AS(plain.run(in), doctest::Contains(why), nax::shape_error);
  }
  // Without the max, the sum of no exps is 0 and the result has no elements: no error.
  const g::value outs[] = {soft_no_max};
  auto fused = g::compile(b, outs);
  CHECK(fused.run(in)[0].size() == 0);
}
